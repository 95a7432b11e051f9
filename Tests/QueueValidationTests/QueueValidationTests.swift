import Foundation
import LaunchJSON
import LaunchOrchestrator
import PluginTestSupport
import QueueValidationPlugin
import SQLiteStore
import StoreInitPlugin
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("queue.validate", .timeLimit(.minutes(10)))
struct QueueValidationTests {
  private let manifest = queueManifest
  private let plugins = queuePlugins

  /// A store named where the queue goes is not moved aside as an unreadable queue: its WAL,
  /// with rows not yet in the database file, would stay behind.
  @Test func aStoreNamedAsTheQueueIsNotMovedAside() async throws {
    let folder = try await folderWithStore()
    let store = folder.file("library.sqlite")
    let connection = try SQLiteConnection(url: store, mode: .readWrite)
    try connection.run("INSERT INTO works (id, title) VALUES (3, 'Dawn')")
    let before = try Data(contentsOf: store)
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"],
          "params": { "path": "library.sqlite" } }
      ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(report.step("queue")?.state == .failed)
    #expect(
      report.step("queue")?.error
        == "the queue '\(store.path)' is a SQLite database, not a queue (is 'path' a store's path?); it was left as it was"
    )
    #expect(try Data(contentsOf: store) == before)
    #expect(try connection.integer("SELECT count(*) FROM works") == 3)
    #expect(
      !(try FileManager.default.contentsOfDirectory(atPath: folder.url.path))
        .contains { $0.contains("unreadable") })
  }

  /// A store its step's fallback opened may be another store than the one the queue's works
  /// live in: however old it is, its silence about a work drops nothing.
  @Test func keepsEveryEntryWhenTheStoreCameFromAFallback() async throws {
    let folder = try await folderWithStore()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "spare", "plugin": "store.init", "params": { "path": "spare.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    // The app's store from a newer build: store.init refuses it, and its fallback opens the
    // spare, which knows none of the works.
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try connection.run("PRAGMA user_version = 99")
    let text = #"[ { "workId": 1 }, { "workId": 2 }, { "workId": 3 } ]"#
    let queue = try folder.write("queue.json", text)
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" },
          "fallback": { "params": { "path": "spare.sqlite" } } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"],
          "params": { "path": "queue.json" } }
      ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(report.step("store")?.usedFallback == true)
    #expect(report.step("queue")?.state == .succeeded)
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    #expect(
      report.step("queue")?.notes == [
        "kept all 3 queue entries: the store 'spare.sqlite' was opened by a fallback in this launch (the step's own store failed) and may not be the store the app's data belongs to; a work missing from the store is no reason to drop an entry"
      ])
  }

  private func inode(_ url: URL) throws -> Int? {
    (try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? NSNumber)?
      .intValue
  }

  /// Without a `path`, the queue is `enrichment-queue.json` in the data folder: the
  /// contract's own example manifest gives none.
  @Test func withoutAPathTheQueueIsTheEnrichmentQueueInTheDataFolder() async throws {
    let folder = try await folderWithStore()
    let queue = try folder.write(
      "enrichment-queue.json", #"[ { "workId": 1 }, { "workId": 7 } ]"#)
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"] }
      ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(
      report.step("queue")?.notes == ["dropped 1 queue entry whose work no longer exists; kept 1"])
    #expect(try JSONParser.parse(Array(try Data(contentsOf: queue))).root == [["workId": 1]])
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
        $0.contains("queue") && $0 != ".queue.json.lock"
      } == ["queue.json"])
  }

  @Test func aStoreWithoutWorksFailsTheStepNamingItsSchemaAndKeepsTheQueue() async throws {
    let folder = try ScratchFolder()
    let music = manifest.replacingOccurrences(
      of: #""path": "library.sqlite""#, with: #""path": "library.sqlite", "schema": "music""#)
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "schema": "music" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    let text = #"[ { "workId": 1 } ]"#
    let queue = try folder.write("queue.json", text)
    // Written after the store became new, so judged.
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: queue.path)
    let report = try await launch(music, in: folder, plugins: plugins).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("queue")?.error
        == "the music store '\(folder.file("library.sqlite").path)' has no works (no such table: works); queue.validate checks the queue against a store with a 'works' table, such as the books schema's: depend on that store's step; the queue was left as it was"
    )
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
  }

  @Test func refusesAnEmptyQueuePathWhenTheManifestLoads() {
    #expect(
      loadProblems(manifest.replacingOccurrences(of: "queue.json", with: ""), plugins: plugins)
        == [
          "steps[1].params.path: 'path' cannot be empty; leave it out for 'enrichment-queue.json'."
        ])
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

  @Test func movesTheFileALinkedUnreadableQueueNamesAsideAndKeepsTheLink() async throws {
    let folder = try await folderWithStore()
    let real = try folder.write("shared/queue.json", "[{\"workId\": 1, \"v\": 1E400}]")
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("queue.json").path, withDestinationPath: "shared/queue.json")

    let first = try await launch(manifest, in: folder, plugins: plugins).report
    let second = try await launch(manifest, in: folder, plugins: plugins).report

    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("queue.json").path)
        == "shared/queue.json")
    #expect(!FileManager.default.fileExists(atPath: real.path))
    let aside = try #require(
      try FileManager.default.contentsOfDirectory(atPath: folder.file("shared").path).first {
        $0.hasPrefix("queue.json.unreadable-")
      })
    let asidePath = folder.file("shared/\(aside)").path
    #expect(
      try String(contentsOfFile: asidePath, encoding: .utf8) == "[{\"workId\": 1, \"v\": 1E400}]")
    #expect(
      first.step("queue")?.notes == [
        "the queue was unreadable (invalid JSON: the number 1E400 is out of range); moved it aside to \(asidePath)"
      ])
    #expect(second.outcome == .succeeded)
    #expect(
      second.step("queue")?.notes == [
        "no queue at \(folder.file("queue.json").path) (a symbolic link to a file that does not exist); nothing to validate"
      ])

    // The app appends through the link as before: the queue is created where the link leads,
    // beside what was moved aside, and the next launch validates it.
    struct Entry: Encodable { var workId: Int }
    try QueueFile(url: folder.file("queue.json")).append([Entry(workId: 1)])
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("queue.json").path)
        == "shared/queue.json")
    #expect(try JSONParser.parse(Array(try Data(contentsOf: real))).root == [["workId": 1]])
    let third = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(third.outcome == .succeeded)
    #expect(third.step("queue")?.notes == ["all 1 queue entries are valid"])
    #expect(try JSONParser.parse(Array(try Data(contentsOf: real))).root == [["workId": 1]])
    #expect(
      try String(contentsOfFile: asidePath, encoding: .utf8) == "[{\"workId\": 1, \"v\": 1E400}]")
  }
}

@Suite("queue.validate keeps what it does not drop", .timeLimit(.minutes(10)))
struct QueueValidationSafetyTests {
  private let manifest = queueManifest
  private let plugins = queuePlugins

  /// A store with works 1, 2 and 2^53 + 1 (which a `Double` cannot tell from 2^53).
  private func folderWithLargeWork() async throws -> ScratchFolder {
    try await folderWithStore(extraWorks: "(9007199254740993, 'Jazz')")
  }

  private func names(_ folder: ScratchFolder) throws -> [String] {
    // The write lock (`.queue.json.lock`, see SharedFile) stays: a writer may hold it any time.
    try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
      ($0.hasPrefix("queue") || $0.hasPrefix(".queue")) && $0 != ".queue.json.lock"
    }.sorted()
  }

  private func mode(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  @Test func keepsTheEntriesItKeepsByteForByte() async throws {
    let folder = try await folderWithLargeWork()
    let queue = try folder.write(
      "queue.json",
      """
      [
        {"workId": 1, "score": 1e-7, "big": 12345678901234567890, "ratio": 0.1000000000000000055511151231257827, "name": "caf\\u00e9"},
        { "workId": 7 },
      \t{"workId":9007199254740993,"attempts":3}   ,
        {"workId": 9007199254740992}
      ]

      """)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(
      report.step("queue")?.notes == ["dropped 2 queue entries whose work no longer exists; kept 2"]
    )
    #expect(
      try String(contentsOf: queue, encoding: .utf8) == """
        [
          {"workId": 1, "score": 1e-7, "big": 12345678901234567890, "ratio": 0.1000000000000000055511151231257827, "name": "caf\\u00e9"},
          {"workId":9007199254740993,"attempts":3}
        ]

        """)
    // The backup is gone once the new file is in place, and no temporary file is left.
    #expect(try names(folder) == ["queue.json"])
  }

  @Test(arguments: [
    (#"[{"workId":7},{"workId":1}]"#, #"[{"workId":1}]"#),
    (#"[{"workId":1}, {"workId":7}]"#, #"[{"workId":1}]"#),
    ("[ {\"workId\":7} ,\n {\"workId\":8} ]\n", "[ ]\n"),
    (#"[{"workId":1},{"workId":7},{"workId":8},{"workId":2}]"#, #"[{"workId":1},{"workId":2}]"#),
  ])
  func cutsOutOnlyTheDroppedEntries(queue: String, expected: String) async throws {
    let folder = try await folderWithLargeWork()
    let file = try folder.write("queue.json", queue)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(try String(contentsOf: file, encoding: .utf8) == expected)
  }

  @Test func failsOnARepeatedKeyNamingItsLineAndLeavesTheFileAlone() async throws {
    let folder = try await folderWithLargeWork()
    let text = """
      [
        {"workId": 1},
        {"workId": 7, "workId": 1}
      ]
      """
    let queue = try folder.write("queue.json", text)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("queue")?.error
        == "the queue '\(queue.path)' has the key 'workId' twice in one entry at line 3, column 17; which one counts is ambiguous, so the queue was left as it was; remove the repeated key and run again"
    )
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    #expect(try names(folder) == ["queue.json"])
  }

  @Test func keepsThePermissionsOfTheQueue() async throws {
    let folder = try await folderWithLargeWork()
    let queue = try folder.write("queue.json", #"[{"workId": 1}, {"workId": 7}]"#)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: queue.path)
    _ = try await launch(manifest, in: folder, plugins: plugins)
    #expect(try String(contentsOf: queue, encoding: .utf8) == #"[{"workId": 1}]"#)
    #expect(try mode(queue.path) == 0o600)
  }

  @Test(.enabled(if: geteuid() == 0, "only root may give a file away"))
  func keepsTheOwnerOfTheQueue() async throws {
    let folder = try await folderWithLargeWork()
    let queue = try folder.write("queue.json", #"[{"workId": 1}, {"workId": 7}]"#)
    try #require(chown(queue.path, 4242, 4343) == 0)
    _ = try await launch(manifest, in: folder, plugins: plugins)
    let attributes = try FileManager.default.attributesOfItem(atPath: queue.path)
    #expect(attributes[.ownerAccountID] as? Int == 4242)
    #expect(attributes[.groupOwnerAccountID] as? Int == 4343)
  }

  @Test func rewritesTheFileASymlinkNamesAndKeepsTheLink() async throws {
    let folder = try await folderWithLargeWork()
    let real = try folder.write("shared/real-queue.json", #"[{"workId": 7}, {"workId": 2}]"#)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("queue.json").path, withDestinationPath: "shared/real-queue.json")
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("queue.json").path)
        == "shared/real-queue.json")
    #expect(try String(contentsOf: real, encoding: .utf8) == #"[{"workId": 2}]"#)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.file("shared").path).sorted() == [
        ".real-queue.json.lock", "real-queue.json",
      ])
  }

  @Test func neverReplacesAnExistingBackup() async throws {
    let folder = try await folderWithLargeWork()
    let text = #"[{"workId": 1}, {"workId": 7}]"#
    let queue = try folder.write("queue.json", text)
    let backup = try folder.write("queue.json.bak", "the user's own backup")
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("queue")?.error
        == "cannot rewrite the queue '\(queue.path)': '\(backup.path)' already exists (the backup of an interrupted rewrite, or a file of yours), and it is never replaced; compare the two, keep what you need, remove '\(backup.path)' and run again"
    )
    #expect(try String(contentsOf: queue, encoding: .utf8) == text)
    #expect(try String(contentsOf: backup, encoding: .utf8) == "the user's own backup")
  }

  @Test func replacesABackupThatIsOnlyAnotherNameOfTheQueue() async throws {
    let folder = try await folderWithLargeWork()
    let queue = try folder.write("queue.json", #"[{"workId": 1}, {"workId": 7}]"#)
    // What a rewrite killed after making its backup, before replacing the queue, leaves.
    try #require(link(queue.path, folder.file("queue.json.bak").path) == 0)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(try String(contentsOf: queue, encoding: .utf8) == #"[{"workId": 1}]"#)
    #expect(try names(folder) == ["queue.json"])
  }

  @Test func refusesAFIFOInsteadOfWaitingOnIt() async throws {
    let folder = try await folderWithLargeWork()
    let fifo = folder.file("queue.json")
    try #require(mkfifo(fifo.path, 0o600) == 0)
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("queue")?.error
        == "cannot write '\(fifo.path)': it is a FIFO (named pipe), not a regular file, and replacing it could destroy it; name a regular file instead"
    )
  }
}
