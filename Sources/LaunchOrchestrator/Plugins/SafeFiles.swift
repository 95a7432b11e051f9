import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// File operations that never lose user data, for plugins that touch user files.
public enum SafeFiles {
  /// Renames `url` to `<name>.<label>-<UTC timestamp>` beside it (adding `-2`, `-3`, ... when
  /// that name is taken) and returns the new location. Nothing is ever deleted, and nothing
  /// at the new name is ever replaced, even by a name taken at the same moment.
  public static func moveAside(_ url: URL, label: String, now: Date = Date()) throws -> URL {
    let stamp = now.formatted(
      Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateTimeSeparator(.standard)
        .time(
          includingFractionalSeconds: false)
    ).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
    let base = "\(url.lastPathComponent).\(label)-\(stamp)"
    var destination = url.deletingLastPathComponent().appendingPathComponent(base)
    var counter = 2
    func nextName() {
      destination = url.deletingLastPathComponent().appendingPathComponent("\(base)-\(counter)")
      counter += 1
    }
    // Renamed only if the name is free, in one call (`renameat2`'s RENAME_NOREPLACE, Darwin's
    // RENAME_EXCL), never replacing a name taken meanwhile; a second name taken with a hard
    // link, then the first let go, would delete a file saved onto the first in between.
    while true {
      if renameWithoutReplacing(url.path, destination.path) == 0 { return destination }
      guard errno == EEXIST else { break }
      nextName()
    }
    // A file system that cannot rename so (some network shares), a system without the call,
    // a file that is gone: renamed after a check, the only way there, which also says what
    // went wrong.
    while FileManager.default.fileExists(atPath: destination.path) { nextName() }
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
  /// over it, and the folder is flushed too. The temporary file is `.<name>.writing-<n>`, in
  /// the first of a few fixed slots that no other write holds (`flock`), so the next write to
  /// the same file finds and removes what a killed write left without listing the folder.
  ///
  /// With `followingLinks` false, a symbolic link at `url` is refused like a folder: for files
  /// only the package writes, where a link can only be someone's attempt to redirect the write.
  public static func writeAtomically(_ data: Data, to url: URL, followingLinks: Bool = true)
    throws
  {
    try writeAtomically(to: url, followingLinks: followingLinks) { write in
      try data.withUnsafeBytes(write)
    }
  }

  /// Replaces the file at `url` as ``writeAtomically(_:to:followingLinks:)`` does, with the
  /// bytes `contents` hands to `write` piece by piece as it makes them: for a file larger
  /// than what should be held in memory at once (`orchestrate export otlp` of a day of
  /// reports). The pieces go to the temporary file, which takes the file's place only once
  /// `contents` returns; when it throws (or a write does), the temporary file is removed, the
  /// file is left as it was, and the error passes on.
  package static func writeAtomically(
    to url: URL, followingLinks: Bool = true,
    contents: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws {
    let target = followingLinks ? try checkReplaceable(url) : try checkRegularOrMissing(url)
    let folderPath = target.deletingLastPathComponent().path
    let folder = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard folder >= 0 else { throw failure(errno, writing: target, doing: "open its folder") }
    defer { close(folder) }
    try writeAtomically(
      named: target.lastPathComponent, in: folder, naming: target, contents: contents)
  }

  /// Replaces the file `name` in the open folder `folder` (which `target` names, for
  /// messages) as ``writeAtomically(_:to:followingLinks:)`` does, every step relative to the
  /// folder: a folder swapped for a link after it was opened cannot redirect the write. Only a
  /// regular file or nothing may stand at `name`; a link there is refused, not followed.
  package static func writeAtomically(
    _ data: Data, named name: String, in folder: Int32, naming target: URL
  ) throws {
    try writeAtomically(named: name, in: folder, naming: target) { write in
      try data.withUnsafeBytes(write)
    }
  }

  /// Replaces the file `name` in `folder` with what `contents` writes, as
  /// ``writeAtomically(_:named:in:naming:)`` does.
  private static func writeAtomically(
    named name: String, in folder: Int32, naming target: URL,
    contents: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
  ) throws {
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
    // Private while it is written; it gets the old file's mode just before it takes its place.
    let (temporary, descriptor) = try claimTemporaryFile(
      for: name, in: folder, mode: replacesFile ? 0o600 : 0o666, naming: target)
    var written = false
    defer {
      if !written { unlinkat(folder, temporary, 0) }
      // Only now: closing lets go of the temporary file's lock, held until it was renamed
      // into place or removed, and another write may then take its name.
      close(descriptor)
    }
    try contents { bytes in try writeAll(bytes, to: descriptor, target: target) }
    if replacesFile {
      // Ownership first: changing the owner can clear set-id bits that fchmod then restores.
      if existing.st_uid != geteuid() || existing.st_gid != getegid() {
        _ = fchown(descriptor, existing.st_uid, existing.st_gid)
      }
      // Then its access list and other marks, before the mode, which has the last word on
      // the bits the two share.
      try copyExtendedAttributes(
        of: name, in: folder, existing: existing, to: descriptor, target: target)
      guard fchmod(descriptor, existing.st_mode & 0o7777) == 0 else {
        throw failure(
          errno, writing: target, doing: "give the new file the old one's permissions")
      }
    }
    guard fsync(descriptor) == 0 else {
      throw failure(errno, writing: target, doing: "flush the new file to disk")
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
  /// With `creatingLinkTarget`, a link to nothing returns the path it leads to when that
  /// path's folder exists, for the write to create the file there: for a file the app saves
  /// through a link it set up (into a shared container, say), whose target may not exist yet,
  /// or was moved aside as unreadable. The file returned through a link has its folder as the
  /// file system resolves it. With `forReading`, the messages say the path "cannot be used"
  /// rather than written: for a step that reads a file it may replace later.
  ///
  /// - Throws: ``StepFailure`` naming the path when it is a folder, a device, a FIFO or a
  ///   socket, a link to one of those, a link to nothing (with `creatingLinkTarget`, a link to
  ///   a path whose folder does not exist), a loop of links, or a link another user made in a
  ///   folder everyone may write to (`/tmp`), which the kernel would not follow either.
  public static func checkReplaceable(
    _ url: URL, creatingLinkTarget: Bool = false, forReading: Bool = false
  ) throws -> URL {
    // Said as what the caller is about to do: a reader of a file it will replace later (the
    // app's saved state) is told of a problem with using it, not with writing it.
    let cannot = forReading ? "cannot use" : "cannot write"
    var path = url.path
    var chain: [String] = []
    while true {
      var info = stat()
      guard lstat(path, &info) == 0 else {
        let code = errno
        guard code == ENOENT || code == ENOTDIR else {
          throw StepFailure(
            "\(cannot) '\(url.path)': \(describeErrno(code)); check the path and its folders")
        }
        guard chain.isEmpty else {
          let target = URL(fileURLWithPath: path)
          guard creatingLinkTarget else {
            throw StepFailure(
              "\(cannot) '\(url.path)': it is a symbolic link to '\(path)', which does not"
                + " exist; create that file first or name a regular file")
          }
          let folder = target.deletingLastPathComponent().path
          var folderInfo = stat()
          guard code == ENOENT, stat(folder, &folderInfo) == 0,
            folderInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR)
          else {
            throw StepFailure(
              "\(cannot) '\(url.path)': it is a symbolic link to '\(path)', and '\(folder)' is"
                + " not a folder that exists; create the folder or change the link")
          }
          return physical(target.path)
        }
        return URL(fileURLWithPath: path)
      }
      let type = info.st_mode & mode_t(S_IFMT)
      if type == mode_t(S_IFREG) {
        return chain.isEmpty ? URL(fileURLWithPath: path) : physical(path)
      }
      guard type == mode_t(S_IFLNK) else {
        let what = chain.isEmpty ? "it is" : "it is a symbolic link to '\(path)', which is"
        throw StepFailure(
          "\(cannot) '\(url.path)': \(what) \(describeType(type)), not a regular file,"
            + " and replacing it could destroy it; name a regular file instead")
      }
      guard chain.count < maximumLinks else {
        throw StepFailure(
          "\(cannot) '\(url.path)': it is a chain of more than \(maximumLinks) symbolic links"
            + " (a loop?); name a regular file instead")
      }
      try checkFollowable(link: path, info, naming: url, cannot: cannot)
      chain.append(path)
      path = try linkTarget(of: path, naming: url, cannot: cannot)
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

  /// The regular file at `path`, a symbolic link followed to it, opened for reading and
  /// checked as ``contentsOfRegularFile(followingLinksAt:limit:)`` checks it, with no limit on
  /// its size: for a reader that reads it in pieces (a JSON Lines file of many reports). `nil`
  /// when nothing is there; the caller closes the descriptor.
  package static func openRegularFile(followingLinksAt path: String) throws(ReadProblem)
    -> Int32?
  {
    try followingLinks(at: path) { opened, name throws(ReadProblem) in
      try checkRegularFile(opened, naming: name(), limit: .max).map { _ in opened.descriptor }
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

  /// The marker between a target's name and the slot's number in a temporary name.
  private static let temporaryMarker = ".writing-"

  /// How many writes to one file may be in flight at once. Each claims a slot of its own: a
  /// fixed temporary name, which the next write to the file looks at, so that what a killed
  /// write left is found without listing the folder.
  private static let temporarySlots = 8

  /// How many times a write creates its file in a slot again after another write took it
  /// for a leftover and removed it, before it passes on to the next slot.
  private static let slotAttempts = 3

  /// The most links followed before a path counts as a loop, as the kernel does.
  private static let maximumLinks = 32

  /// The temporary name of the write in slot `slot` to the file `name`:
  /// `.<name>.writing-<slot>`, hidden and beside the target.
  package static func temporaryName(for name: String, slot: Int) -> String {
    "." + shortened(name) + temporaryMarker + String(slot)
  }

  /// Whether `name` is a temporary name as ``temporaryName(for:slot:)`` makes one.
  package static func isTemporaryName(_ name: String) -> Bool {
    guard name.hasPrefix("."), let marker = name.range(of: temporaryMarker, options: .backwards)
    else { return false }
    let slot = name.utf8[marker.upperBound...]
    return !slot.isEmpty && slot.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  }

  /// Names are at most 255 bytes; the temporary name adds about 10 to the target's.
  private static func shortened(_ name: String) -> String {
    var result = Substring(name)
    while result.utf8.count > 200 { result = result.dropLast() }
    return String(result)
  }

  /// Creates the temporary file of a write to `name` in the first free slot, with `mode`,
  /// and locks it (`flock`). A write holds its slot's lock from then until its file is
  /// renamed into place or removed; the kernel lets go of it when the writer dies. So a
  /// slot's file that no one holds is what a killed write left: every slot's is removed
  /// first (a few names looked up, never a listing), which also frees its space before the
  /// new file takes more. A slot held by a write in flight, or taken by anything but a
  /// regular file, is passed over.
  ///
  /// With every slot held or taken, the file gets a name of its own with a random number,
  /// locked all the same: a write never fails for want of a slot, and names others can
  /// guess (in a folder they may write to, such as `/tmp`) cannot block it. No later write
  /// looks for that name, so one a killed write left stays (`cache clear` and a history's
  /// prune, which list their folders, remove it).
  ///
  /// - Returns: the temporary name and its descriptor, open for writing and locked.
  private static func claimTemporaryFile(
    for name: String, in folder: Int32, mode: mode_t, naming target: URL
  ) throws -> (name: String, descriptor: Int32) {
    for slot in 0..<temporarySlots {
      _ = removeAbandonedTemporaryFile(temporaryName(for: name, slot: slot), in: folder)
    }
    for slot in 0..<temporarySlots {
      let temporary = temporaryName(for: name, slot: slot)
      // Tried again when another write took the new file for a leftover and removed it.
      attempts: for _ in 0..<slotAttempts {
        switch try claim(temporary, in: folder, mode: mode, naming: target) {
        case .claimed(let descriptor): return (temporary, descriptor)
        case .taken: break attempts
        case .lost: continue
        }
      }
    }
    for _ in 0..<slotAttempts {
      let temporary = temporaryName(
        for: name, slot: Int.random(in: temporarySlots...Int(Int32.max)))
      if case .claimed(let descriptor) = try claim(
        temporary, in: folder, mode: mode, naming: target)
      {
        return (temporary, descriptor)
      }
    }
    // Only when other writes kept taking the names this one created: it may go again.
    throw StepFailure(
      "cannot write '\(target.path)': the temporary names it tried beside it ('"
        + temporaryName(for: name, slot: 0) + "' to '-\(temporarySlots - 1)' and"
        + " \(slotAttempts) random ones) were all held or taken by other writes, so the file was"
        + " left as it was; write it again")
  }

  /// What became of an attempt to create a temporary file.
  private enum Claim {
    /// Created and locked: the descriptor, open for writing.
    case claimed(Int32)
    /// Something is at the name already.
    case taken
    /// Created, then taken by another write for a killed write's leftover and removed.
    case lost
  }

  /// Creates the temporary file `temporary` in `folder` with `mode`, locks it, and checks
  /// that the name still leads to it: before the lock, a write that took it for a killed
  /// write's leftover may have removed it, and the name may be another write's now.
  ///
  /// - Throws: ``StepFailure`` when the file cannot be created, or locked for a reason other
  ///   than another write holding it (the kernel out of lock records, an NFS mount without
  ///   its lock service); the file is removed first.
  private static func claim(
    _ temporary: String, in folder: Int32, mode: mode_t, naming target: URL
  ) throws -> Claim {
    let descriptor = openat(
      folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
      guard errno == EEXIST else {
        throw failure(
          errno, writing: target,
          doing: "create a temporary file in '\(target.deletingLastPathComponent().path)'")
      }
      return .taken
    }
    if !tryLock(descriptor) {
      let code = errno
      // Held: another write took the new file for a leftover, and removes it.
      guard code != EWOULDBLOCK else {
        close(descriptor)
        return .lost
      }
      // A file system without locks cannot lock the file for any write, so none can take it
      // over either: it is used unlocked. Any other failure is said as it is.
      guard [EOPNOTSUPP, ENOTSUP, ENOSYS, EINVAL].contains(code) else {
        if isRegularFile(descriptor, stillNamed: temporary, in: folder) {
          unlinkat(folder, temporary, 0)
        }
        close(descriptor)
        throw failure(code, writing: target, doing: "lock its temporary file '\(temporary)'")
      }
    }
    guard isRegularFile(descriptor, stillNamed: temporary, in: folder) else {
      close(descriptor)
      return .lost
    }
    return .claimed(descriptor)
  }

  /// Takes the lock on `descriptor` if no one holds it, without waiting; on failure `errno`
  /// says why (`EWOULDBLOCK`: another holds it).
  private static func tryLock(_ descriptor: Int32) -> Bool {
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EINTR else { return false }
    }
    return true
  }

  /// Whether the file open at `descriptor` is a regular file that `name` in `folder` still
  /// leads to (the same device and inode).
  private static func isRegularFile(_ descriptor: Int32, stillNamed name: String, in folder: Int32)
    -> Bool
  {
    var opened = stat()
    var named = stat()
    return fstat(descriptor, &opened) == 0
      && opened.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
      && fstatat(folder, name, &named, AT_SYMLINK_NOFOLLOW) == 0
      && named.st_dev == opened.st_dev && named.st_ino == opened.st_ino
  }

  /// Removes the temporary file `name` in the open `folder` if no write holds its lock: what a
  /// killed write left. It is judged and removed holding that lock, so a write in flight
  /// never loses its file; only a regular file is removed.
  ///
  /// - Returns: whether it was removed, or nothing was there.
  package static func removeAbandonedTemporaryFile(_ name: String, in folder: Int32) -> Bool {
    var info = stat()
    guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT }
    guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return false }
    // Opened for its lock only; never read, and a FIFO put there meanwhile is not waited on.
    // Read-only on purpose: where `flock` is made of process-wide `fcntl` locks (NFS), an
    // exclusive one needs a descriptor open for writing, so none is taken and nothing is
    // removed there; one that was would let go of every lock this process holds on the
    // file, a live write's too, when it is closed.
    let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return errno == ENOENT }
    defer { close(descriptor) }
    // Under the lock the name is checked again: the write that held it may have renamed it
    // into place meanwhile, and the name may be a new write's file.
    guard tryLock(descriptor), isRegularFile(descriptor, stillNamed: name, in: folder) else {
      return false
    }
    return unlinkat(folder, name, 0) == 0 || errno == ENOENT
  }

  /// Removes what killed writes left for every target in `folder` whose name starts with
  /// `namePrefix`, as a write does for its own target: for folders of files each written
  /// once under a new name (a launch history), whose slots no later write would look at. It
  /// lists the folder, so it is for commands, not the launch path.
  package static func removeAbandonedTemporaryFiles(
    in folder: URL, forNamesStartingWith namePrefix: String
  ) {
    let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
      return
    }
    for name in names where name.hasPrefix("." + namePrefix) && isTemporaryName(name) {
      _ = removeAbandonedTemporaryFile(name, in: descriptor)
    }
  }

  // MARK: - System calls

  private static func writeAll(
    _ data: some ContiguousBytes, to descriptor: Int32, target: URL
  ) throws {
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

  /// Refuses to follow the link at `path` (whose `lstat` is `link`) when another user made it
  /// in a folder everyone may write to and only owners may delete from (`/tmp`), unless that
  /// user owns the folder: the rule the kernel applies when it follows links itself (Linux's
  /// `protected_symlinks`), which reading links here would otherwise bypass. Such a link is
  /// someone's way to send this process's write to a file of their choosing.
  private static func checkFollowable(
    link path: String, _ link: stat, naming url: URL, cannot: String
  ) throws {
    guard link.st_uid != geteuid() else { return }
    let folder = (path as NSString).deletingLastPathComponent
    var shared = stat()
    guard stat(folder.isEmpty ? "." : folder, &shared) == 0 else {
      throw StepFailure(
        "\(cannot) '\(url.path)': cannot look at the folder of the symbolic link '\(path)'"
          + " (\(describeErrno(errno))); check the path and its folders")
    }
    let writableByAll = shared.st_mode & mode_t(S_IWOTH) != 0
    let sticky = shared.st_mode & mode_t(S_ISVTX) != 0
    guard writableByAll, sticky, link.st_uid != shared.st_uid else { return }
    throw StepFailure(
      "\(cannot) '\(url.path)': '\(path)' is a symbolic link another user (uid \(link.st_uid))"
        + " made in '\(folder)', a folder everyone may write to, and following it could write"
        + " where they chose; remove it if it is not yours, or name a file in a folder of your own")
  }

  /// Refuses the chain of links at `url` when one of them is another user's in a folder
  /// everyone may write to (see `checkFollowable`): for a writer that writes in place what
  /// the chain leads to (a FIFO, a terminal), which ``checkReplaceable(_:creatingLinkTarget:forReading:)``
  /// refuses for other reasons.
  package static func checkLinksFollowable(_ url: URL) throws {
    var path = url.path
    for _ in 0...maximumLinks {
      var info = stat()
      guard lstat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else {
        return
      }
      try checkFollowable(link: path, info, naming: url, cannot: "cannot write")
      path = try linkTarget(of: path, naming: url, cannot: "cannot write")
    }
  }

  /// Where the link at `path` points, as a path (relative targets resolve against the link's
  /// folder).
  private static func linkTarget(of path: String, naming url: URL, cannot: String) throws
    -> String
  {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else {
      throw StepFailure(
        "\(cannot) '\(url.path)': cannot read the symbolic link '\(path)' (\(describeErrno(errno)))"
      )
    }
    let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if target.hasPrefix("/") { return target }
    return (path as NSString).deletingLastPathComponent + "/" + target
  }

  /// The path a link chain ends at, with its folder as the file system has it (`realpath`):
  /// a relative link's `..` after a folder that is itself a link names the folder it leads
  /// to, not the text before it. `path` itself when its folder cannot be resolved.
  private static func physical(_ path: String) -> URL {
    let url = URL(fileURLWithPath: path)
    guard let resolved = realpath(url.deletingLastPathComponent().path, nil) else { return url }
    defer { free(resolved) }
    return URL(fileURLWithPath: String(cString: resolved)).appendingPathComponent(
      url.lastPathComponent)
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
  static func failure(_ code: Int32, writing target: URL, doing action: String)
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

/// Renames `source` to `destination` unless something is there already (`EEXIST` then); -1
/// with `ENOSYS` where the system has no such call.
private func renameWithoutReplacing(_ source: String, _ destination: String) -> Int32 {
  #if canImport(Darwin)
    return renamex_np(source, destination, UInt32(RENAME_EXCL))
  #else
    // Glibc's module leaves out `renameat2` (glibc 2.28 and later have it): looked up once.
    guard let rename = RenameAt2.call else {
      errno = ENOSYS
      return -1
    }
    return rename(AT_FDCWD, source, AT_FDCWD, destination, RenameAt2.noReplace)
  #endif
}

#if !canImport(Darwin)
  /// The C library's `renameat2`, found by name.
  private enum RenameAt2 {
    typealias Call =
      @convention(c) (
        Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
      ) -> Int32
    /// `RENAME_NOREPLACE`.
    static let noReplace: UInt32 = 1
    static let call = cLibraryFunction("renameat2", as: Call.self)
  }
#endif
