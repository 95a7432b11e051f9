import Foundation
import PluginTestSupport
import Testing

@testable import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Review 26: the blocked lock-wait threads, when writers overlap.
@Suite("Shared file lock (review 26)", .timeLimit(.minutes(10)))
struct LockWaitReviewTests {
  /// CHANGELOG (session 26): "one blocked thread per file at most". A writer that comes while
  /// another waits through the file's registered thread starts a thread of its own, which is
  /// never registered: when it gives up, that thread stays blocked and no later writer ever
  /// waits through it. Each such overlap leaves one more thread for as long as the holder holds.
  @Test func overlappingWritersThatGiveUpDoNotLeaveAThreadEachTime() async throws {
    let folder = try ScratchFolder()
    let file = folder.file("queue.json")
    let shared = SharedFile(url: file)
    try await TestHelper.whileLocking(["hold-lock", file.path, "3600"]) {
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
      // At most as many threads as writers ever waited at once (two), not one per overlap.
      #expect(SharedFile.threadsBlocked(on: file) <= 2)
    }
  }
}
