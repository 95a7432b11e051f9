import Foundation
import LaunchOrchestrator
import PluginTestSupport
import QueueValidationPlugin
import SQLiteStore
import StoreInitPlugin
import Testing

@Suite("queue.validate", .timeLimit(.minutes(1)))
struct QueueValidationTests {
  private let manifest = """
    { "version": 1, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
      { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } }
    ] }
    """
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self, QueueValidationStep.self]

  /// A store with works 1 and 2.
  private func folderWithStore() async throws -> ScratchFolder {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try connection.run("INSERT INTO works (id, title) VALUES (1, 'Kindred'), (2, 'Beloved')")
    return folder
  }

  private func inode(_ url: URL) throws -> Int? {
    (try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? NSNumber)?
      .intValue
  }

  @Test func dropsEntriesWhoseWorkIsGoneAndReplacesTheFileAtomically() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write(
      "queue.json",
      #"[ { "workId": 1, "source": "isbn" }, { "workId": 7 }, { "workId": 2, "attempts": 3 }, { "workId": 9 } ]"#
    )
    let before = try inode(queue)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(
      report.step("queue")?.notes == ["dropped 2 queue entries whose work no longer exists; kept 2"]
    )
    let kept = try JSONParser.parse(Array(try Data(contentsOf: queue))).root
    #expect(kept == [["workId": 1, "source": "isbn"], ["workId": 2, "attempts": 3]])
    // Replaced by a rename, not rewritten in place: a crash leaves the old or the new file.
    #expect(try inode(queue) != before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
        $0.contains("queue")
      } == ["queue.json"])
  }

  @Test func leavesAValidQueueUntouched() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write("queue.json", #"[ { "workId": 2 } ]"#)
    let before = try inode(queue)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.step("queue")?.notes == ["all 1 queue entries are valid"])
    #expect(try inode(queue) == before)
  }

  @Test func treatsAMissingQueueAsEmpty() async throws {
    let folder = try await folderWithStore()
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(report.step("queue")?.notes.first?.hasPrefix("no queue at ") == true)
    #expect(!FileManager.default.fileExists(atPath: folder.file("queue.json").path))
  }

  @Test(arguments: [#"{ "workId": 1 "#, #"{ "entries": [] }"#, #"[ { "id": 1 } ]"#])
  func movesAnUnreadableQueueAsideWithItsBytes(contents: String) async throws {
    let folder = try await folderWithStore()
    try folder.write("queue.json", contents)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    let aside = try #require(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first {
        $0.hasPrefix("queue.json.unreadable-")
      })
    #expect(try String(contentsOf: folder.file(aside), encoding: .utf8) == contents)
    #expect(report.step("queue")?.notes.first?.hasSuffix("moved it aside to \(aside)") == true)
    #expect(!FileManager.default.fileExists(atPath: folder.file("queue.json").path))
  }
}
