import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import Testing

@testable import StoreInitPlugin

@Suite("store.check", .timeLimit(.minutes(10)))
struct StoreCheckTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self, StoreCheckStep.self]

  private let launchWithCheck = """
    { "version": 1, "milestones": { "interactive": ["store"] }, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
      { "id": "check", "plugin": "store.check", "dependsOn": ["store"],
        "deferUntil": "interactive", "onFailure": "continue" }
    ] }
    """

  /// A books store with enough works to fill several pages, the last of them then damaged.
  private func storeWithADamagedTable(in folder: ScratchFolder) async throws -> URL {
    _ = try await launch(
      storeManifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: plugins)
    let url = folder.file("library.sqlite")
    do {
      let connection = try SQLiteConnection(url: url, mode: .readWrite)
      try connection.execute(
        """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
        INSERT INTO works (title) SELECT 'Work ' || i FROM n;
        """)
    }
    try damageLastPage(of: url)
    return url
  }

  @Test func passesAnIntactStore() async throws {
    let folder = try ScratchFolder()
    let (report, _) = try await launch(launchWithCheck, in: folder, plugins: plugins)
    #expect(report.outcome == .succeeded)
    #expect(report.step("check")?.notes == ["the store passed PRAGMA quick_check"])
  }

  @Test func opensADamagedStoreQuicklyThenTheCheckRecordsItAndTheNextLaunchRecovers()
    async throws
  {
    let folder = try ScratchFolder()
    let url = try await storeWithADamagedTable(in: folder)
    let bytes = try Data(contentsOf: url)

    let (first, _) = try await launch(launchWithCheck, in: folder, plugins: plugins)
    #expect(first.outcome == .degraded)
    #expect(first.step("store")?.state == .succeeded, "opening reads no table")
    let error = try #require(first.step("check")?.error)
    #expect(error.hasPrefix("the store '\(url.path)' is damaged (PRAGMA quick_check found: "))
    #expect(error.hasSuffix("); the next launch moves it aside and creates a new one"))
    let marker = folder.file("library.sqlite.damaged")
    let recorded = try String(contentsOf: marker, encoding: .utf8)
    // The marker names the file it was written for, then the finding.
    let identity = try #require(StoreHandle.identity(of: url))
    #expect(recorded.hasPrefix("store \(identity)\n"))
    let finding = String(recorded.drop { $0 != "\n" }.dropFirst())
    #expect(finding.hasPrefix("PRAGMA quick_check found: "))

    let (second, _) = try await launch(
      storeManifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: plugins)
    #expect(second.outcome == .succeeded)
    let asideName = try #require(
      try names(in: folder).first {
        $0.hasPrefix("library.sqlite.corrupt-") && !$0.contains("-wal") && !$0.contains("-shm")
          && !$0.hasSuffix(".damaged")
      })
    #expect(
      second.step("store")?.notes.first
        == "the store was damaged (recorded by an earlier launch: \(finding)); moved it aside to \(asideName) and created a new one"
    )
    #expect(try Data(contentsOf: folder.file(asideName)) == bytes)
    #expect(
      try String(contentsOf: folder.file(asideName + ".damaged"), encoding: .utf8) == recorded)
    #expect(!FileManager.default.fileExists(atPath: marker.path))
    let store = try SQLiteConnection(url: url, mode: .readOnly)
    #expect(try store.integer("SELECT count(*) FROM works") == 0)
  }

  @Test func stopsReadingTheStoreWhenCancelled() async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      storeManifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: plugins)
    try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite).execute(
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO works (title) SELECT 'Work ' || i FROM n;
      """)
    let store = StoreHandle(
      url: folder.file("library.sqlite"), schema: .books, version: 4, isReadOnly: false,
      busyTimeout: .seconds(1))
    var full = StoreCheckStep.Parameters()
    full.full = true
    let check = Task { [full] in
      // Cancelled before it starts: the first progress callback stops the check.
      withUnsafeCurrentTask { $0?.cancel() }
      return try await StoreCheckStep(parameters: full).run(
        StepContext(stepID: "check", manifestDirectory: folder.url, outputs: { [store] }))
    }
    await #expect(throws: CancellationError.self) { try await check.value }
  }

  @Test func integrityCheckAtOpenStillFindsTheDamageWhenAskedFor() async throws {
    let folder = try ScratchFolder()
    _ = try await storeWithADamagedTable(in: folder)
    let (report, _) = try await launch(
      storeManifest(#"{ "path": "library.sqlite", "integrityCheck": true }"#), in: folder,
      plugins: plugins)
    #expect(report.outcome == .succeeded)
    #expect(
      report.step("store")?.notes.first?.hasPrefix(
        "the store was damaged (integrity check failed: ")
        == true)
  }
}
