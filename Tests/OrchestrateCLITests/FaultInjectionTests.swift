import Foundation
import LaunchOrchestrator
import SQLiteStore
import Testing

/// Misbehaving plugins, signals at the worst moments and unusable folders, through the real
/// binary: each ends with a clear error or a degraded launch, and nothing is lost.
@Suite("Fault injection", .timeLimit(.minutes(2)))
struct FaultInjectionTests {
  private func readReport(_ path: String) throws -> LaunchReport {
    try LaunchReport(jsonText: String(contentsOfFile: path, encoding: .utf8))
  }

  /// Waits until the run's output contains `text`, then does `action`.
  private func when(_ text: String, in stdout: URL, _ action: () -> Void) async throws {
    let deadline = Date().addingTimeInterval(60)
    while !((try? String(contentsOf: stdout, encoding: .utf8))?.contains(text) ?? false),
      Date() < deadline
    {
      try await Task.sleep(for: .milliseconds(2))
    }
    action()
  }

  /// Runs sqlite statements on a file through the system's sqlite3 library, via Python.
  private func sqlite(_ database: String, _ script: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", "-c",
      "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); r = c.executescript(sys.argv[2]) if sys.argv[3] == 'x' else print(c.execute(sys.argv[2]).fetchall()); c.commit()",
      database, script,
      script.uppercased().hasPrefix("SELECT") || script.uppercased().hasPrefix("PRAGMA")
        ? "q" : "x",
    ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "python3 failed on \(script)")
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test func fourStepsBlockingThreadsNeitherStallTheLaunchNorTheirTimeouts() async throws {
    let folder = try TemporaryFolder()
    let blockers = (1...4).map {
      #"{ "id": "block\#($0)", "plugin": "simulate", "timeout": "300ms", "params": { "duration": "3s", "blocking": true } }"#
    }
    let path = try folder.write(
      "blocking.json",
      #"{ "version": 1, "defaults": { "onFailure": "continue" }, "steps": [\#(blockers.joined(separator: ",")), { "id": "quick", "plugin": "simulate", "params": { "duration": "20ms" } }] }"#
    )
    let result = try await Orchestrate.run(["run", path, "--report", folder.path("r.json")])
    #expect(result.status == 0)
    let report = try readReport(folder.path("r.json"))
    #expect(report.outcome == .degraded)
    let quickEnd = try #require(report.step("quick")?.end)
    for id in (1...4).map({ "block\($0)" }) {
      let step = try #require(report.step(id))
      #expect(step.state == .timedOut)
      #expect(quickEnd < (try #require(step.end)))
    }
    // The launch ended at the timeouts, not when the blocked threads let go.
    #expect(report.duration < .seconds(3))
  }

  @Test func killingTheProcessDuringAQueueRewriteLeavesTheOldOrTheNewFile() async throws {
    for attempt in 0..<4 {
      let folder = try TemporaryFolder()
      let manifest = try folder.write(
        "queue.json",
        """
        { "version": 1, "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
          { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "enrichment.json" } }
        ] }
        """)
      _ = try await Orchestrate.run(["run", manifest, "--quiet"])
      _ = try sqlite(
        folder.path("library.sqlite"), "INSERT INTO works (id, title) VALUES (1, 'kept');")
      let entries = (0..<200_000).map { #"{"workId": \#($0 % 2 == 0 ? 1 : 2), "n": \#($0)}"# }
      let original = "[" + entries.joined(separator: ",") + "]"
      try folder.write("enrichment.json", original)
      let result = try await Orchestrate.run(["run", manifest]) { process, stdout in
        try await when("start      queue", in: stdout) {
          usleep(UInt32(attempt * 15_000))
          kill(process.processIdentifier, SIGKILL)
        }
      }
      #expect(result.status == 137 || result.status == 9 || result.status == 0)
      let after = try String(contentsOfFile: folder.path("enrichment.json"), encoding: .utf8)
      if after != original {
        let root = try JSONParser.parse(Array(after.utf8)).root
        let kept = try #require(root.elements)
        #expect(kept.count == 100_000)
        #expect(kept.allSatisfy { $0["workId"] == 1 })
      }
    }
  }

  @Test(arguments: [SIGINT, SIGKILL])
  func interruptingAStoreMigrationLeavesTheStoreIntact(signal: Int32) async throws {
    let folder = try TemporaryFolder()
    let database = folder.path("library.sqlite")
    // A store at version 2 with enough rows that creating version 3's indexes takes a while.
    let migrations = StoreSchema.books.migrations.prefix(2).map(\.sql).joined(separator: "\n")
    _ = try sqlite(database, migrations + "PRAGMA user_version = 2;")
    _ = try sqlite(
      database,
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)
      INSERT INTO library_entries (id, edition_id, added_at) SELECT i, i, i * 1.5 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)
      INSERT INTO works (id, title) SELECT i, 'Work ' || (600000 - i) FROM n;
      """)
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "integrityCheck": false } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest, "--report", folder.path("r.json")]) {
      process, stdout in
      try await when("Migrating to version 3", in: stdout) {
        kill(process.processIdentifier, signal)
      }
    }
    if signal == SIGINT {
      // The signal may land after the migration has committed: then the launch succeeded.
      let report = try readReport(folder.path("r.json"))
      if result.status == 130 {
        #expect(report.outcome == .cancelled)
      } else {
        #expect(result.status == 0)
        #expect(report.outcome == .succeeded)
        #expect(try sqlite(database, "PRAGMA user_version") == "[(3,)]")
      }
    }
    // One transaction: the store is at version 2 or 3, consistent, with every row.
    let version = try sqlite(database, "PRAGMA user_version")
    #expect(["[(2,)]", "[(3,)]"].contains(version))
    #expect(try sqlite(database, "PRAGMA integrity_check") == "[('ok',)]")
    #expect(try sqlite(database, "SELECT count(*) FROM library_entries") == "[(600000,)]")
    #expect(try sqlite(database, "SELECT count(*) FROM works") == "[(600000,)]")
  }

  @Test func aDataFolderThatCannotBeCreatedFailsClearlyAndTouchesNothing() async throws {
    let folder = try TemporaryFolder()
    // A file where the store's folder should be: creating the folder fails (also for root).
    try folder.write("data", "not a folder")
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "data/library.sqlite" } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest])
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix("Error: the launch failed: 'store' failed: "))
    #expect(try String(contentsOfFile: folder.path("data"), encoding: .utf8) == "not a folder")
  }
}
