import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The cached outputs of one manifest's steps: one file per step with `cache`, under
/// `<data folder>/.orchestrate-cache/<manifest name>/`, so entries never outnumber the steps.
///
/// An entry is a header line (the kind, its output type, the step's params and when it was
/// saved), a newline, then the output as JSON. Whatever is wrong with an entry makes it a
/// miss with a reason, never a failure: the step then simply runs.
struct OutputCache: Sendable {
  /// The folder holding the entries.
  let folder: URL

  /// The largest entry read: a cached output is a first screen's worth of data, and serving
  /// one must not cost more as the user's data grows.
  static let maximumEntrySize = 16 << 20
  /// The entry layout's version; another version's entries are misses.
  private static let format = 1
  /// The folder, under the data folder, that holds every manifest's entries.
  static let folderName = ".orchestrate-cache"

  /// The cache of the manifest called `manifestName` whose data folder is `dataDirectory`.
  init(dataDirectory: URL, manifestName: String) {
    folder = dataDirectory.appendingPathComponent(Self.folderName, isDirectory: true)
      .appendingPathComponent(Self.fileName(manifestName), isDirectory: true)
  }

  /// What looking up a step's entry found.
  enum Lookup {
    /// A usable output, saved `age` ago.
    case hit(any Sendable, age: Duration)
    /// Why there is nothing to serve.
    case miss(String)
  }

  /// The file holding the entry of the step with `id`.
  func entry(for id: String) -> URL {
    folder.appendingPathComponent(Self.fileName(id) + ".json", isDirectory: false)
  }

  /// The entry of the step with `id` if it was written by the same kind, for the same params
  /// and output type (`key`), and is younger than `maxAge` at `now`.
  func lookup(step id: String, kind: String, key: CacheKey, maxAge: Duration?, now: Date)
    -> Lookup
  {
    let coder = key.coder
    let data: Data
    do {
      guard
        let read = try SafeFiles.contentsOfRegularFile(
          at: entry(for: id), limit: Self.maximumEntrySize)
      else { return .miss("no entry yet") }
      data = read
    } catch {
      return .miss("the entry cannot be used: \(error)")
    }
    guard let newline = data.firstIndex(of: UInt8(ascii: "\n")),
      let header = try? JSONDecoder().decode(Header.self, from: data[..<newline])
    else {
      return .miss("the entry is damaged (its header is unreadable)")
    }
    guard header.format == Self.format else {
      return .miss(
        "the entry has another layout (format \(header.format), this build reads \(Self.format))")
    }
    guard header.kind == kind else {
      return .miss("the entry was written by '\(header.kind)', not '\(kind)'")
    }
    guard header.outputType == coder.typeName else {
      return .miss(
        "the entry holds a \(header.outputType), but '\(kind)' now outputs a \(coder.typeName)")
    }
    guard header.params == key.params else {
      return .miss("the step's params changed since the entry was written")
    }
    let seconds = now.timeIntervalSince1970 - header.savedAt
    // A minute of slack: clocks get adjusted; more than that, the entry's age is unknown.
    guard seconds > -60, let age = DurationText.seconds(max(seconds, 0)) else {
      return .miss("the entry is dated in the future (was the clock changed?)")
    }
    if let maxAge, age > maxAge {
      return .miss(
        "the entry is \(DurationText.format(age.roundedForPeople)) old, older than 'maxAge' \(DurationText.format(maxAge))"
      )
    }
    do {
      return .hit(try coder.decode(Data(data[data.index(after: newline)...])), age: age)
    } catch {
      return .miss("the entry does not decode as \(coder.typeName) (\(Self.describe(error)))")
    }
  }

  /// Saves `output` as the entry of `step`, replacing the old one atomically: a reader, a
  /// crash or another launch writing at once sees the old entry or the new one, never a mix.
  func save(_ output: any Sendable, step id: String, kind: String, key: CacheKey, now: Date)
    throws
  {
    let header = Header(
      format: Self.format, kind: kind, outputType: key.coder.typeName, params: key.params,
      savedAt: now.timeIntervalSince1970)
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    var data = try encoder.encode(header)
    data.append(UInt8(ascii: "\n"))
    data.append(try key.coder.encode(output))
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try SafeFiles.writeAtomically(data, to: entry(for: id), followingLinks: false)
  }

  /// Removes every entry (and what an interrupted save left), then the folder when it is
  /// empty; returns how many entries there were.
  ///
  /// Only regular files directly in the folder are removed, each checked right before its
  /// removal through the open folder; a folder that is a symbolic link is refused.
  func clear() throws -> Int {
    let directory = open(folder.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard directory >= 0 else {
      let code = errno
      if code == ENOENT { return 0 }
      throw StepFailure(
        "cannot clear the cache '\(folder.path)': "
          + (code == ELOOP || code == ENOTDIR
            ? "it is not a folder (a symbolic link?); remove it yourself if it is not yours"
            : String(cString: strerror(code))))
    }
    defer { close(directory) }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    var removed = 0
    for name in names {
      var info = stat()
      guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
        info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
      else { continue }
      guard unlinkat(directory, name, 0) == 0 else {
        throw StepFailure(
          "cannot remove the cache entry '\(folder.path)/\(name)': \(String(cString: strerror(errno)))"
        )
      }
      if !name.hasPrefix(".") { removed += 1 }
    }
    rmdir(folder.path)
    return removed
  }

  /// The step's params as the entry records them: compact JSON with keys sorted, so that
  /// reordering keys in the manifest keeps the entry.
  static func fingerprint(of params: JSONValue?) -> String {
    func sorted(_ value: JSONValue) -> JSONValue {
      switch value.kind {
      case .object(let members):
        JSONValue(
          .object(
            members.sorted { $0.key < $1.key }.map {
              JSONMember(key: $0.key, value: sorted($0.value))
            }
          ))
      case .array(let elements): JSONValue(.array(elements.map(sorted)))
      default: value
      }
    }
    return JSONWriter.compact(sorted(params ?? JSONValue(.object([]))))
  }

  /// `name` as a file name: letters, digits, `-`, `_` and inner dots kept, every other byte
  /// written `%XX`, so no id can name another folder or a hidden file; long names are cut and
  /// end with a hash of the whole, so two ids never share an entry.
  static func fileName(_ name: String) -> String {
    var result = ""
    for (position, byte) in name.utf8.enumerated() {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
        result.append(Character(Unicode.Scalar(byte)))
      case UInt8(ascii: ".") where position > 0:
        result.append(".")
      default:
        result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    guard result.utf8.count > 200 else { return result }
    // FNV-1a: stable across processes, unlike Hasher.
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(result.prefix(180)) + "-" + String(hash, radix: 16)
  }

  private static func describe(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    func at(_ context: DecodingError.Context) -> String {
      let path = context.codingPath.map(\.stringValue).joined(separator: ".")
      return path.isEmpty ? "" : " at '\(path)'"
    }
    switch error {
    case .dataCorrupted(let context):
      return context.debugDescription + at(context)
    case .keyNotFound(let key, let context):
      return "no '\(key.stringValue)'\(at(context))"
    case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
      return "expected \(type)\(at(context))"
    @unknown default:
      return "\(error)"
    }
  }

  private struct Header: Codable {
    var format: Int
    var kind: String
    var outputType: String
    var params: String
    var savedAt: Double
  }
}

extension String {
  fileprivate func leftPadded(to length: Int) -> String {
    String(repeating: "0", count: max(0, length - count)) + self
  }
}

extension Duration {
  /// Rounded to whole seconds past a minute, so ages read as `8d`-like text, not nanoseconds.
  var roundedForPeople: Duration {
    self < .seconds(60) ? self : .seconds((self / .seconds(1)).rounded())
  }
}
