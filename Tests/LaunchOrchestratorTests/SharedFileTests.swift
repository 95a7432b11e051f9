import Foundation
import LaunchOrchestrator
import PluginTestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The write lock of a file the launch shares with the app, taken against a second process.
@Suite("Shared file lock", .timeLimit(.minutes(10)))
struct SharedFileTests {
  @Test func aWriterGetsTheLockFromAProcessThatTakesItAgainTheMomentItLetsGo() async throws {
    let folder = try ScratchFolder()
    let file = folder.file("queue.json")
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
    let folder = try ScratchFolder()
    let file = folder.file("queue.json")
    let shared = SharedFile(url: file)
    try await TestHelper.whileLocking(["hold-lock", file.path, "3600"]) {
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
}
