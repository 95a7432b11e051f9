import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A file that a launch shares with the running app, such as a queue the app appends to or
/// the state it saves: a step reads it, judges it, and may replace it or move it aside while
/// the app writes it too.
///
/// The protocol both sides follow, so that neither loses what the other wrote:
///
/// 1. A writer changes the file only while it holds the file's write lock
///    (``withWriteLock(timeout:stopsWhenCancelled:whenBusy:_:)``, an advisory `flock` on
///    `.<name>.lock` beside it), and only by replacing it whole
///    (``SafeFiles/writeAtomically(_:to:followingLinks:)``: a new file beside it, renamed over
///    it), never by writing into it.
/// 2. A step reads the file (``read(limit:)``) and judges what it read without the lock, then
///    acts (replaces or moves the file) only holding the lock, and only when the file is still
///    exactly what it judged: the same device, inode, size, time and bytes, read again through
///    an open descriptor (``isUnchanged(since:limit:)``). Otherwise it reads the file again and
///    judges anew, up to a bound, and then leaves the file as it is and says so; as it does
///    when another writer keeps the lock for all of its wait.
///
/// `LaunchStateFile` and `QueueFile`, in the plugins that read those files, do the app's side.
public struct SharedFile: Sendable {
  /// The file (not a symbolic link to it: the lock is taken beside the file itself).
  public let url: URL

  /// The shared file at `url`.
  public init(url: URL) {
    self.url = url
  }

  /// The lock file every writer locks: `.<name>.lock` beside the file. It holds nothing and
  /// is never removed, since a writer may hold it at any time.
  package var lockURL: URL {
    url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).lock")
  }

  /// What a read found: which file it was and its bytes.
  public struct Snapshot: Sendable, Equatable {
    /// The file's device and inode; `nil` when no file was there.
    package var identity: [UInt64]?
    /// Its size in bytes.
    public var size: Int64
    /// Its last modification, in nanoseconds since 1970.
    package var modified: Int64
    /// Its bytes; `nil` when no file was there, or it was larger than the limit read.
    public var bytes: Data?

    /// Whether a file was there.
    public var exists: Bool { identity != nil }
  }

  /// Reads the file through one descriptor opened without following a symbolic link or
  /// waiting on a FIFO; a file larger than `limit` bytes gives its identity and size, and no
  /// bytes.
  ///
  /// - Throws: an error that names the file when it is not a regular file or cannot be read.
  public func read(limit: Int) throws -> Snapshot {
    let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT { return Snapshot(identity: nil, size: 0, modified: 0, bytes: nil) }
      if code == ELOOP {
        throw SafeFiles.ReadProblem(url: url, reason: .notRegular("a symbolic link"))
      }
      throw SafeFiles.ReadProblem(url: url, reason: .unreadable(String(cString: strerror(code))))
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw SafeFiles.ReadProblem(url: url, reason: .unreadable(String(cString: strerror(errno))))
    }
    let type = info.st_mode & mode_t(S_IFMT)
    guard type == mode_t(S_IFREG) else {
      throw SafeFiles.ReadProblem(url: url, reason: .notRegular(SafeFiles.describeType(type)))
    }
    var snapshot = Snapshot(
      identity: [UInt64(truncatingIfNeeded: info.st_dev), UInt64(info.st_ino)],
      size: Int64(info.st_size),
      modified: Self.modification(info), bytes: nil)
    guard info.st_size <= limit else { return snapshot }
    let data: Data
    do {
      // Up to one byte past the limit: a file growing meanwhile is too large, not cut short.
      data = try handle.read(upToCount: limit + 1) ?? Data()
    } catch {
      throw SafeFiles.ReadProblem(url: url, reason: .unreadable(error.localizedDescription))
    }
    if data.count <= limit { snapshot.bytes = data }
    snapshot.size = Int64(data.count)
    return snapshot
  }

  /// Whether the file is still exactly what `snapshot` found: the same file (device and
  /// inode), size, modification time and bytes, read again through an open descriptor; or
  /// still missing, when it was. Call it holding the write lock, right before acting.
  public func isUnchanged(since snapshot: Snapshot, limit: Int) -> Bool {
    guard let now = try? read(limit: limit) else { return false }
    return now == snapshot
  }

  /// Runs `body` holding the file's write lock, which every writer that follows the protocol
  /// (above) holds while it replaces the file; or `whenBusy`, when it is given and another
  /// writer holds the lock for all of `timeout`.
  ///
  /// A writer that finds the lock taken waits for it in the system's queue of its waiters,
  /// so that it takes its turn the moment the holder lets go, even of a holder that takes it
  /// again at once, as an app appending in a loop does. A holder that dies lets go. A writer
  /// whose task is cancelled while it waits (its step timed out, its launch was cancelled)
  /// stops waiting, unless `stopsWhenCancelled` is `false`: the app's own writes wait on,
  /// as a save from a view's task that ended must still be kept.
  ///
  /// A folder where the lock file cannot be created (read-only, full) cannot take the new
  /// file either, and a file system without locks locks nothing: `body` then runs without the
  /// lock, and its own write says what is wrong. A lock file this user may only read still
  /// locks.
  /// - Parameters:
  ///   - timeout: how long to wait for the lock.
  ///   - stopsWhenCancelled: whether a cancelled task stops waiting (a launch's step);
  ///     `false` for a write that must be kept even then (the app's).
  ///   - whenBusy: what to do instead of `body` when another writer holds the lock for all of
  ///     `timeout` (leave the file for a later launch, say); without it, that throws.
  ///   - body: what to do holding the lock.
  /// - Throws: ``StepFailure`` when another writer holds the lock for all of `timeout` and
  ///   there is no `whenBusy`, when the lock file cannot lock (a folder, a symbolic link or a
  ///   FIFO stands at its name, or a file this user cannot open: this writer could not take
  ///   its turn), when locking fails otherwise ("No locks available"), and what `body` or
  ///   `whenBusy` throws; `CancellationError` when the task is cancelled while it waits.
  ///   `body` has not run then.
  public func withWriteLock<T>(
    timeout: Duration = .seconds(5), stopsWhenCancelled: Bool = true,
    whenBusy: (() throws -> T)? = nil, _ body: () throws -> T
  ) throws -> T {
    try withWriteLock(
      timeout: timeout, unusable: .refuse, stopsWhenCancelled: stopsWhenCancelled,
      whenBusy: whenBusy, body)
  }

  /// What a writer does when the lock file cannot lock.
  package enum UnusableLock: Sendable {
    /// Leaves the file as it is, throwing the reason: a writer that replaces a file another
    /// writer may be replacing too.
    case refuse
    /// Writes without the lock: a writer for whom a lost write is worse than a turn not
    /// taken (the report store, whose app mostly appends alone).
    case writeUnlocked
  }

  /// ``withWriteLock(timeout:stopsWhenCancelled:whenBusy:_:)``, with `unusable` saying what
  /// happens when the lock file cannot lock. The launch record and the report store wait even
  /// when cancelled: what they write is the launch's own account of itself.
  package func withWriteLock<T>(
    timeout: Duration = .seconds(5), unusable: UnusableLock, stopsWhenCancelled: Bool = true,
    whenBusy: (() throws -> T)? = nil, _ body: () throws -> T
  ) throws -> T {
    Self.beforeLocking.withLock { $0[url.path] }?()
    var descriptor: Int32?
    do {
      descriptor = try openLock()
    } catch {
      guard unusable == .writeUnlocked else { throw error }
    }
    guard let descriptor else { return try body() }
    // One try first: all that a writer pays when nobody holds the lock.
    var wait = LockWait.Outcome.locked(descriptor)
    if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      guard code == EWOULDBLOCK || code == EINTR else {
        close(descriptor)
        return try withoutLocks(failure: code, body)
      }
      // The descriptor is the wait's now: it closes it, or hands back one holding the lock.
      wait = LockWait.wait(
        lockPath: lockURL.path, descriptor: descriptor, for: timeout,
        stopsWhenCancelled: stopsWhenCancelled)
    }
    switch wait {
    case .locked(let holding):
      // Closing the file lets go of the lock.
      defer { close(holding) }
      return try body()
    case .busy:
      if let whenBusy { return try whenBusy() }
      throw busy(for: timeout)
    case .cancelled:
      throw CancellationError()
    case .failed(let code):
      return try withoutLocks(failure: code, body)
    }
  }

  /// Runs `body` unlocked where locking failed with `code` because the file system has no
  /// locks (no writer can lock, so none is kept out); otherwise throws the failure.
  private func withoutLocks<T>(failure code: Int32, _ body: () throws -> T) throws -> T {
    guard [EOPNOTSUPP, ENOTSUP, ENOSYS, EINVAL].contains(code) else {
      throw StepFailure(
        "cannot lock '\(url.path)' to write it: \(String(cString: strerror(code))); it was left as it was"
      )
    }
    return try body()
  }

  /// The failure of a writer that waited all of `timeout` for the lock.
  package func busy(for timeout: Duration) -> StepFailure {
    StepFailure(
      "'\(url.path)' stayed locked by another writer (the app?) for \(DurationText.format(timeout)); it was left as it was"
    )
  }

  /// Why the lock file cannot lock, in words that end the sentence "'<file>' cannot be
  /// locked to write it: its lock file '<lock>' …".
  private func unusable(_ why: String) -> StepFailure {
    StepFailure(
      "'\(url.path)' cannot be locked to write it: its lock file '\(lockURL.path)' \(why), so "
        + "this writer could not take its turn with the others; it was left as it was")
  }

  /// The lock file, open (created when missing), or `nil` when it is missing and the folder
  /// cannot take it.
  private func openLock() throws(StepFailure) -> Int32? {
    let flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
    var descriptor = open(lockURL.path, O_RDWR | O_CREAT | flags, 0o666)
    // Another user's lock file, which this one may only read, or one on a read-only volume:
    // `flock` needs no more.
    if descriptor < 0, errno == EACCES || errno == EROFS {
      descriptor = open(lockURL.path, O_RDONLY | flags)
    }
    let code = errno
    var info = stat()
    if descriptor >= 0 {
      // A FIFO opens, and locks nothing where `flock` has no locks for one (macOS).
      guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) != mode_t(S_IFREG)
      else { return descriptor }
      close(descriptor)
    } else if lstat(lockURL.path, &info) != 0 {
      return nil
    }
    let type = info.st_mode & mode_t(S_IFMT)
    // A link, a folder or a FIFO there would leave each writer unlocked, all at once.
    guard type == mode_t(S_IFREG) else {
      throw unusable(
        "is \(SafeFiles.describeType(type)), not a file (move it away)")
    }
    // Other writers, who can open it, lock it: this one would write in their turn.
    guard code == EACCES || code == EPERM else {
      // Out of descriptors, an I/O error: this time only, and said as it is.
      throw StepFailure(
        "cannot lock '\(url.path)' to write it: its lock file '\(lockURL.path)' cannot be opened (\(String(cString: strerror(code)).lowercased())); it was left as it was"
      )
    }
    throw unusable("cannot be opened by this user (permission denied); let this user read it")
  }

  /// For tests: work to run when a writer of the file at a path is about to take its lock,
  /// the moment a step has judged the file and is about to act on it.
  package static let beforeLocking = Locked<[String: @Sendable () -> Void]>([:])

  private static func modification(_ info: stat) -> Int64 {
    #if canImport(Darwin)
      Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
    #else
      Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    #endif
  }
}
