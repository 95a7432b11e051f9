import Foundation
import LaunchOrchestrator
import SQLiteStore
import Testing

/// Many `orchestrate run` processes opening one store at the same moment, as app extensions
/// and a relaunched app do: every launch succeeds and the store is migrated exactly once.
@Suite("Store under concurrent processes", .timeLimit(.minutes(10)))
struct StoreConcurrencyTests {
  @Test(arguments: [0, 1])
  func twentyProcessesOpeningOneStoreAllSucceedAndOneMigrates(startVersion: Int) async throws {
    let folder = try TemporaryFolder()
    let store = folder.url.appendingPathComponent("library.sqlite")
    if startVersion > 0 {
      try makeRollbackJournalStore(at: store, version: startVersion)
    }
    let results = try await launchTwenty(in: folder)
    try expectAllSucceededAndOneMigrated(results, in: folder, from: startVersion)
  }

  /// The launches all read the old store's header while another connection holds its write
  /// lock, then each asks for that lock to switch the store to WAL: SQLite refuses them at once
  /// rather than wait, since each holds a read lock, and they must try again until it is free.
  @Test func twentyProcessesOpeningAnOldStoreAnotherWriterReservedAllWaitAndOneMigrates()
    async throws
  {
    let folder = try TemporaryFolder()
    let store = folder.url.appendingPathComponent("library.sqlite")
    try makeRollbackJournalStore(at: store, version: 1)
    let writer = try SQLiteConnection(url: store, mode: .readWrite)
    try writer.execute("BEGIN IMMEDIATE")
    let results = try await launchTwenty(in: folder) {
      try await Task.sleep(for: .seconds(2))
      try writer.execute("COMMIT")
    }
    try expectAllSucceededAndOneMigrated(results, in: folder, from: 1)
  }

  /// A books store at `version` in SQLite's default rollback-journal mode, as stores made
  /// before `store.init` switched them to WAL are.
  private func makeRollbackJournalStore(at store: URL, version: Int) throws {
    let connection = try SQLiteConnection(url: store, mode: .create)
    try connection.execute(StoreSchema.books.migrations[0].checkedSQL())
    try connection.execute("PRAGMA user_version = \(version)")
    #expect(try connection.journalMode() == "delete")
  }

  /// Runs twenty `orchestrate run` processes opening `library.sqlite` in `folder` at once,
  /// and `meanwhile` while they run.
  private func launchTwenty(
    in folder: TemporaryFolder, meanwhile: () async throws -> Void = {}
  ) async throws -> [CommandResult] {
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "busyTimeout": "60s" } } ] }"#
    )
    return try await withThrowingTaskGroup(of: CommandResult.self) { group in
      for index in 0..<20 {
        let report = folder.path("report-\(index).json")
        group.addTask {
          try await Orchestrate.run(["run", manifest, "--quiet", "--report", report])
        }
      }
      try await meanwhile()
      return try await group.reduce(into: []) { $0.append($1) }
    }
  }

  private func expectAllSucceededAndOneMigrated(
    _ results: [CommandResult], in folder: TemporaryFolder, from startVersion: Int
  ) throws {
    let store = folder.url.appendingPathComponent("library.sqlite")
    let reportPaths = (0..<20).map { folder.path("report-\($0).json") }
    #expect(results.filter { $0.status != 0 }.map(\.stderr) == [])
    let reports = try reportPaths.map {
      try LaunchReport(jsonText: String(contentsOfFile: $0, encoding: .utf8))
    }
    let migrations = reports.flatMap { $0.step("store")?.notes ?? [] }.filter {
      $0.hasPrefix("migrated the store")
    }
    #expect(migrations == ["migrated the store from version \(startVersion) to 4"])
    let connection = try SQLiteConnection(url: store, mode: .readOnly)
    #expect(try connection.userVersion() == 4)
    #expect(try connection.journalMode() == "wal")
  }
}
