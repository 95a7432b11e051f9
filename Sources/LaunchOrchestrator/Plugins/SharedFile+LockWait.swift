import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A writer's wait for a shared file's lock that another writer holds.
///
/// The wait is a blocking `flock` on a thread of its own, which the system wakes the moment
/// the holder lets go: a writer that tried now and then instead would find the lock free only
/// in the microseconds between a busy writer's turns (an app appending in a loop), and wait
/// for all of its timeout whenever that writer was busy. A holder that dies lets go, so the
/// thread never waits for a process that is gone.
///
/// `flock` cannot be interrupted from another thread, so a writer that gives up (its timeout
/// passed, or its task was cancelled) leaves the thread blocked: it takes the lock when the
/// holder lets go, and lets go of it at once. The next writer of the same lock file in this
/// process waits through that thread instead of blocking one more, and is handed the lock by
/// it: a holder that never lets go (an app stopped in a debugger, holding its queue's lock)
/// costs a process as many blocked threads as writers ever waited for the file at once (one,
/// mostly), not one per launch that waited.
final class LockWait: Sendable {
  /// How a writer's wait ended.
  enum Outcome: Sendable, Equatable {
    /// It holds the lock, through this descriptor, which it closes to let go.
    case locked(Int32)
    /// Another writer held the lock for all of the wait.
    case busy
    /// The writer's task was cancelled while it waited.
    case cancelled
    /// Locking failed with this `errno`.
    case failed(Int32)
  }

  /// A writer waiting through a blocked thread.
  private final class Writer: Sendable {
    let ended = DispatchSemaphore(value: 0)
    /// `nil` while it waits; what the wait gave it once the lock came, or it gave up.
    let outcome = Locked<Outcome?>(nil)

    /// Waits at most `timeout` for the lock to be handed over, and, with
    /// `stopsWhenCancelled`, less when the task is cancelled meanwhile (looked at every few
    /// milliseconds: `flock` and the semaphore know nothing of tasks); gives up otherwise.
    func awaitOutcome(for timeout: Duration, stopsWhenCancelled: Bool) -> Outcome {
      let deadline = DispatchTime.now() + min(timeout.seconds, 1e9)
      let watchesTask = stopsWhenCancelled && withUnsafeCurrentTask { $0 != nil }
      while true {
        let until = watchesTask ? min(deadline, .now() + .milliseconds(10)) : deadline
        if ended.wait(timeout: until) == .success { break }
        if watchesTask && Task.isCancelled || DispatchTime.now() >= deadline { break }
      }
      let cancelled = watchesTask && Task.isCancelled
      return outcome.withLock { outcome in
        if let outcome { return outcome }
        // Set, so that the thread, when the lock comes, lets go of it instead.
        outcome = .busy
        return cancelled ? .cancelled : .busy
      }
    }
  }

  private struct State {
    /// The writer the lock goes to when it comes, if one is waiting.
    var writer: Writer?
    /// Whether `flock` returned: the thread takes no writer any more.
    var isFinished = false
  }

  /// A lock file, by its device and inode: a thread blocked on a lock file that was since
  /// replaced at its path would hand over a lock no other writer takes.
  private struct LockFile: Hashable {
    var device: UInt64
    var inode: UInt64
  }

  /// The lock file the thread blocks on.
  private let lockFile: LockFile?
  /// Its path, for tests.
  private let lockPath: String
  private let state: Locked<State>

  /// The threads blocked on each lock file in this process: a writer that comes waits
  /// through one that no other writer waits through, and starts one only when there is
  /// none, so that they never outnumber the writers that ever waited at once.
  private static let blocked = Locked<[LockFile: [LockWait]]>([:])
  /// For tests: how many threads are blocked on the lock file at each path, and how many
  /// writers wait for it.
  static let counts = Locked<[String: (threads: Int, writers: Int)]>([:])

  /// Changes the counts of the lock file at `lockPath`, and forgets them once both are 0.
  private static func count(
    _ lockPath: String, _ change: (inout (threads: Int, writers: Int)) -> Void
  ) {
    counts.withLock { counts in
      var entry = counts[lockPath] ?? (0, 0)
      change(&entry)
      counts[lockPath] = entry == (0, 0) ? nil : entry
    }
  }

  private init(lockFile: LockFile?, lockPath: String, writer: Writer) {
    self.lockFile = lockFile
    self.lockPath = lockPath
    state = Locked(State(writer: writer))
  }

  /// Waits at most `timeout` for the lock on the lock file at `lockPath`, which another
  /// writer holds; `descriptor` is that file, open, and is the wait's from now on. With
  /// `stopsWhenCancelled`, a cancelled task stops waiting.
  static func wait(
    lockPath: String, descriptor: Int32, for timeout: Duration, stopsWhenCancelled: Bool
  ) -> Outcome {
    let cancelled = stopsWhenCancelled && Task.isCancelled
    guard timeout > .zero, !cancelled else {
      close(descriptor)
      return cancelled ? .cancelled : .busy
    }
    let writer = Writer()
    var info = stat()
    let lockFile =
      fstat(descriptor, &info) == 0
      ? LockFile(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(info.st_ino)) : nil
    let (wait, joined) = blocked.withLock { waits -> (LockWait, Bool) in
      guard let lockFile else {
        return (LockWait(lockFile: nil, lockPath: lockPath, writer: writer), false)
      }
      if let idle = waits[lockFile]?.first(where: { $0.take(writer) }) { return (idle, true) }
      let started = LockWait(lockFile: lockFile, lockPath: lockPath, writer: writer)
      waits[lockFile, default: []].append(started)
      return (started, false)
    }
    if joined { close(descriptor) } else { wait.start(descriptor) }
    count(lockPath) { $0.writers += 1 }
    let outcome = writer.awaitOutcome(for: timeout, stopsWhenCancelled: stopsWhenCancelled)
    count(lockPath) { $0.writers -= 1 }
    if outcome == .busy || outcome == .cancelled {
      wait.state.withLock { state in
        if state.writer === writer { state.writer = nil }
      }
    }
    return outcome
  }

  /// Takes `writer` as the one the lock goes to; `false` when the thread already returned or
  /// waits for another writer.
  private func take(_ writer: Writer) -> Bool {
    state.withLock { state in
      guard !state.isFinished, state.writer == nil else { return false }
      state.writer = writer
      return true
    }
  }

  private func start(_ descriptor: Int32) {
    Self.count(lockPath) { $0.threads += 1 }
    let thread = Thread { [self] in
      var result: Int32
      var code: Int32 = 0
      repeat {
        result = flock(descriptor, LOCK_EX)
        code = errno
      } while result != 0 && code == EINTR
      finish(result == 0 ? .locked(descriptor) : .failed(code), descriptor: descriptor)
    }
    thread.name = "SharedFile lock wait"
    // It waits for a writer: woken, it runs as soon as the writer would.
    thread.qualityOfService = Thread.current.qualityOfService
    thread.start()
  }

  /// Hands what `flock` gave to the writer waiting, if one still is; lets go otherwise.
  private func finish(_ outcome: Outcome, descriptor: Int32) {
    let writer = state.withLock { state -> Writer? in
      state.isFinished = true
      defer { state.writer = nil }
      return state.writer
    }
    if let lockFile {
      Self.blocked.withLock { waits in
        waits[lockFile]?.removeAll { $0 === self }
        if waits[lockFile]?.isEmpty == true { waits[lockFile] = nil }
      }
    }
    Self.count(lockPath) { $0.threads -= 1 }
    let handed =
      writer?.outcome.withLock { waiting in
        guard waiting == nil else { return false }
        waiting = outcome
        return true
      } ?? false
    if handed {
      writer?.ended.signal()
    } else if case .locked = outcome {
      close(descriptor)
    }
    if case .failed = outcome { close(descriptor) }
  }
}

extension SharedFile {
  /// For tests: how many threads of this process are blocked waiting for the file's lock.
  package static func threadsBlocked(on file: URL) -> Int {
    LockWait.counts.withLock { $0[SharedFile(url: file).lockURL.path]?.threads ?? 0 }
  }

  /// For tests: how many writers of this process wait for the file's lock.
  package static func waitingWriters(of file: URL) -> Int {
    LockWait.counts.withLock { $0[SharedFile(url: file).lockURL.path]?.writers ?? 0 }
  }
}
