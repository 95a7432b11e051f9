import Foundation
import LaunchOrchestrator
import PluginTestSupport
import StateRestorePlugin
import Synchronization
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The state file is the app's too: a save by another process between `state.restore`'s
/// judgement and its moving the file aside is read, never moved aside.
@Suite("state.restore shares its file with the app", .timeLimit(.minutes(10)))
struct StateSharedWithTheAppTests {
  private let manifest = """
    { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore" } ] }
    """

  @Test func aStateSavedByAnotherProcessAfterTheJudgementIsRestoredNotMovedAside() async throws {
    let folder = try ScratchFolder()
    let file = try folder.write(".state/launch-state.json", "{ \"scrollAnchor\": ")
    let saved = Mutex(false)
    SharedFile.beforeLocking.withLock {
      $0[file.path] = {
        guard !saved.withLock({ $0 }) else { return }
        saved.withLock { $0 = true }
        _ = try? TestHelper.run(["state-save", file.path, "page", "42"])
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: file.path) } }
    let report = try await launch(manifest, in: folder, plugins: [StateRestoreStep.self]).report
    #expect(saved.withLock { $0 })
    let state = try #require(report.output(of: "restore", as: RestoredState.self))
    #expect(state.value(for: "page", as: Int.self) == 42)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file(".state").path)
    #expect(!names.contains { $0.contains("unreadable") }, "\(names)")
    #expect(report.step("restore")?.notes == ["restored 1 value (page) from '\(file.path)'"])
  }

  @Test func aFileThatKeepsChangingIsLeftAsItIsAndTheStepSaysSo() async throws {
    let folder = try ScratchFolder()
    let file = try folder.write(".state/launch-state.json", "[]")
    SharedFile.beforeLocking.withLock {
      $0[file.path] = {
        // Replaced with another unusable file each time, as a broken saver would.
        try? Data("[\(UUID().uuidString.count)]".utf8 + Data(UUID().uuidString.utf8))
          .write(to: file, options: .atomic)
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: file.path) } }
    let report = try await launch(manifest, in: folder, plugins: [StateRestoreStep.self]).report
    #expect(
      report.step("restore")?.notes == [
        "the saved state '\(file.path)' changed 5 times while it was read (the app is saving it); started from empty state and left it as it was"
      ])
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file(".state").path)
    #expect(!names.contains { $0.contains("unreadable") })
  }

  @Test func anUnreadableFileTheAppKeepsLockedIsLeftAsItWasAndTheStepSaysSo() async throws {
    let folder = try ScratchFolder()
    let text = "{ \"scrollAnchor\": "
    let file = try folder.write(".state/launch-state.json", text)
    let report = try await TestHelper.whileLocking(["hold-lock", file.path, "3600"]) {
      try await launch(manifest, in: folder, plugins: [StateRestoreStep.self]).report
    }
    #expect(report.outcome == .succeeded)
    #expect(
      report.step("restore")?.notes == [
        "the saved state '\(file.path)' was unreadable (it is not valid JSON: unexpected end of file; expected a value at line 1, column 19), and stayed locked by another writer (the app?) for 5s; started from empty state and left it as it was"
      ])
    #expect(try String(contentsOf: file, encoding: .utf8) == text)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file(".state").path)
    #expect(!names.contains { $0.contains("unreadable") }, "\(names)")
  }

  /// The step's timeout comes while it waits for the app's lock to move an unreadable file
  /// aside: it stops waiting, and the file stays as it was, also once the lock is let go.
  @Test func aStepStoppedWhileItWaitsForTheLockNeverMovesTheFileAside() async throws {
    let folder = try ScratchFolder()
    let text = "{ \"scrollAnchor\": "
    let file = try folder.write(".state/launch-state.json", text)
    let timed = """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore", "timeout": "300ms" } ] }
      """
    let report = try await TestHelper.whileLocking(["hold-lock", file.path, "3600"]) {
      let report = try await launch(timed, in: folder, plugins: [StateRestoreStep.self]).report
      // Its code returned: no writer of this process waits for the lock any more.
      #expect(SharedFile.waitingWriters(of: file) == 0)
      return report
    }
    #expect(report.step("restore")?.state == .timedOut)
    // The holder was killed: the thread still blocked in `flock` takes the lock and lets go
    // of it, acting on nothing.
    while SharedFile.threadsBlocked(on: file) > 0 { try await Task.sleep(for: .milliseconds(5)) }
    #expect(try String(contentsOf: file, encoding: .utf8) == text)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file(".state").path)
    #expect(!names.contains { $0.contains("unreadable") }, "\(names)")
  }

  @Test func keysEqualOnlyAfterUnicodeNormalisationAreTwoKeysNotADuplicate() async throws {
    let folder = try ScratchFolder()
    let text = "{ \"caf\u{E9}\": 1, \"cafe\u{301}\": 2 }"
    let file = try folder.write(".state/launch-state.json", text)
    let report = try await launch(manifest, in: folder, plugins: [StateRestoreStep.self]).report
    #expect(try String(contentsOf: file, encoding: .utf8) == text, "left in place")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file(".state").path)
    #expect(!names.contains { $0.contains("unreadable") }, "\(names)")
    #expect(report.step("restore")?.notes.first?.hasPrefix("restored") == true)
  }

  /// The app saves from a cancelled task (a SwiftUI `.task` whose view went away, a scene
  /// going to the background) while another writer holds the lock for a moment: the save
  /// waits for the lock, as a launch's step would not, and the state is saved.
  @Test func anAppSaveFromACancelledTaskWaitsForTheLock() async throws {
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
