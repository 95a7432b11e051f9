import Foundation
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What lies at a store's path, told from the first bytes before SQLite opens it.
package enum StoreFile: Equatable {
  /// Nothing.
  case missing
  /// A folder.
  case folder
  /// A SQLite database, or the start of one another launch is writing.
  case sqlite
  /// A file of no bytes, which SQLite takes as an empty database: a store only where the
  /// step may create one.
  case empty
  /// Something else; `start` shows its first bytes.
  case foreign(start: String)
  /// A device, FIFO or socket; `what` names it.
  case special(String)

  /// Every SQLite 3 database starts with these 16 bytes.
  private static let magic = Array("SQLite format 3\0".utf8)

  /// Looks at the path; reads at most 16 bytes of the file, through a descriptor opened
  /// without waiting: a FIFO at the path would otherwise hold the launch until its timeout.
  static func at(_ url: URL) throws -> StoreFile {
    let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT { return .missing }
      throw StepFailure("cannot read the store '\(url.path)': \(String(cString: strerror(code)))")
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw StepFailure("cannot read the store '\(url.path)': \(String(cString: strerror(errno)))")
    }
    switch info.st_mode & mode_t(S_IFMT) {
    case mode_t(S_IFDIR): return .folder
    case mode_t(S_IFREG): break
    case let type: return .special(describe(type))
    }
    let bytes: [UInt8]
    do {
      bytes = Array(try handle.read(upToCount: magic.count) ?? Data())
    } catch {
      throw StepFailure("cannot read the store '\(url.path)': \(error.localizedDescription)")
    }
    if bytes.isEmpty { return .empty }
    // A shorter prefix of the header is a store another launch is creating right now.
    if bytes.elementsEqual(magic.prefix(bytes.count)) { return .sqlite }
    return .foreign(start: describe(bytes))
  }

  /// A file type in words: `a FIFO (named pipe)`.
  static func describe(_ type: mode_t) -> String {
    switch type {
    case mode_t(S_IFDIR): "a folder"
    case mode_t(S_IFCHR): "a character device"
    case mode_t(S_IFBLK): "a block device"
    case mode_t(S_IFIFO): "a FIFO (named pipe)"
    case mode_t(S_IFSOCK): "a socket"
    default: "a special file"
    }
  }

  /// `'{ "version": 1'` for text, `the bytes 07 26 45 64 ...` for anything else.
  private static func describe(_ bytes: [UInt8]) -> String {
    if let text = String(bytes: bytes, encoding: .utf8),
      text.unicodeScalars.allSatisfy({
        $0.value >= 0x20 && $0.value != 0x7F || "\n\r\t".unicodeScalars.contains($0)
      })
    {
      let flat = text.map { $0.isWhitespace ? " " : String($0) }.joined()
      return "'\(flat)'"
    }
    return "the bytes " + bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
  }

  /// The files SQLite keeps beside a store in WAL mode.
  static let sidecarSuffixes = ["-wal", "-shm"]

  /// What moves with a store, by suffix: the store itself, its WAL and shared memory, and the
  /// damage marker. The store goes first and its WAL right after, both named in the recovery
  /// marker before either moves.
  private static let movedSuffixes = [""] + sidecarSuffixes + [".damaged"]

  /// Called with the name of each point of a store's opening where a test stops it, in a
  /// process of its own (`orchestrate-test-helper`): after each step of a recovery (`marker`,
  /// `store`, `-wal`, `-shm`, `.damaged`, `done`), to show that the next launch finishes it;
  /// `recovering`, when a launch found the store damaged and is about to wait for the folder's
  /// exclusive lock, to let another launch recover it first; `migrated`, when the last pending
  /// migration ran and its transaction is not yet committed, to cancel the attempt there.
  /// Only for tests; set before any launch runs.
  nonisolated(unsafe) package static var testHook: ((String) -> Void)?

  /// Moves a damaged store aside with its `-wal` and `-shm` files, under one timestamped name
  /// (`library.sqlite.corrupt-<stamp>`, `...-wal`, `...-shm`) so SQLite can open the copy
  /// with its WAL, and returns where the store went.
  ///
  /// Nothing is checkpointed or deleted: the files are renamed as they are. `shm`, the bytes
  /// of the `-shm` file from before SQLite opened the store, are written back, since readers
  /// update it as they come and go. The damage marker, when there is one, goes along.
  ///
  /// The move is one recoverable operation: the recovery marker (``StoreHandle/recoveryMarker(for:)``)
  /// names the destination and is flushed to disk before the first file moves, and removed
  /// only after the last; a launch that finds it finishes the move
  /// (``finishInterruptedRecovery(_:)``) before it opens anything, so a WAL is never left
  /// behind to be applied to a new store, nor a store left half moved. Call it holding the
  /// folder's lock exclusively.
  static func moveAside(_ url: URL, shm: Data?) throws -> URL {
    let folder = url.deletingLastPathComponent()
    let destination = folder.appendingPathComponent(freeName(for: url))
    let marker = StoreHandle.recoveryMarker(for: url)
    do {
      try SafeFiles.writeAtomically(
        Data((destination.lastPathComponent + "\n").utf8), to: marker, followingLinks: false)
    } catch {
      throw StepFailure(
        "cannot move the damaged store '\(url.path)' aside: cannot note the move first (\(error)); it was left as it was"
      )
    }
    testHook?("marker")
    try move(url, to: destination)
    if let shm, FileManager.default.fileExists(atPath: destination.path + "-shm") {
      try? shm.write(to: URL(fileURLWithPath: destination.path + "-shm"))
    }
    try finish(marker)
    return destination
  }

  /// Finishes a recovery that a killed launch left halfway, as its recovery marker says;
  /// returns where the store went, or `nil` when there is no marker. Call it holding the
  /// folder's lock exclusively.
  static func finishInterruptedRecovery(_ url: URL) throws -> URL? {
    let marker = StoreHandle.recoveryMarker(for: url)
    let text: String
    do {
      guard
        // The marker is this plugin's own file, never a link: one is refused, not followed.
        let data = try SafeFiles.contentsOfRegularFile(at: marker, limit: 4096)
      else { return nil }
      text = String(decoding: data, as: UTF8.self)
    } catch {
      throw StepFailure(
        "the store '\(url.path)' was being moved aside when a launch stopped, and its note '\(marker.path)' cannot be read (\(error)); move the store and its -wal file aside yourself, then remove the note"
      )
    }
    let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !name.isEmpty, !name.contains("/"), name.hasPrefix(url.lastPathComponent + ".") else {
      throw StepFailure(
        "the note '\(marker.path)' of an interrupted recovery does not name where the store went ('\(name)'); move the store and its -wal file aside yourself, then remove the note"
      )
    }
    let destination = url.deletingLastPathComponent().appendingPathComponent(name)
    try move(url, to: destination)
    try finish(marker)
    return destination
  }

  /// Renames each file that is still at `url` (with its suffixes) to `destination`; one that
  /// has moved already is passed over. Never replaces a file at the destination.
  private static func move(_ url: URL, to destination: URL) throws {
    for suffix in movedSuffixes {
      let source = url.path + suffix
      let target = destination.path + suffix
      var info = stat()
      guard lstat(source, &info) == 0 else { continue }
      guard lstat(target, &info) != 0 else {
        throw StepFailure(
          "cannot move '\(source)' aside: '\(target)' is already there, and neither is replaced; compare the two, keep what you need, and move or remove '\(source)'"
        )
      }
      guard rename(source, target) == 0 else {
        let reason = String(cString: strerror(errno))
        throw StepFailure(
          "cannot move the damaged store '\(url.path)' aside with its WAL: cannot rename '\(source)' (\(reason)); what moved is in '\(destination.path)', and the next launch finishes the move"
        )
      }
      testHook?(suffix.isEmpty ? "store" : suffix)
    }
  }

  /// Flushes the folder (the renames) to disk, then removes the recovery marker and flushes
  /// again: the marker goes only once every file it names is in place.
  private static func finish(_ marker: URL) throws {
    let folder = marker.deletingLastPathComponent().path
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { if descriptor >= 0 { close(descriptor) } }
    if descriptor >= 0 { _ = fsync(descriptor) }
    guard unlink(marker.path) == 0 || errno == ENOENT else {
      throw StepFailure(
        "moved the damaged store aside, but cannot remove the note '\(marker.path)' (\(String(cString: strerror(errno)))); remove it, then launch again"
      )
    }
    if descriptor >= 0 { _ = fsync(descriptor) }
    testHook?("done")
  }

  /// `<store>.corrupt-<UTC stamp>`, with `-2`, `-3`, ... when that name or one of its
  /// companions' is taken.
  private static func freeName(for url: URL, now: Date = Date()) -> String {
    let stamp = now.formatted(
      Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateTimeSeparator(.standard)
        .time(includingFractionalSeconds: false)
    ).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
    let base = "\(url.lastPathComponent).corrupt-\(stamp)"
    var name = base
    var counter = 2
    let folder = url.deletingLastPathComponent().path
    while movedSuffixes.contains(where: { suffix in
      var info = stat()
      return lstat(folder + "/" + name + suffix, &info) == 0
    }) {
      name = "\(base)-\(counter)"
      counter += 1
    }
    return name
  }
}
