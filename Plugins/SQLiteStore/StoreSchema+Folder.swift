import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

extension StoreSchema {
  /// Reads an app's schema from a folder of migration files named `NNN_name.sql`, numbered
  /// from 1 without gaps; the folder's name is the schema's name.
  ///
  /// Files that do not start with a digit (a `sample.sql`, a README) are not migrations and
  /// are left alone.
  /// - Throws: ``StepFailure`` naming the folder or file and what to change: a missing or
  ///   empty folder, a misnamed file, a number used twice, a gap.
  public init(folder: URL) throws(StepFailure) {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) else {
      throw StepFailure(
        "the migrations folder '\(folder.path)' does not exist; give the folder of NNN_name.sql files shipped with the manifest"
      )
    }
    guard isFolder.boolValue else {
      throw StepFailure(
        "'\(folder.path)' is a file, not a folder; 'migrations' names a folder of NNN_name.sql files"
      )
    }
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    } catch {
      throw StepFailure("cannot read the migrations folder '\(folder.path)': \(error)")
    }
    var numbered: [(number: Int, name: String, summary: String)] = []
    for name in names.sorted()
    where name.hasSuffix(".sql") && name.first.map(\.isASCII) == true
      && name.first?.isNumber == true
    {
      let stem = name.dropLast(4)
      let digits = stem.prefix { $0.isASCII && $0.isNumber }
      let rest = stem.dropFirst(digits.count)
      guard let number = Int(digits), rest.first == "_", rest.count > 1 else {
        throw StepFailure(
          "the migration file '\(folder.appendingPathComponent(name).path)' is not named NNN_name.sql; rename it to its number, an underscore and a name, such as '004_add_tags.sql'"
        )
      }
      let summary = rest.dropFirst().replacingOccurrences(of: "_", with: " ")
      numbered.append((number, name, summary))
    }
    numbered.sort { ($0.number, $0.name) < ($1.number, $1.name) }
    guard !numbered.isEmpty else {
      throw StepFailure(
        "the migrations folder '\(folder.path)' holds no migration files; add the first one as '001_create.sql'"
      )
    }
    var migrations: [Migration] = []
    for (index, file) in numbered.enumerated() {
      let expected = index + 1
      if let previous = numbered[..<index].last, previous.number == file.number {
        throw StepFailure(
          "'\(previous.name)' and '\(file.name)' in '\(folder.path)' both have number \(file.number); give each migration its own number"
        )
      }
      guard file.number > 0 else {
        throw StepFailure(
          "the migration '\(folder.appendingPathComponent(file.name).path)' has number 0; number the migrations from 1, as '001_create.sql'"
        )
      }
      guard file.number == expected else {
        let after = index == 0 ? "" : " after '\(numbered[index - 1].name)'"
        throw StepFailure(
          "the migrations in '\(folder.path)' skip number \(expected)\(after) (the next is '\(file.name)'); number them from 1 without gaps"
        )
      }
      let url = folder.appendingPathComponent(file.name)
      let sql = try Self.sqlText(of: url, noun: "the migration")
      if let escape = SQLiteConnection.transactionEscape(in: sql) {
        throw StepFailure(
          "the migration '\(url.path):\(escape.line ?? 1)' is refused: \(escape.message); store.init applies each migration inside one transaction and commits it itself, so that a failure leaves the store as it was; remove the statement"
        )
      }
      migrations.append(Migration(version: expected, summary: file.summary, sql: sql, file: url))
    }
    self.init(name: folder.lastPathComponent, migrations: migrations)
  }

  /// The text of a `.sql` file shipped with a manifest, which `noun` names in messages ("the
  /// migration"). A link to nothing, a folder, a FIFO (which would hold the launch waiting for a
  /// writer) or bytes that are not UTF-8 are named as such.
  public static func sqlText(of url: URL, noun: String) throws(StepFailure) -> String {
    var info = stat()
    guard stat(url.path, &info) == 0 else {
      let code = errno
      if code == ENOENT,
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)
      {
        throw StepFailure(
          "\(noun) '\(url.path)' is a link to '\(target)', which does not exist; ship the file itself"
        )
      }
      throw StepFailure("cannot read \(noun) '\(url.path)': \(String(cString: strerror(code)))")
    }
    switch info.st_mode & mode_t(S_IFMT) {
    case mode_t(S_IFREG): break
    case mode_t(S_IFDIR):
      throw StepFailure("\(noun) '\(url.path)' is a folder, not a file; move it or rename it")
    default:
      throw StepFailure("\(noun) '\(url.path)' is not a regular file; ship a .sql file")
    }
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw StepFailure("cannot read \(noun) '\(url.path)': \(error.localizedDescription)")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw StepFailure("\(noun) '\(url.path)' is not UTF-8 text; save it as UTF-8")
    }
    return text
  }
}
