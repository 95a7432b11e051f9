import Foundation
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What lies at a store's path, told from the first bytes before SQLite opens it.
enum StoreFile: Equatable {
  /// Nothing.
  case missing
  /// A folder.
  case folder
  /// A SQLite database, or an empty file (which SQLite takes as an empty database).
  case sqlite
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
    // A shorter prefix of the header is a store another launch is creating right now.
    if bytes.elementsEqual(magic.prefix(bytes.count)) { return .sqlite }
    return .foreign(start: describe(bytes))
  }

  private static func describe(_ type: mode_t) -> String {
    switch type {
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

  /// Moves a damaged store aside with its `-wal` and `-shm` files, under one timestamped name
  /// (`library.sqlite.corrupt-<stamp>`, `...-wal`, `...-shm`) so SQLite can open the copy
  /// with its WAL, and returns where the store went.
  ///
  /// Nothing is checkpointed or deleted: the files are renamed as they are. `shm`, the bytes
  /// of the `-shm` file from before SQLite opened the store, are written back, since readers
  /// update it as they come and go. The damage marker, when there is one, goes along.
  static func moveAside(_ url: URL, shm: Data?) throws -> URL {
    let destination = try SafeFiles.moveAside(url, label: "corrupt")
    var moved: [(from: URL, to: URL)] = [(url, destination)]
    let companions =
      sidecarSuffixes.map { (URL(fileURLWithPath: url.path + $0), $0) } + [
        (StoreHandle.damageMarker(for: url), ".damaged")
      ]
    do {
      for (sidecar, suffix) in companions
      where FileManager.default.fileExists(atPath: sidecar.path) {
        let target = URL(fileURLWithPath: destination.path + suffix)
        try FileManager.default.moveItem(at: sidecar, to: target)
        moved.append((sidecar, target))
        if suffix == "-shm", let shm { try shm.write(to: target) }
      }
    } catch {
      // Leaving the WAL behind would let SQLite apply it to the new store: put all back.
      for (from, to) in moved.reversed() { try? FileManager.default.moveItem(at: to, to: from) }
      throw StepFailure(
        "cannot move the damaged store '\(url.path)' aside with its WAL: \(error.localizedDescription); it was left as it was"
      )
    }
    return destination
  }
}
