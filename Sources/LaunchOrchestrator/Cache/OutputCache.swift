import Foundation
import LaunchJSON

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The cached outputs of one manifest's steps: one file per step with `cache`, under
/// `<data folder>/.orchestrate-cache/<manifest name>/`, so entries never outnumber the steps.
///
/// An entry is a header line (the kind, its output type, the step's key and when it was
/// saved), a newline, then the output as JSON. Whatever is wrong with an entry makes it a
/// miss with a reason, never a failure: the step then simply runs.
///
/// The two folders are the cache's own: a symbolic link, or anything but a folder, in their
/// place is refused, never followed, so a link planted in the data folder cannot redirect a
/// read, a write or a removal.
struct OutputCache: Sendable {
  /// The folder holding the entries.
  let folder: URL
  /// The data folder, which the app chose (it may be a link).
  private let dataDirectory: URL
  /// The name of ``folder`` inside ``folderName``.
  private let manifestFolder: String

  /// The largest entry saved or read: a cached output is a first screen's worth of data, and
  /// serving one must not cost more as the user's data grows.
  static let maximumEntrySize = 4 << 20
  /// The entry layout's version; another version's entries are misses.
  private static let format = 1
  /// The folder, under the data folder, that holds every manifest's entries.
  static let folderName = ".orchestrate-cache"

  /// The cache of the manifest called `manifestName` whose data folder is `dataDirectory`.
  init(dataDirectory: URL, manifestName: String) {
    self.dataDirectory = dataDirectory
    manifestFolder = Self.fileName(manifestName)
    folder = dataDirectory.appendingPathComponent(Self.folderName, isDirectory: true)
      .appendingPathComponent(manifestFolder, isDirectory: true)
  }

  /// What looking up a step's entry found.
  enum Lookup: Sendable {
    /// A usable output, saved `age` ago.
    case hit(any Sendable, age: Duration)
    /// Why there is nothing to serve.
    case miss(String)
  }

  /// The file holding the entry of the step with `id`.
  func entry(for id: String) -> URL {
    folder.appendingPathComponent(Self.entryName(for: id), isDirectory: false)
  }

  /// The name of the entry of the step with `id` in the cache folder.
  static func entryName(for id: String) -> String { fileName(id) + ".json" }

  /// The entry of the step with `id` if it was written by the same kind, for the same output
  /// type and key (`key`), and is younger than `maxAge` at `now`.
  func lookup(step id: String, kind: String, key: CacheKey, maxAge: Duration?, now: Date)
    -> Lookup
  {
    let data: Data
    do {
      guard let folder = try openFolder(creating: false) else { return .miss("no entry yet") }
      // Kept alive through the read: its descriptor closes with it.
      let read = try withExtendedLifetime(folder) {
        try SafeFiles.contentsOfRegularFile(
          named: Self.entryName(for: id), in: folder.descriptor, naming: entry(for: id),
          limit: Self.maximumEntrySize)
      }
      guard let read else { return .miss("no entry yet") }
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
    guard header.outputType == key.coder.typeName else {
      return .miss(
        "the entry holds a \(header.outputType), but '\(kind)' now outputs a \(key.coder.typeName)")
    }
    // By their bytes: Swift's `==` takes `café` composed and decomposed as one, where a file
    // system that keeps names as bytes holds two stores.
    guard header.params.utf8.elementsEqual(key.params.utf8) else {
      return .miss(
        "the params of the step or of its dependencies changed since the entry was written")
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
      return .hit(try key.coder.decode(Data(data[data.index(after: newline)...])), age: age)
    } catch {
      return .miss("the entry does not decode as \(key.coder.typeName) (\(Self.describe(error)))")
    }
  }

  /// Saves `output` as the entry of `step`, replacing the old one atomically: a reader, a
  /// crash or another launch writing at once sees the old entry or the new one, never a mix.
  ///
  /// - Throws: ``StepFailure`` when the entry would be over ``maximumEntrySize``, a cache
  ///   folder is a link or not a folder, or the file cannot be written.
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
    guard data.count <= Self.maximumEntrySize else {
      throw StepFailure(
        "it would be \(data.count) bytes, over the \(Self.maximumEntrySize)-byte limit of an entry; cache a first screen's worth (a page), not the whole library"
      )
    }
    // Written through the open folder: a folder swapped for a link meanwhile is not followed.
    // A `cache clear` may remove the folder between its opening and the write: it is made
    // again, a few times at most, so that clears in a loop cannot hold a launch up.
    for attempt in 1...Self.saveAttempts {
      guard let opened = try openFolder(creating: true) else { continue }
      do {
        try withExtendedLifetime(opened) {
          try SafeFiles.writeAtomically(
            data, named: Self.entryName(for: id), in: opened.descriptor,
            naming: entry(for: id))
        }
        return
      } catch  where attempt < Self.saveAttempts && opened.wasRemoved {
        // `cache clear` removed the folder after it was opened: make it again.
      }
    }
    throw StepFailure(
      "the cache folder '\(folder.path)' was removed each of the \(Self.saveAttempts) times it was made; the entry was not saved"
    )
  }

  /// How many times ``save(_:step:kind:key:now:)`` makes the folder again when a
  /// `cache clear` removes it meanwhile.
  private static let saveAttempts = 5

  /// Removes every entry (whatever took an entry's place too: a link, never what it leads
  /// to) and what an interrupted save left, then the folder if nothing else is in it; returns
  /// how many entries it removed.
  ///
  /// The folder is listed and each name checked and removed through the open folder, so a
  /// folder swapped for a link meanwhile is never followed. A launch may save at the same
  /// moment: a name that is gone by the time it is looked at or removed is skipped, the
  /// temporary file of a save still in flight is left to it (its entry lands after the
  /// clear, as if saved a moment later), and the folder stays when something was added to
  /// it. A folder inside is left (the cache never makes one, and it could hold someone's
  /// files) and named in the error.
  ///
  /// - Throws: ``StepFailure`` when a cache folder is a link or not a folder, cannot be
  ///   listed, an entry cannot be removed, or a folder was left.
  func clear() throws -> Int {
    guard let opened = try openFolder(creating: false) else { return 0 }
    // Kept alive to the end: its descriptors close with it.
    return try withExtendedLifetime(opened) { try clear(opened) }
  }

  private func clear(_ opened: OpenFolder) throws -> Int {
    var removed = 0
    var folders: [String] = []
    for name in try Self.names(in: opened.descriptor, naming: folder) {
      let text = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
      var info = stat()
      guard fstatat(opened.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
        let code = errno
        // Gone since the listing (renamed into place, or removed by another clear): the
        // entry it became is a later save's.
        if code == ENOENT { continue }
        throw StepFailure(
          "cannot look at the cache entry '\(folder.path)/\(text)': \(String(cString: strerror(code)))"
        )
      }
      guard info.st_mode & mode_t(S_IFMT) != mode_t(S_IFDIR) else {
        folders.append(text)
        continue
      }
      if SafeFiles.isTemporaryName(text), info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) {
        // A save in flight holds its temporary file and renames it into place in a moment
        // (its entry lands after the clear); one a killed save left is removed.
        _ = SafeFiles.removeAbandonedTemporaryFile(text, in: opened.descriptor)
        continue
      }
      guard unlinkat(opened.descriptor, name, 0) == 0 else {
        let code = errno
        if code == ENOENT { continue }
        throw StepFailure(
          "cannot remove the cache entry '\(folder.path)/\(text)': \(String(cString: strerror(code)))"
        )
      }
      if name.first != CChar(UInt8(ascii: ".")) { removed += 1 }
    }
    guard folders.isEmpty else {
      throw StepFailure(
        "removed \(removed) cached outputs from '\(folder.path)' but left the folder '"
          + folders.joined(separator: "', '")
          + "' in it: the cache never makes one; remove it yourself if it is not needed")
    }
    // Only if empty: a launch may have saved an entry since the listing, and it stays.
    unlinkat(opened.parent, manifestFolder, AT_REMOVEDIR)
    return removed
  }

  /// The names in the open folder `descriptor` (which `url` names, for messages), without
  /// `.` and `..`, as the bytes they are (with their terminating zero): a name put there by
  /// someone else need not be UTF-8.
  private static func names(in descriptor: Int32, naming url: URL) throws -> [[CChar]] {
    // fdopendir takes over its descriptor, so it gets a copy of ours.
    let copy = dup(descriptor)
    guard copy >= 0, let stream = fdopendir(copy) else {
      let code = errno
      if copy >= 0 { close(copy) }
      throw StepFailure("cannot list '\(url.path)': \(String(cString: strerror(code)))")
    }
    defer { closedir(stream) }
    var names: [[CChar]] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        Array(bytes.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }) + [0]
      }
      if name == [46, 0] || name == [46, 46, 0] { continue }
      names.append(name)
    }
    return names
  }

  /// The open cache folder of the manifest, and the folder holding it; closed with the value.
  private final class OpenFolder {
    let parent: Int32
    let descriptor: Int32

    init(parent: Int32, descriptor: Int32) {
      self.parent = parent
      self.descriptor = descriptor
    }

    /// Whether the folder was removed since it was opened (it has no name left).
    var wasRemoved: Bool {
      var info = stat()
      return fstat(descriptor, &info) == 0 && info.st_nlink == 0
    }

    deinit {
      close(descriptor)
      close(parent)
    }
  }

  /// Opens `.orchestrate-cache/<manifest>/` in the data folder, each level without following
  /// a link, creating a missing level when `creating`; `nil` when one is missing otherwise.
  ///
  /// - Throws: ``StepFailure`` when a level is a link or not a folder, or cannot be opened.
  private func openFolder(creating: Bool) throws -> OpenFolder? {
    let data = open(dataDirectory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard data >= 0 else {
      if errno == ENOENT, !creating { return nil }
      throw StepFailure(
        "cannot open the data folder '\(dataDirectory.path)': \(String(cString: strerror(errno)))")
    }
    defer { close(data) }
    guard
      let cache = try Self.openLevel(
        Self.folderName, in: data, creating: creating, naming: folder.deletingLastPathComponent())
    else { return nil }
    let manifest: Int32?
    do {
      manifest = try Self.openLevel(manifestFolder, in: cache, creating: creating, naming: folder)
    } catch {
      close(cache)
      throw error
    }
    guard let manifest else {
      close(cache)
      return nil
    }
    return OpenFolder(parent: cache, descriptor: manifest)
  }

  /// The folder `name` in the open folder `parent`, opened without following a link.
  private static func openLevel(
    _ name: String, in parent: Int32, creating: Bool, naming url: URL
  ) throws -> Int32? {
    for attempt in 1...2 {
      let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
      if descriptor >= 0 { return descriptor }
      let code = errno
      switch code {
      case ENOENT where creating && attempt == 1:
        // Another launch may create it at the same moment: then it exists, which will do.
        if mkdirat(parent, name, 0o755) != 0, errno != EEXIST {
          throw StepFailure("cannot create '\(url.path)': \(String(cString: strerror(errno)))")
        }
      case ENOENT:
        return nil
      case ELOOP, ENOTDIR:
        throw StepFailure(
          "'\(url.path)' is not a folder (a symbolic link?), and the cache only uses its own folders; remove it if it is not needed"
        )
      default:
        throw StepFailure("cannot open '\(url.path)': \(String(cString: strerror(code)))")
      }
    }
    return nil
  }

  /// What identifies the entry of a step: its params and those of the steps it depends on
  /// (their kinds and ids too), as compact JSON with keys sorted, so that reordering keys in
  /// the manifest keeps the entry, and a step reading another store does not get this one's.
  static func fingerprint(
    of params: JSONValue?, dependencies: [(id: String, plugin: String, params: JSONValue?)] = []
  ) -> String {
    func sorted(_ value: JSONValue) -> JSONValue {
      switch value.kind {
      case .object(let members):
        JSONValue(
          .object(
            members.sorted { $0.key < $1.key }.map {
              JSONMember(key: $0.key, value: sorted($0.value))
            }))
      case .array(let elements): JSONValue(.array(elements.map(sorted)))
      default: value
      }
    }
    let empty = JSONValue(.object([]))
    guard !dependencies.isEmpty else { return JSONWriter.compact(sorted(params ?? empty)) }
    let upstream = dependencies.sorted { $0.id < $1.id }.map { dependency -> JSONValue in
      [
        "id": JSONValue(.string(dependency.id)), "plugin": JSONValue(.string(dependency.plugin)),
        "params": sorted(dependency.params ?? empty),
      ]
    }
    return JSONWriter.compact(
      ["dependsOn": JSONValue(.array(upstream)), "params": sorted(params ?? empty)])
  }

  /// `name` as a file name: letters, digits, `-`, `_` and inner dots kept, every other byte
  /// written `%XX`, so no id can name another folder or a hidden file; long names are cut and
  /// end with a hash of the whole, so two ids never share an entry. (Where the file system
  /// ignores case, `Page` and `page` do share one: the header's kind and key keep either from
  /// being served the other's output, unless both would make the same.)
  static func fileName(_ name: String) -> String {
    guard !name.isEmpty else { return "%" }
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
