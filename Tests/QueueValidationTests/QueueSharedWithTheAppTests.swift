import Foundation
import LaunchJSON
import LaunchOrchestrator
import PluginTestSupport
import QueueValidationPlugin
import SQLiteStore
import StoreInitPlugin
import Synchronization
import Testing

/// The queue is the app's too: a second process appends to it (through `QueueFile`) while
/// `queue.validate` judges and rewrites it, and a store created in this launch judges nothing.
@Suite("queue.validate shares its queue with the app", .timeLimit(.minutes(10)))
struct QueueSharedWithTheAppTests {
  private let manifest = queueManifest
  private let plugins = queuePlugins

  /// The `n` of every entry with work `workId`, in the queue's order.
  private func entries(_ queue: URL, workId: Int) throws -> [Int] {
    let root = try JSONParser.parse(Array(try Data(contentsOf: queue))).root
    return (root.elements ?? []).compactMap { entry in
      guard entry["workId"]?.exactInteger(Int64.self) == Int64(workId) else { return nil }
      return entry["n"]?.exactInteger(Int.self)
    }
  }

  @Test func anEntryAnotherProcessAppendsBetweenTheJudgementAndTheRewriteIsKept() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", #"[ { "workId": 1, "n": 100 }, { "workId": 7 } ]"#)
    // The moment the step has judged the queue and is about to rewrite it, the app (a process
    // of its own) appends an entry.
    let appended = Mutex(false)
    SharedFile.beforeLocking.withLock {
      $0[queue.path] = {
        guard !appended.withLock({ $0 }) else { return }
        appended.withLock { $0 = true }
        _ = try? TestHelper.run(["queue-append", queue.path, "0", "1", "2"])
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: queue.path) } }
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(appended.withLock { $0 })
    #expect(report.outcome == .succeeded)
    #expect(try entries(queue, workId: 2) == [0], "the appended entry is kept")
    #expect(try entries(queue, workId: 1) == [100])
    #expect(try entries(queue, workId: 7).isEmpty)
    #expect(
      report.step("queue")?.notes == ["dropped 1 queue entry whose work no longer exists; kept 2"]
    )
  }

  @Test func aQueueThatKeepsChangingIsLeftAsItIsAndTheStepSaysSo() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", #"[ { "workId": 7 } ]"#)
    let next = Mutex(0)
    SharedFile.beforeLocking.withLock {
      $0[queue.path] = {
        let n = next.withLock { value in
          defer { value += 1 }
          return value
        }
        _ = try? TestHelper.run(["queue-append", queue.path, "\(n)", "1", "1"])
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: queue.path) } }
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(
      report.step("queue")?.notes == [
        "the queue changed 5 times while it was validated (the app is writing it); left it as it was, to be validated at the next launch"
      ])
    #expect(try entries(queue, workId: 1) == [0, 1, 2, 3, 4])
    #expect(try JSONParser.parse(Array(try Data(contentsOf: queue))).root.elements?.count == 6)
  }

  @Test func everyEntryAProcessAppendsDuringManyRewritesIsKept() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", "[]")
    // The app appends 400 entries of work 1 and 400 of a missing work, one pair at a time,
    // while launches keep dropping the missing ones.
    let writer = try TestHelper.start(["queue-append", queue.path, "0", "400", "1", "999"])
    var launches = 0
    while writer.isRunning || launches == 0 {
      let report = try await launch(manifest, in: folder, plugins: plugins).report
      // The app's writer and the launch's take turns: neither fails the other, and no entry
      // is lost, checked below.
      #expect(report.outcome == .succeeded, "\(report.step("queue")?.error ?? "")")
      launches += 1
    }
    writer.waitUntilExit()
    #expect(writer.terminationStatus == 0)
    _ = try await launch(manifest, in: folder, plugins: plugins)
    #expect(try entries(queue, workId: 1) == Array(0..<400), "after \(launches) launches")
    #expect(try entries(queue, workId: 999).isEmpty)
  }

  @Test func theRewriteTakesItsTurnWhileTheAppTakesTheLockAgainTheMomentItLetsGo()
    async throws
  {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", #"[ { "workId": 1, "n": 100 }, { "workId": 7 } ]"#)
    // The app (a process of its own) holds the queue's lock 5 ms at a time and takes it again
    // at once, throughout the launch.
    let report = try await TestHelper.whileLocking(["churn-lock", queue.path, "5000"]) {
      try await launch(manifest, in: folder, plugins: plugins).report
    }
    #expect(report.outcome == .succeeded, "\(report.step("queue")?.error ?? "")")
    #expect(
      report.step("queue")?.notes == ["dropped 1 queue entry whose work no longer exists; kept 1"]
    )
    #expect(try entries(queue, workId: 1) == [100])
    #expect(try entries(queue, workId: 7).isEmpty)
  }

  /// A queue the step would rewrite, and one it would move aside.
  @Test(arguments: [#"[ { "workId": 1, "n": 100 }, { "workId": 7 } ]"#, #"[ { "workId": "#])
  func aLockTheAppHoldsThroughoutLeavesTheQueueAsItWasAndTheStepSaysSo(text: String)
    async throws
  {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", text)
    let report = try await TestHelper.whileLocking(["hold-lock", queue.path, "3600"]) {
      try await launch(manifest, in: folder, plugins: plugins).report
    }
    #expect(report.outcome == .succeeded, "\(report.step("queue")?.error ?? "")")
    #expect(
      report.step("queue")?.notes == [
        "the queue stayed locked by another writer (the app?) for 5s; left it as it was, to be validated at the next launch"
      ])
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(!names.contains { $0.hasPrefix("queue.json.") }, "\(names)")
  }

  @Test func keepsEveryEntryWhenTheStoreWasCreatedInThisLaunch() async throws {
    let folder = try ScratchFolder()
    let text = #"[ { "workId": 1 }, { "workId": 7 } ]"#
    let queue = try folder.write("queue.json", text)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    #expect(
      report.step("queue")?.notes == [
        "kept all 2 queue entries: the store was created or given its tables in this launch (or a launch beside it), so it does not know what the app wrote before; a work missing from the store is no reason to drop an entry"
      ])
  }

  @Test func keepsAQueueOlderThanTheStoreInLaterLaunchesAndJudgesItOnceTheAppWritesIt()
    async throws
  {
    let folder = try ScratchFolder()
    let text = #"[ { "workId": 1 }, { "workId": 7 } ]"#
    let queue = try folder.write("queue.json", text)
    let first = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(first.step("queue")?.notes.first?.hasPrefix("kept all 2 queue entries: ") == true)
    // The app fills the new store: the work of the first entry, none of the second.
    try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite).run(
      "INSERT INTO works (id, title) VALUES (1, 'Kindred')")

    // The queue is older than the store, in this launch as in the one that created it.
    let second = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(second.outcome == .succeeded)
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    let note = try #require(second.step("queue")?.notes.first)
    #expect(note.hasPrefix("kept all 2 queue entries: the queue was last changed at "), "\(note)")
    #expect(
      note.hasSuffix(
        " (created, recovered or given its tables), so the store does not know what the app wrote before; a work missing from the store is no reason to drop an entry"
      ), "\(note)")

    // Once the app has written the queue since, it is judged against the store.
    struct Entry: Encodable { var workId: Int }
    try QueueFile(url: queue).append([Entry(workId: 2)])
    let third = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(third.outcome == .succeeded)
    #expect(try JSONParser.parse(Array(try Data(contentsOf: queue))).root == [["workId": 1]])
    #expect(
      third.step("queue")?.notes == [
        "dropped 2 queue entries whose work no longer exists; kept 1"
      ])
  }

  @Test func appendsKeepingEveryByteAlreadyInTheQueue() throws {
    let folder = try ScratchFolder()
    let text = "[\n  { \"workId\": 1, \"x\": 1e-7 }\n]\n"
    let url = try folder.write("queue.json", text)
    struct Entry: Encodable { var workId: Int }
    try QueueFile(url: url).append([Entry(workId: 2)])
    #expect(
      try String(contentsOf: url, encoding: .utf8)
        == "[\n  { \"workId\": 1, \"x\": 1e-7 },\n  {\"workId\":2}\n]\n")
    let fresh = folder.file("new.json")
    try QueueFile(url: fresh).append([Entry(workId: 3)])
    #expect(try JSONParser.parse(Array(try Data(contentsOf: fresh))).root == [["workId": 3]])
  }
  @Test func aFIFOWhereTheQueuesLockGoesIsRefusedAsAFolderIs() throws {
    let folder = try ScratchFolder()
    let text = #"[ { "workId": 1 } ]"#
    let queue = try folder.write("queue.json", text)
    // It opens, and on some systems (macOS) `flock` locks nothing on one.
    let lock = SharedFile(url: queue).lockURL
    #expect(mkfifo(lock.path, 0o600) == 0)
    struct Entry: Encodable { var workId: Int }
    #expect(
      throws: StepFailure(
        "'\(queue.path)' cannot be locked to write it: its lock file '\(lock.path)' is a FIFO (named pipe), not a file (move it away), so this writer could not take its turn with the others; it was left as it was"
      )
    ) { try QueueFile(url: queue).append([Entry(workId: 2)]) }
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
  }

  @Test func aFolderWhereTheQueuesLockGoesLeavesTheQueueAsItWasForTheStepAndTheApp()
    async throws
  {
    let folder = try await folderWithStore()
    let text = #"[ { "workId": 1 }, { "workId": 7 } ]"#
    let queue = try folder.write("queue.json", text)
    // Without a lock to take, the app's append could land between the step's last check and
    // its rewrite, and be lost.
    let lock = SharedFile(url: queue).lockURL
    try FileManager.default.createDirectory(at: lock, withIntermediateDirectories: false)
    let problem =
      "'\(queue.path)' cannot be locked to write it: its lock file '\(lock.path)' is a folder, not a file (move it away), so this writer could not take its turn with the others; it was left as it was"
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.step("queue")?.error == problem)
    struct Entry: Encodable { var workId: Int }
    #expect(throws: StepFailure(problem)) { try QueueFile(url: queue).append([Entry(workId: 2)]) }
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
  }
}
