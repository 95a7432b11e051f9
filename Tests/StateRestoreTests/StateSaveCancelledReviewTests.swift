import Foundation
import LaunchOrchestrator
import PluginTestSupport
import StateRestorePlugin
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Review 26: the app's own writers of a shared file, called from a cancelled task.
@Suite("state.restore save (review 26)", .timeLimit(.minutes(10)))
struct StateSaveCancelledReviewTests {
  /// `LaunchStateFile.save` documents that it throws `StepFailure`; since session 26 an app
  /// that saves from a cancelled task (a SwiftUI `.task` whose view went away, a scene going to
  /// the background) while a launch's `state.restore` holds the lock for a moment gets
  /// `CancellationError` at once, and its state is not saved; before, it waited (5 s at most).
  @Test func anAppSaveFromACancelledTaskWaitsForTheLockAsBefore() async throws {
    let folder = try ScratchFolder()
    let stateFile = LaunchStateFile(dataDirectory: folder.url)
    try FileManager.default.createDirectory(
      at: stateFile.url.deletingLastPathComponent(), withIntermediateDirectories: true)
    // Another writer of this process holds the lock, and lets go a moment later.
    let lockPath = SharedFile(url: stateFile.url).lockURL.path
    let holder = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
    #expect(holder >= 0)
    #expect(flock(holder, LOCK_EX) == 0)
    Thread {
      Thread.sleep(forTimeInterval: 0.3)
      close(holder)
    }.start()
    let saver = Task { () throws in
      withUnsafeCurrentTask { $0?.cancel() }
      try stateFile.save(["selectedTab": "results"])
    }
    await #expect(throws: Never.self) { try await saver.value }
    #expect(FileManager.default.fileExists(atPath: stateFile.url.path))
  }
}
