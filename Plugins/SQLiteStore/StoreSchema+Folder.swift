import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

extension StoreSchema {
  /// An app's schema from a folder of migration files named `NNN_name.sql`, numbered from 1
  /// without gaps; the folder's name is the schema's name.
  ///
  /// Reads the folder's names, not the files: a migration's file is read when a store needs it
  /// (``Migration/checkedSQL()``), so a launch whose store is up to date opens none of them.
  /// Files that do not start with a digit (a `sample.sql`, a README) are not migrations and
  /// are left alone.
  /// - Throws: ``StepFailure`` naming the folder or file and what to change: a missing or
  ///   empty folder, a misnamed file, a number used twice, a gap.
  public init(folder: URL) throws(StepFailure) {
    var numbered: [(number: Int, name: String, summary: String)] = []
    for name in try Self.migrationNames(in: folder) {
      // `NNN_name.sql`, read as bytes: every launch lists the folder.
      let stem = name.utf8.dropLast(4)
      let digits = stem.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
      let rest = stem.dropFirst(digits.count)
      guard digits.count <= 18, rest.first == UInt8(ascii: "_"), rest.count > 1 else {
        throw StepFailure(
          "the migration file '\(folder.appendingPathComponent(name).path)' is not named NNN_name.sql; rename it to its number, an underscore and a name, such as '004_add_tags.sql'"
        )
      }
      let number = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
      let summary = String(
        decoding: rest.dropFirst().map { $0 == UInt8(ascii: "_") ? UInt8(ascii: " ") : $0 },
        as: UTF8.self)
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
      migrations.append(
        Migration(
          version: expected, summary: file.summary,
          file: folder.appendingPathComponent(file.name, isDirectory: false)))
    }
    self.init(name: folder.lastPathComponent, migrations: migrations)
  }

  /// The names in `folder` that look like migrations (a digit first, `.sql` last), sorted: one
  /// listing with the system's calls, no file opened.
  private static func migrationNames(in folder: URL) throws(StepFailure) -> [String] {
    guard let stream = opendir(folder.path) else {
      switch errno {
      case ENOENT:
        throw StepFailure(
          "the migrations folder '\(folder.path)' does not exist; give the folder of NNN_name.sql files shipped with the manifest"
        )
      case ENOTDIR:
        throw StepFailure(
          "'\(folder.path)' is a file, not a folder; 'migrations' names a folder of NNN_name.sql files"
        )
      case let code:
        throw StepFailure(
          "cannot read the migrations folder '\(folder.path)': \(String(cString: strerror(code)))")
      }
    }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard let first = name.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
        name.utf8.count > 4, name.utf8.suffix(4).elementsEqual(".sql".utf8)
      else { continue }
      names.append(name)
    }
    return names.sorted()
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
