import Foundation
import LaunchOrchestrator
import SQLiteStore
import Testing

/// Many `orchestrate run` processes opening one store at the same moment, as app extensions
/// and a relaunched app do: every launch succeeds and the store is migrated exactly once.
@Suite("Store under concurrent processes", .timeLimit(.minutes(2)))
struct StoreConcurrencyTests {
  @Test(arguments: [0, 1])
  func twentyProcessesOpeningOneStoreAllSucceedAndOneMigrates(startVersion: Int) async throws {
    let folder = try TemporaryFolder()
    let store = folder.url.appendingPathComponent("library.sqlite")
    if startVersion > 0 {
      let connection = try SQLiteConnection(url: store, mode: .create)
      try connection.execute(StoreSchema.books.migrations[0].sql)
      try connection.execute("PRAGMA user_version = \(startVersion)")
    }
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "busyTimeout": "60s" } } ] }"#
    )
    let reportPaths = (0..<20).map { folder.path("report-\($0).json") }
    let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
      for report in reportPaths {
        group.addTask {
          try await Orchestrate.run(["run", manifest, "--quiet", "--report", report])
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }

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
