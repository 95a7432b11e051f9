import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// File operations that never lose user data, for plugins that touch user files.
public enum SafeFiles {
  /// Renames `url` to `<name>.<label>-<UTC timestamp>` beside it (adding `-2`, `-3`, ... when
  /// that name is taken) and returns the new location. Nothing is ever deleted.
  public static func moveAside(_ url: URL, label: String, now: Date = Date()) throws -> URL {
    let stamp = now.formatted(
      Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateTimeSeparator(.standard)
        .time(
          includingFractionalSeconds: false)
    ).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
    let base = "\(url.lastPathComponent).\(label)-\(stamp)"
    var destination = url.deletingLastPathComponent().appendingPathComponent(base)
    var counter = 2
    while FileManager.default.fileExists(atPath: destination.path) {
      destination = url.deletingLastPathComponent().appendingPathComponent("\(base)-\(counter)")
      counter += 1
    }
    do {
      try FileManager.default.moveItem(at: url, to: destination)
    } catch {
      throw explain(error, writing: url, doing: "move '\(url.path)' aside")
    }
    return destination
  }

  /// Replaces the file at `url` with `data` so that a reader, a crash or a full disk leaves
  /// the old file or the new one, never a partial one.
  ///
  /// A symbolic link is followed to its final target, which is written (the link stays a
  /// link); a target that exists and is not a regular file (a folder, device, FIFO or socket)
  /// is refused. The new file keeps the old one's permissions and, where the process may,
  /// its owner. It is written to a temporary file beside the target, flushed to disk, renamed
  /// over it, and the folder is flushed too. Temporary files that a killed process left for
  /// the same target are removed first.
  ///
  /// With `followingLinks` false, a symbolic link at `url` is refused like a folder: for files
  /// only the package writes, where a link can only be someone's attempt to redirect the write.
  public static func writeAtomically(_ data: Data, to url: URL, followingLinks: Bool = true)
    throws
  {
    let target = followingLinks ? try checkReplaceable(url) : try checkRegularOrMissing(url)
    let folderPath = target.deletingLastPathComponent().path
    let folder = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard folder >= 0 else { throw failure(errno, writing: target, doing: "open its folder") }
    defer { close(folder) }
    try writeAtomically(data, named: target.lastPathComponent, in: folder, naming: target)
  }

  /// Replaces the file `name` in the open folder `folder` (which `target` names, for
  /// messages) as ``writeAtomically(_:to:followingLinks:)`` does, every step relative to the
  /// folder: a folder swapped for a link after it was opened cannot redirect the write. Only a
  /// regular file or nothing may stand at `name`; a link there is refused, not followed.
  package static func writeAtomically(
    _ data: Data, named name: String, in folder: Int32, naming target: URL
  ) throws {
    removeStaleTemporaryFiles(
      for: name, in: target.deletingLastPathComponent().path, descriptor: folder)
    var existing = stat()
    let replacesFile = fstatat(folder, name, &existing, AT_SYMLINK_NOFOLLOW) == 0
    // Only a name that is not there is "nothing yet"; any other failure is said as it is.
    guard replacesFile || errno == ENOENT else {
      throw failure(errno, writing: target, doing: "look at the file it would replace")
    }
    if replacesFile, existing.st_mode & mode_t(S_IFMT) != mode_t(S_IFREG) {
      throw StepFailure(
        "cannot write '\(target.path)': it is \(describeType(existing.st_mode & mode_t(S_IFMT))),"
          + " not a regular file, and replacing it could destroy what it is or leads to; remove"
          + " it if it is not yours")
    }
    let temporary = temporaryName(for: name, pid: getpid(), tag: randomTag())
    // Private while it is written; it gets the old file's mode just before it takes its place.
    let descriptor = openat(
      folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
      replacesFile ? 0o600 : 0o666)
    guard descriptor >= 0 else {
      throw failure(
        errno, writing: target,
        doing: "create a temporary file in '\(target.deletingLastPathComponent().path)'")
    }
    var written = false
    defer {
      if !written { unlinkat(folder, temporary, 0) }
    }
    do {
      try writeAll(data, to: descriptor, target: target)
      if replacesFile {
        // Ownership first: changing the owner can clear set-id bits that fchmod then restores.
        if existing.st_uid != geteuid() || existing.st_gid != getegid() {
          _ = fchown(descriptor, existing.st_uid, existing.st_gid)
        }
        guard fchmod(descriptor, existing.st_mode & 0o7777) == 0 else {
          throw failure(
            errno, writing: target, doing: "give the new file the old one's permissions")
        }
      }
      guard fsync(descriptor) == 0 else {
        throw failure(errno, writing: target, doing: "flush the new file to disk")
      }
    } catch {
      close(descriptor)
      throw error
    }
    guard close(descriptor) == 0 else {
      throw failure(errno, writing: target, doing: "finish writing the new file")
    }
    guard renameat(folder, temporary, folder, name) == 0 else {
      throw failure(errno, writing: target, doing: "replace it with the new file")
    }
    written = true
    _ = fsync(folder)
  }

  /// Checks that `url` may be replaced by ``writeAtomically(_:to:)``, without writing, and
  /// returns the file that would be written: the final target of a symbolic link, or `url`
  /// itself when it is a regular file or nothing exists there yet.
  ///
  /// - Throws: ``StepFailure`` naming the path when it is a folder, a device, a FIFO or a
  ///   socket, a link to one of those, a link to nothing, or a loop of links.
  public static func checkReplaceable(_ url: URL) throws -> URL {
    var path = url.path
    var chain: [String] = []
    while true {
      var info = stat()
      guard lstat(path, &info) == 0 else {
        let code = errno
        guard code == ENOENT || code == ENOTDIR else {
          throw StepFailure(
            "cannot write '\(url.path)': \(describeErrno(code)); check the path and its folders")
        }
        guard chain.isEmpty else {
          throw StepFailure(
            "cannot write '\(url.path)': it is a symbolic link to '\(path)', which does not exist;"
              + " create that file first or name a regular file")
        }
        return URL(fileURLWithPath: path)
      }
      let type = info.st_mode & mode_t(S_IFMT)
      if type == mode_t(S_IFREG) { return URL(fileURLWithPath: path) }
      guard type == mode_t(S_IFLNK) else {
        let what = chain.isEmpty ? "it is" : "it is a symbolic link to '\(path)', which is"
        throw StepFailure(
          "cannot write '\(url.path)': \(what) \(describeType(type)), not a regular file,"
            + " and replacing it could destroy it; name a regular file instead")
      }
      guard chain.count < maximumLinks else {
        throw StepFailure(
          "cannot write '\(url.path)': it is a chain of more than \(maximumLinks) symbolic links"
            + " (a loop?); name a regular file instead")
      }
      chain.append(path)
      path = try linkTarget(of: path, naming: url)
    }
  }

  /// `url` itself when it is a regular file or nothing is there; anything else, a symbolic
  /// link included, is refused.
  private static func checkRegularOrMissing(_ url: URL) throws -> URL {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return url }
    let type = info.st_mode & mode_t(S_IFMT)
    guard type != mode_t(S_IFREG) else { return url }
    throw StepFailure(
      "cannot write '\(url.path)': it is \(describeType(type)), not a regular file, and replacing it could"
        + " destroy what it leads to; remove it if it is not yours")
  }

  /// Why ``contentsOfRegularFile(at:limit:)`` could not read a file.
  public struct ReadProblem: Error, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable {
      /// It is a symbolic link, folder, FIFO, device or socket (named).
      case notRegular(String)
      /// It is (or grew) larger than the limit.
      case tooLarge(limit: Int)
      /// The system would not read it, for this reason.
      case unreadable(String)
    }

    /// The file.
    public let url: URL
    /// What went wrong.
    public let reason: Reason

    /// `'<path>' is a symbolic link, not a regular file`, and so on.
    public var description: String {
      switch reason {
      case .notRegular(let what): "'\(url.path)' is \(what), not a regular file"
      case .tooLarge(let limit): "'\(url.path)' is over the \(limit)-byte limit"
      case .unreadable(let why): "cannot read '\(url.path)': \(why)"
      }
    }
  }

  /// The bytes of the regular file at `url`, or `nil` when nothing is there, read through one
  /// descriptor opened without following a symbolic link or waiting on a FIFO: a file swapped
  /// after a separate check could hang the reader or lead elsewhere.
  ///
  /// - Throws: ``ReadProblem`` saying why: not a regular file, larger than `limit` bytes, or
  ///   not readable.
  public static func contentsOfRegularFile(at url: URL, limit: Int) throws(ReadProblem) -> Data? {
    try contentsOfRegularFile(
      opening: Opened(open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)),
      naming: url, limit: limit)
  }

  /// The bytes of the regular file `url` names, a symbolic link followed to it (a manifest or
  /// report may be one), read as ``contentsOfRegularFile(at:limit:)`` reads them; `nil` when
  /// nothing is there.
  package static func contentsOfRegularFile(followingLinksAt url: URL, limit: Int)
    throws(ReadProblem) -> Data?
  {
    try followingLinks(at: url.path) { opened, name throws(ReadProblem) in
      try contentsOfRegularFile(opening: opened, naming: name(), limit: limit)
    }
  }

  /// The bytes of the regular file at `path`, a symbolic link followed to it, checked as
  /// ``contentsOfRegularFile(followingLinksAt:limit:)`` checks them and read into an array:
  /// what a parser reads, without a `Data` to copy them out of (for a large manifest, a second
  /// copy of it at the peak of its load). A URL is made only to name the file in a problem.
  package static func bytesOfRegularFile(followingLinksAt path: String, limit: Int)
    throws(ReadProblem) -> [UInt8]?
  {
    try followingLinks(at: path) { opened, name throws(ReadProblem) in
      guard let info = try checkRegularFile(opened, naming: name(), limit: limit) else {
        return nil
      }
      defer { close(opened.descriptor) }
      return try readAll(
        opened.descriptor, sizeHint: Int(info.st_size), limit: limit, naming: name())
    }
  }

  /// A descriptor just opened, with the error that failed the opening (`errno`, read before
  /// anything else can change it) when it is -1.
  private struct Opened {
    let descriptor: Int32
    let error: Int32

    init(_ descriptor: Int32) {
      self.descriptor = descriptor
      error = descriptor < 0 ? errno : 0
    }
  }

  /// Opens the file at `path` with a symbolic link followed to it, and hands the opening to
  /// `body`, which owns the descriptor (closes it, or leaves that to a `FileHandle`); `nil`
  /// when nothing is there.
  private static func followingLinks<Contents>(
    at path: String,
    body: (_ opened: Opened, _ name: () -> URL) throws(ReadProblem) -> Contents?
  ) throws(ReadProblem) -> Contents? {
    guard let real = realpath(path, nil) else {
      let code = errno
      if code == ENOENT { return nil }
      throw ReadProblem(url: URL(fileURLWithPath: path), reason: .unreadable(describeErrno(code)))
    }
    defer { free(real) }
    // The resolved file is named only in a problem with it: a URL is not needed to open it.
    return try body(Opened(open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))) {
      URL(fileURLWithPath: String(cString: real))
    }
  }

  /// The bytes of the regular file `name` in the open folder `folder` (which `url` names, for
  /// messages), as ``contentsOfRegularFile(at:limit:)`` reads them.
  package static func contentsOfRegularFile(
    named name: String, in folder: Int32, naming url: URL, limit: Int
  ) throws(ReadProblem) -> Data? {
    try contentsOfRegularFile(
      opening: Opened(openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)),
      naming: url, limit: limit)
  }

  private static func contentsOfRegularFile(
    opening opened: Opened, naming name: @autoclosure () -> URL, limit: Int
  ) throws(ReadProblem) -> Data? {
    guard try checkRegularFile(opened, naming: name(), limit: limit) != nil else { return nil }
    let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
    let data: Data
    do {
      // Up to one byte past the limit: a file growing meanwhile is refused, not read whole.
      data = try handle.read(upToCount: limit + 1) ?? Data()
    } catch {
      throw ReadProblem(url: name(), reason: .unreadable(error.localizedDescription))
    }
    guard data.count <= limit else {
      throw ReadProblem(url: name(), reason: .tooLarge(limit: limit))
    }
    return data
  }

  /// Everything `descriptor` holds from where it stands to its end, into one array sized for
  /// `sizeHint` bytes and one past them, so that one buffer takes a file that kept its size; a
  /// file that grew meanwhile is read on, in larger buffers, up to one byte past `limit`, and
  /// then refused. `url` names the file in a problem.
  package static func readAll(
    _ descriptor: Int32, sizeHint: Int, limit: Int, naming url: @autoclosure () -> URL
  ) throws(ReadProblem) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = max(sizeHint, 0) + 1
    while bytes.count <= limit {
      var failure: Int32 = 0
      var atEnd = false
      let part = [UInt8](unsafeUninitializedCapacity: min(chunk, limit + 1 - bytes.count)) {
        buffer, count in
        while count < buffer.count {
          let got = read(descriptor, buffer.baseAddress! + count, buffer.count - count)
          if got > 0 {
            count += got
          } else if got == 0 {
            atEnd = true
            return
          } else if errno != EINTR {
            failure = errno
            return
          }
        }
      }
      guard failure == 0 else {
        throw ReadProblem(url: url(), reason: .unreadable(describeErrno(failure)))
      }
      if bytes.isEmpty { bytes = part } else { bytes += part }
      if atEnd { return bytes }
      chunk = max(chunk, 64 * 1024)
    }
    throw ReadProblem(url: url(), reason: .tooLarge(limit: limit))
  }

  /// The status of the opened file when it is a regular file of at most `limit` bytes; `nil`
  /// when nothing was there to open. Closes the descriptor when it throws.
  private static func checkRegularFile(
    _ opened: Opened, naming name: @autoclosure () -> URL, limit: Int
  ) throws(ReadProblem) -> stat? {
    let descriptor = opened.descriptor
    guard descriptor >= 0 else {
      let code = opened.error
      if code == ENOENT { return nil }
      if code == ELOOP { throw ReadProblem(url: name(), reason: .notRegular("a symbolic link")) }
      throw ReadProblem(url: name(), reason: .unreadable(describeErrno(code)))
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      let code = errno
      close(descriptor)
      throw ReadProblem(url: name(), reason: .unreadable(describeErrno(code)))
    }
    let type = info.st_mode & mode_t(S_IFMT)
    guard type == mode_t(S_IFREG) else {
      close(descriptor)
      throw ReadProblem(url: name(), reason: .notRegular(describeType(type)))
    }
    guard info.st_size <= limit else {
      close(descriptor)
      throw ReadProblem(url: name(), reason: .tooLarge(limit: limit))
    }
    return info
  }

  /// Foundation's errors name a permission or an errno, not the folder; a folder that cannot
  /// be written or a full disk is what people can fix, so it is named. Other errors pass
  /// through.
  private static func explain(_ error: any Error, writing url: URL, doing action: String)
    -> any Error
  {
    guard let problem = writeProblem(in: url.deletingLastPathComponent()) else { return error }
    return StepFailure(
      "cannot \(action): \(problem.reason), so the file was left as it was; \(problem.advice)")
  }

  /// Why files cannot be written in `folder`, when the reason is one people can act on: the
  /// folder is not writable, or the disk holding it is full (under 1 MiB free).
  public static func writeProblem(in folder: URL) -> (reason: String, advice: String)? {
    let path = folder.path
    if !FileManager.default.isWritableFile(atPath: path) {
      return ("its folder '\(path)' is not writable", "make the folder writable")
    }
    let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path)
    if let free = (attributes?[.systemFreeSize] as? NSNumber)?.int64Value, free < 1 << 20 {
      return (
        "the disk holding its folder '\(path)' is full (\(free / 1024) KiB free)",
        "free some space on it"
      )
    }
    return nil
  }

  // MARK: - Temporary files

  /// The marker between a target's name and the writer's process id in a temporary name.
  private static let temporaryMarker = ".writing-"

  /// How old a temporary file must be to be removed even though its process id is in use:
  /// ids are reused, and no write of ours takes an hour.
  private static let staleAge: TimeInterval = 3600

  /// The most links followed before a path counts as a loop, as the kernel does.
  private static let maximumLinks = 32

  /// The name of the temporary file that process `pid` writes before renaming it to `name`:
  /// `.<name>.writing-<pid>-<tag>`, hidden, beside the target, and recognizable so that the
  /// next write can remove what a killed process left.
  package static func temporaryName(for name: String, pid: Int32, tag: String) -> String {
    "." + shortened(name) + temporaryMarker + "\(pid)-\(tag)"
  }

  /// Names are at most 255 bytes; the temporary name adds about 30 to the target's.
  private static func shortened(_ name: String) -> String {
    var result = Substring(name)
    while result.utf8.count > 200 { result = result.dropLast() }
    return String(result)
  }

  private static func randomTag() -> String {
    String(UInt64.random(in: 0...UInt64.max), radix: 16)
  }

  /// Removes the temporary files for `name` in `folder` whose writer has died, or that are
  /// older than ``staleAge``. Only regular files are removed; a failure to remove one is
  /// not the caller's problem, so it is ignored.
  private static func removeStaleTemporaryFiles(
    for name: String, in folder: String, descriptor: Int32
  ) {
    let prefix = "." + shortened(name) + temporaryMarker
    removeStaleTemporaryFiles(in: folder, descriptor: descriptor) {
      $0.hasPrefix(prefix) ? $0.dropFirst(prefix.count) : nil
    }
  }

  /// Removes, as a write does for its own target, the stale temporary files of every target
  /// in `folder` whose name starts with `namePrefix`: for folders of files written once each
  /// under a new name (a launch history), where no later write to the same name would.
  package static func removeStaleTemporaryFiles(
    in folder: URL, forNamesStartingWith namePrefix: String
  ) {
    let prefix = "." + namePrefix
    removeStaleTemporaryFiles(in: folder.path) { candidate in
      guard candidate.hasPrefix(prefix),
        let marker = candidate.range(of: temporaryMarker, options: .backwards)
      else { return nil }
      return candidate[marker.upperBound...]
    }
  }

  /// Removes the temporary files in `folder` for which `writer` gives the `<pid>-<tag>` part
  /// and whose writer has died, or that are older than ``staleAge``. With the folder's open
  /// `descriptor`, each file is checked and removed through it: a listing of a folder swapped
  /// for a link meanwhile can then only name files, never reach them.
  private static func removeStaleTemporaryFiles(
    in folder: String, descriptor: Int32 = AT_FDCWD, writer: (String) -> Substring?
  ) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    let now = Date().timeIntervalSince1970
    for candidate in names {
      guard let rest = writer(candidate), let dash = rest.firstIndex(of: "-"),
        let pid = Int32(rest[..<dash]), pid > 0
      else {
        continue
      }
      let path = descriptor == AT_FDCWD ? folder + "/" + candidate : candidate
      var info = stat()
      guard fstatat(descriptor, path, &info, AT_SYMLINK_NOFOLLOW) == 0,
        info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
      else {
        continue
      }
      let age = now - TimeInterval(modificationSeconds(info))
      let writerIsGone = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
      if writerIsGone || age > staleAge {
        unlinkat(descriptor, path, 0)
      }
    }
  }

  /// Whether `name` (described by `info`) is the temporary file of a write still in flight:
  /// named as ``temporaryName(for:pid:tag:)`` names it, a regular file, its writer alive and
  /// the file younger than an hour. Removing one would fail that write; it is renamed into
  /// place, or removed by its writer, in a moment.
  package static func isTemporaryFileInUse(_ name: String, _ info: stat) -> Bool {
    guard name.hasPrefix("."), info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG),
      let marker = name.range(of: temporaryMarker, options: .backwards)
    else { return false }
    let rest = name[marker.upperBound...]
    guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0 else {
      return false
    }
    let age = Date().timeIntervalSince1970 - TimeInterval(modificationSeconds(info))
    let writerIsGone = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    return !writerIsGone && age <= staleAge
  }

  private static func modificationSeconds(_ info: stat) -> Int {
    #if canImport(Darwin)
      Int(info.st_mtimespec.tv_sec)
    #else
      Int(info.st_mtim.tv_sec)
    #endif
  }

  // MARK: - System calls

  private static func writeAll(_ data: Data, to descriptor: Int32, target: URL) throws {
    try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
      guard let base = buffer.baseAddress else { return }
      var offset = 0
      while offset < buffer.count {
        let count = write(descriptor, base + offset, buffer.count - offset)
        if count < 0 {
          if errno == EINTR { continue }
          throw failure(errno, writing: target, doing: "write the new file")
        }
        offset += count
      }
    }
  }

  /// Where the link at `path` points, as a path (relative targets resolve against the link's
  /// folder).
  private static func linkTarget(of path: String, naming url: URL) throws -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else {
      throw StepFailure(
        "cannot write '\(url.path)': cannot read the symbolic link '\(path)' (\(describeErrno(errno)))"
      )
    }
    let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if target.hasPrefix("/") { return target }
    return (path as NSString).deletingLastPathComponent + "/" + target
  }

  package static func describeType(_ type: mode_t) -> String {
    switch type {
    case mode_t(S_IFDIR): "a folder"
    case mode_t(S_IFCHR): "a character device"
    case mode_t(S_IFBLK): "a block device"
    case mode_t(S_IFIFO): "a FIFO (named pipe)"
    case mode_t(S_IFSOCK): "a socket"
    case mode_t(S_IFLNK): "a symbolic link"
    default: "a special file"
    }
  }

  private static func describeErrno(_ code: Int32) -> String {
    String(cString: strerror(code))
  }

  /// A failed system call as an error people can act on: a missing or unwritable folder and
  /// a full disk are named as such, anything else with the system's reason.
  private static func failure(_ code: Int32, writing target: URL, doing action: String)
    -> StepFailure
  {
    let folder = target.deletingLastPathComponent()
    if code == ENOENT {
      return StepFailure(
        "cannot write '\(target.path)': its folder '\(folder.path)' does not exist; create it first"
      )
    }
    if let problem = writeProblem(in: folder) {
      return StepFailure(
        "cannot rewrite '\(target.path)': \(problem.reason), so the file was left as it was;"
          + " \(problem.advice)")
    }
    return StepFailure(
      "cannot rewrite '\(target.path)': could not \(action) (\(describeErrno(code))), so the file"
        + " was left as it was")
  }
}
