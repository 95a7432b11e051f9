#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// An open folder: every lookup, stat and removal goes through its descriptor, so a folder
/// renamed or swapped for a link after it was opened cannot redirect them.
final class DirectoryHandle {
  /// A file's identity: it changes when a file is replaced, whatever its name.
  struct Identity: Hashable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
      device = UInt64(truncatingIfNeeded: info.st_dev)
      inode = UInt64(truncatingIfNeeded: info.st_ino)
    }
  }

  /// What `lstat` says about an entry, in the terms cleanup needs.
  struct Status {
    var identity: Identity
    var kind: Kind
    var size: Int64
    var owner: UInt32
    /// Seconds since 1970.
    var modified: Double

    enum Kind { case directory, regular, symbolicLink, other }

    init(_ info: stat) {
      identity = Identity(info)
      switch info.st_mode & mode_t(S_IFMT) {
      case mode_t(S_IFDIR): kind = .directory
      case mode_t(S_IFREG): kind = .regular
      case mode_t(S_IFLNK): kind = .symbolicLink
      default: kind = .other
      }
      size = Int64(info.st_size)
      owner = UInt32(info.st_uid)
      #if canImport(Darwin)
        modified = Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
      #else
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
      #endif
    }
  }

  /// Why opening an entry failed.
  enum OpenFailure: Error {
    /// Nothing has that name (any more).
    case missing
    /// It is a symbolic link, which is never followed.
    case symbolicLink
    /// It is not a folder.
    case notADirectory
    /// Anything else, with its errno.
    case system(Int32)
  }

  let descriptor: Int32

  private init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit {
    close(descriptor)
  }

  /// The root folder, `/`.
  static func root() throws(OpenFailure) -> DirectoryHandle {
    let descriptor = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .system(errno) }
    return DirectoryHandle(descriptor: descriptor)
  }

  /// The folder `name` inside this one, never through a symbolic link.
  func openDirectory(_ name: [CChar]) throws(OpenFailure) -> DirectoryHandle {
    let descriptor = openat(self.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      switch code {
      case ENOENT: throw .missing
      case ELOOP: throw .symbolicLink
      case ENOTDIR:
        // Some systems say ENOTDIR for a link opened with O_NOFOLLOW | O_DIRECTORY.
        if status(of: name)?.kind == .symbolicLink { throw .symbolicLink }
        throw .notADirectory
      default: throw .system(code)
      }
    }
    return DirectoryHandle(descriptor: descriptor)
  }

  /// This folder's own status.
  func ownStatus() -> Status? {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    return Status(info)
  }

  /// The status of the entry `name`, not following a link; `nil` when it is gone.
  func status(of name: [CChar]) -> Status? {
    var info = stat()
    guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
    return Status(info)
  }

  /// Where the link `name` points, as written in the link.
  func linkText(_ name: [CChar]) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlinkat(descriptor, name, &buffer, buffer.count - 1)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether the entry `name` is a SQLite database: a regular file that starts with SQLite's
  /// header. Opened without following a link or waiting on a FIFO.
  func isSQLiteDatabase(_ name: [CChar]) -> Bool {
    let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard file >= 0 else { return false }
    defer { close(file) }
    var info = stat()
    guard fstat(file, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
      return false
    }
    var header = [UInt8](repeating: 0, count: Self.sqliteHeader.count)
    return read(file, &header, header.count) == header.count && header == Self.sqliteHeader
  }

  /// The first 16 bytes of every SQLite database file.
  private static let sqliteHeader = Array("SQLite format 3".utf8) + [0]

  /// The first SQLite database directly in this folder, by name.
  ///
  /// Only files a whole number of 512-byte blocks long are opened: a database is always a
  /// whole number of pages, and pages are at least 512 bytes, so a folder of images costs a
  /// `stat` per file, not an `open`.
  func firstSQLiteDatabase() -> String? {
    guard let names = try? entryNames() else { return nil }
    for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      guard let status = status(of: name), status.kind == .regular, status.size > 0,
        status.size % 512 == 0, isSQLiteDatabase(name)
      else { continue }
      return String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return nil
  }

  /// Removes the entry `name` (a file or a link, never a folder); the errno on failure.
  func remove(_ name: [CChar]) -> Int32? {
    unlinkat(descriptor, name, 0) == 0 ? nil : errno
  }

  /// The names of the entries in this folder (without `.` and `..`), as raw bytes: a name
  /// need not be UTF-8.
  func entryNames() throws(OpenFailure) -> [[CChar]] {
    // fdopendir takes over its descriptor, so it gets a copy of ours.
    let copy = dup(descriptor)
    guard copy >= 0 else { throw .system(errno) }
    guard let stream = fdopendir(copy) else {
      let code = errno
      close(copy)
      throw .system(code)
    }
    defer { closedir(stream) }
    // The copy shares the read position with this descriptor: an earlier listing left it at
    // the end.
    rewinddir(stream)
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
}
