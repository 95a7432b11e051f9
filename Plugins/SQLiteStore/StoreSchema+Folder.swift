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
  ///   empty folder, a misnamed file, a number used twice, a gap (every such problem at
  ///   once, in ``sentences(_:)``).
  public init(folder: URL) throws(StepFailure) {
    var numbered: [(number: Int, name: String, summary: String)] = []
    var problems: [String] = []
    for name in try Self.migrationNames(in: folder, problems: &problems) {
      // `NNN_name.sql`, read as bytes: every launch lists the folder.
      let stem = name.utf8.dropLast(4)
      let digits = stem.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
      let rest = stem.dropFirst(digits.count)
      // Leading zeros are padding; more digits than that would overflow are no number.
      let significant = digits.drop { $0 == UInt8(ascii: "0") }
      guard significant.count <= 18, rest.first == UInt8(ascii: "_"), rest.count > 1 else {
        problems.append(
          "the migration file '\(folder.appendingPathComponent(name).path)' is not named NNN_name.sql; rename it to its number, an underscore and a name, such as '004_add_tags.sql'"
        )
        continue
      }
      let number = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
      let summary = String(
        decoding: rest.dropFirst().map { $0 == UInt8(ascii: "_") ? UInt8(ascii: " ") : $0 },
        as: UTF8.self)
      numbered.append((number, name, summary))
    }
    numbered.sort { ($0.number, $0.name) < ($1.number, $1.name) }
    guard !numbered.isEmpty || !problems.isEmpty else {
      throw StepFailure(
        "the migrations folder '\(folder.path)' holds no migration files; add the first one as '001_create.sql'"
      )
    }
    var migrations: [Migration] = []
    // The number the next file should have: after a problem, counted on from the file's own,
    // so that one gap or repeat is said once, not again at every file after it.
    var expected = 1
    for (index, file) in numbered.enumerated() {
      defer { expected = file.number + 1 }
      if let previous = numbered[..<index].last, previous.number == file.number {
        problems.append(
          "'\(previous.name)' and '\(file.name)' in '\(folder.path)' both have number \(file.number); give each migration its own number"
        )
      } else if file.number == 0 {
        problems.append(
          "the migration '\(folder.appendingPathComponent(file.name).path)' has number 0; number the migrations from 1, as '001_create.sql'"
        )
      } else if file.number != expected {
        let after = index == 0 ? "" : " after '\(numbered[index - 1].name)'"
        problems.append(
          "the migrations in '\(folder.path)' skip number \(expected)\(after) (the next is '\(file.name)'); number them from 1 without gaps"
        )
      }
      migrations.append(
        Migration(
          version: file.number, summary: file.summary,
          file: folder.appendingPathComponent(file.name, isDirectory: false)))
    }
    if !problems.isEmpty { throw StepFailure(Self.sentences(problems)) }
    self.init(name: folder.lastPathComponent, migrations: migrations)
  }

  /// The names in `folder` that look like migrations (a digit first, `.sql` last), sorted: one
  /// listing with the system's calls, no file opened.
  /// Problems with a schema's files as one message, for the one error a parameter has: the
  /// first, then each other as a sentence of its own (`..., such as '001_create.sql'. Also,
  /// ...`), without a final period.
  public static func sentences(_ problems: [String]) -> String {
    (problems.prefix(1) + problems.dropFirst().map { "Also, " + $0 }).joined(separator: ". ")
  }

  /// A name that is not UTF-8 is a problem added to `problems`, and left out.
  private static func migrationNames(in folder: URL, problems: inout [String]) throws(StepFailure)
    -> [String]
  {
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
    while true {
      // `readdir` answers `nil` at the end and on an error alike; only an error sets `errno`.
      errno = 0
      guard let entry = readdir(stream) else {
        guard errno == 0 else {
          throw StepFailure(
            "cannot read the migrations folder '\(folder.path)': \(String(cString: strerror(errno)))"
          )
        }
        break
      }
      let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
      guard let first = bytes.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
        bytes.count > 4, bytes.suffix(4).elementsEqual(".sql".utf8)
      else { continue }
      guard let name = String(validating: bytes, as: UTF8.self) else {
        problems.append(
          "the migration file '\(folder.path)/\(String(decoding: bytes, as: UTF8.self))' has a name that is not UTF-8; rename it, such as '004_add_tags.sql'"
        )
        continue
      }
      names.append(name)
    }
    return names.sorted()
  }

  /// The largest `.sql` file read: a migration or a sample holds statements, not the data of a
  /// library, and a larger one is more likely a mistake than a schema.
  public static let maximumSQLFileSize = 64 << 20

  /// The text of a `.sql` file shipped with a manifest, which `noun` names in messages ("the
  /// migration"), read through one descriptor with a link followed to its file: a link to
  /// nothing, a folder, a FIFO (never waited on for a writer), a file over
  /// ``maximumSQLFileSize`` or bytes that are not UTF-8 are named as such.
  public static func sqlText(of url: URL, noun: String) throws(StepFailure) -> String {
    // A link whose file is gone, or a loop: resolved, it still names a link, or nothing.
    func brokenLink() -> StepFailure {
      switch Self.brokenLinkTarget(of: url) {
      case .none:
        return StepFailure(
          "cannot read \(noun) '\(url.path)': \(String(cString: strerror(ENOENT)))")
      case .missing(let target):
        return StepFailure(
          "\(noun) '\(url.path)' is a link to '\(target)', which does not exist; ship the file itself"
        )
      case .loop:
        return StepFailure(
          "\(noun) '\(url.path)' is a link in a loop of links, which leads to no file; ship the file itself"
        )
      }
    }
    let read: Data?
    do {
      read = try SafeFiles.contentsOfRegularFile(
        at: url.resolvingSymlinksInPath(), limit: maximumSQLFileSize)
    } catch {
      switch error.reason {
      case .notRegular("a symbolic link"):
        throw brokenLink()
      case .notRegular("a folder"):
        throw StepFailure("\(noun) '\(url.path)' is a folder, not a file; move it or rename it")
      case .notRegular:
        throw StepFailure("\(noun) '\(url.path)' is not a regular file; ship a .sql file")
      case .tooLarge(let limit):
        throw StepFailure(
          "\(noun) '\(url.path)' is over the \(limit >> 20) MiB limit; split it into smaller files")
      case .unreadable(let why):
        throw StepFailure("cannot read \(noun) '\(url.path)': \(why)")
      }
    }
    guard let data = read else { throw brokenLink() }
    guard let text = String(data: data, encoding: .utf8) else {
      throw StepFailure("\(noun) '\(url.path)' is not UTF-8 text; save it as UTF-8")
    }
    return text
  }

  /// Where a chain of links breaks.
  private enum BrokenLink {
    /// At a target that does not exist: as the first link names it, or the full path of a
    /// later one.
    case missing(String)
    /// Nowhere: the links lead round.
    case loop
  }

  /// Where the chain of links at `url` breaks; `nil` when `url` is no link or the chain ends
  /// at something.
  private static func brokenLinkTarget(of url: URL) -> BrokenLink? {
    var current = url
    // As many links as the system follows before it calls the chain a loop.
    for _ in 0..<40 {
      guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current.path)
      else { return nil }
      let next = URL(fileURLWithPath: target, relativeTo: current.deletingLastPathComponent())
        .standardizedFileURL
      var info = stat()
      guard lstat(next.path, &info) == 0 else {
        return current == url ? .missing(target) : .missing(next.path)
      }
      current = next
    }
    return .loop
  }
}
