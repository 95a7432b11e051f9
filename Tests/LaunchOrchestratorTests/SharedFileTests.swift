import Foundation
import PluginTestSupport
import Testing

@testable import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The write lock of a file the launch shares with the app, taken against a second process.
@Suite("Shared file lock", .timeLimit(.minutes(10)))
struct SharedFileTests {
  @Test func aWriterGetsTheLockFromAProcessThatTakesItAgainTheMomentItLetsGo() async throws {
    let queue = try ScratchQueue()
    let file = queue.file
    // The other process holds the lock 5 ms at a time and takes it again at once: the lock is
    // free for a few microseconds at a time, which a writer trying now and then never meets.
    try await TestHelper.whileLocking(["churn-lock", file.path, "5000"]) {
      for _ in 0..<3 {
        let took = try await onThreadOfItsOwn { try SharedFile(url: file).withWriteLock { true } }
        #expect(took)
      }
    }
  }

  @Test func aLockHeldThroughoutIsBusyAndAWriterThatGaveUpLetsGoOnceItsHolderIsKilled()
    async throws
  {
    let queue = try ScratchQueue()
    let (file, shared) = (queue.file, queue.shared)
    try await queue.whileAnotherProcessHoldsTheLock {
      let busy = StepFailure(
        "'\(file.path)' stayed locked by another writer (the app?) for 100ms; it was left as it was"
      )
      try await onThreadOfItsOwn {
        #expect(throws: busy) { try shared.withWriteLock(timeout: .milliseconds(100)) {} }
        // `whenBusy` runs instead of `body`, instead of throwing.
        let ran = try shared.withWriteLock(timeout: .milliseconds(100), whenBusy: { "whenBusy" }) {
          "body"
        }
        #expect(ran == "whenBusy")
      }
    }
    // The holder is killed (SIGKILL), which lets go of its lock: the writers that gave up,
    // still waiting for it, take it and let go of it at once, and the next one takes it.
    let ran = try await onThreadOfItsOwn { try shared.withWriteLock { "body" } }
    #expect(ran == "body")
  }

  @Test func aWriterWhoseTaskIsCancelledStopsWaitingForTheLock() async throws {
    let queue = try ScratchQueue()
    let (file, shared) = (queue.file, queue.shared)
    try await queue.whileAnotherProcessHoldsTheLock {
      // An hour's wait, as a step's lock wait outlasts the step's own timeout: the step's
      // task is cancelled at its timeout, and the wait ends with it, not an hour later.
      let writer = blockingTask { try shared.withWriteLock(timeout: .seconds(3600)) { "body" } }
      while SharedFile.waitingWriters(of: file) == 0 { try await Task.sleep(for: .milliseconds(5)) }
      writer.cancel()
      await #expect(throws: CancellationError.self) { try await writer.value }
      #expect(SharedFile.waitingWriters(of: file) == 0)
    }
  }

  @Test func writersThatGaveUpOnALockShareOneBlockedThreadWhichHandsTheLockToTheNext()
    async throws
  {
    let queue = try ScratchQueue()
    let (file, shared) = (queue.file, queue.shared)
    try await queue.whileAnotherProcessHoldsTheLock {
      try await onThreadOfItsOwn {
        for _ in 0..<5 {
          let ran = try shared.withWriteLock(timeout: .milliseconds(20), whenBusy: { "busy" }) {
            "body"
          }
          #expect(ran == "busy")
        }
      }
      // Each writer that gave up left a thread blocked in `flock` until the holder lets go;
      // one is enough for all of them.
      #expect(SharedFile.threadsBlocked(on: file) == 1)
    }
    // The holder was killed, which let go of its lock: the thread takes it and lets go, and
    // the next writer takes it.
    while SharedFile.threadsBlocked(on: file) > 0 { try await Task.sleep(for: .milliseconds(5)) }
    let ran = try await onThreadOfItsOwn { try shared.withWriteLock { "body" } }
    #expect(ran == "body")
  }

  @Test func aWriterWaitingThroughABlockedThreadHoldsTheLockWhenItComes() async throws {
    let queue = try ScratchQueue()
    let (file, shared) = (queue.file, queue.shared)
    let writer: Task<Bool, any Error> = try await queue.whileAnotherProcessHoldsTheLock {
      try await onThreadOfItsOwn {
        _ = try shared.withWriteLock(timeout: .milliseconds(20), whenBusy: {}) {}
      }
      // This writer waits through the thread the first one left blocked.
      let writer = blockingTask {
        try shared.withWriteLock(timeout: .seconds(3600)) {
          // Held: another descriptor of the lock file cannot take it.
          let other = open(shared.lockURL.path, O_RDWR | O_CLOEXEC)
          defer { close(other) }
          return flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
        }
      }
      while SharedFile.waitingWriters(of: file) == 0 { try await Task.sleep(for: .milliseconds(5)) }
      #expect(SharedFile.threadsBlocked(on: file) == 1)
      return writer
    }
    // The holder was killed: the thread took the lock and handed it to the writer.
    #expect(try await writer.value)
    #expect(SharedFile.threadsBlocked(on: file) == 0)
  }

  /// Writers that overlap (a step waiting, the app's save giving up meanwhile) wait through
  /// the same blocked threads: no more of them than writers ever waited at once.
  @Test func overlappingWritersThatGiveUpDoNotLeaveAThreadEachTime() async throws {
    let queue = try ScratchQueue()
    let (file, shared) = (queue.file, queue.shared)
    try await queue.whileAnotherProcessHoldsTheLock {
      for _ in 0..<3 {
        // One writer waits (a step, through the file's blocked thread) ...
        let waiting = blockingTask { try shared.withWriteLock(timeout: .seconds(3600)) { "body" } }
        while SharedFile.waitingWriters(of: file) == 0 {
          try await Task.sleep(for: .milliseconds(5))
        }
        // ... while another writer (the app's save, another launch) comes and gives up.
        let ran = try await onThreadOfItsOwn {
          try shared.withWriteLock(timeout: .milliseconds(1), whenBusy: { "busy" }) { "body" }
        }
        #expect(ran == "busy")
        waiting.cancel()
        _ = try? await waiting.value
      }
      #expect(SharedFile.threadsBlocked(on: file) <= 2)
    }
    // The holder was killed: every blocked thread takes the lock, lets go, and is forgotten.
    while SharedFile.threadsBlocked(on: file) > 0 { try await Task.sleep(for: .milliseconds(5)) }
    #expect(SharedFile.waitingWriters(of: file) == 0)
  }
}

/// A queue file in a scratch folder of its own, and the file as shared with the app.
private struct ScratchQueue {
  let folder: ScratchFolder
  let file: URL
  let shared: SharedFile

  init() throws {
    folder = try ScratchFolder()
    file = folder.file("queue.json")
    shared = SharedFile(url: file)
  }

  /// Runs `body` while a second process holds the file's write lock, and kills that process
  /// (SIGKILL, which lets go of the lock) when `body` returns.
  func whileAnotherProcessHoldsTheLock<T>(_ body: () async throws -> T) async throws -> T {
    try await TestHelper.whileLocking(["hold-lock", file.path, "3600"], body)
  }
}

/// A task that blocks in `body` on a thread of the engine's blocking pool, not a cooperative
/// one: that pool has one thread a core, and tests blocking them all would stop every test.
func blockingTask<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> Task<T, any Error> {
  Task(executorPreference: BlockingExecutor.shared) { try body() }
}
