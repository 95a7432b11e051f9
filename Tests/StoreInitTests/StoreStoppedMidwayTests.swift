import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A launch stopped at a chosen point of a store's opening, in a process of its own
/// (`orchestrate-test-helper`): another launch recovering the store while it waits for the
/// folder's lock, or its attempt cancelled before the migrations commit.
@Suite("store.init stopped midway", .timeLimit(.minutes(10)))
struct StoreStoppedMidwayTests {
  private let store = storeManifest(#"{ "path": "library.sqlite" }"#)

  /// A books store at version 1 holding a work.
  private func storeAtVersion1(_ url: URL) throws {
    let connection = try SQLiteConnection(url: url, mode: .create)
    try connection.execute(StoreSchema.books.migrations[0].checkedSQL())
    try connection.execute("PRAGMA user_version = 1")
    try connection.run("INSERT INTO works (id, title) VALUES (1, 'Kindred')")
  }

  /// A launch that found the store damaged, while it waits for the folder's exclusive lock,
  /// lets another launch move the store aside and create a new one; it then opens that one,
  /// which holds nothing the app wrote before either, so it is new to this launch too.
  @Test func aStoreAnotherLaunchRecoveredWhileThisOneWaitedIsNewToThisOne() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    let (created, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    try #require(created.outcome == .succeeded)
    try damageFirstPage(of: url)
    let manifest = try folder.write("waiting.json", store)

    let waiting = try TestHelper.start(["pause-at", manifest.path, "recovering"])
    defer { if waiting.isRunning { kill(waiting.processIdentifier, SIGKILL) } }
    while !FileManager.default.fileExists(atPath: manifest.path + ".reached") {
      try #require(waiting.isRunning, "the helper stopped before it found the store damaged")
      try await Task.sleep(for: .milliseconds(5))
    }
    let (recovering, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    let recovered = try #require(recovering.output(of: "store", as: StoreHandle.self))
    #expect(recovered.isNew, "the launch that recovers the store knows it is new")
    let asides = try names(in: folder).filter { $0.hasPrefix("library.sqlite.corrupt-") }
    try #require(!asides.isEmpty, "the other launch moved the store aside")
    _ = FileManager.default.createFile(atPath: manifest.path + ".go", contents: nil)

    let output = try await helperOutput(waiting)
    #expect(output == "succeeded\nisNew: true\n", "its new store is new to the waiting launch")
    #expect(
      try names(in: folder).filter { $0.hasPrefix("library.sqlite.corrupt-") } == asides,
      "moved aside once, by the launch that recovered it")
  }

  /// An attempt cancelled (its timeout fired) after its last migration ran, before the
  /// transaction committed, commits nothing: the retry finds the store as it was.
  @Test func anAttemptCancelledBeforeItsMigrationsCommitLeavesTheStoreAsItWas() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try storeAtVersion1(url)
    let manifest = try folder.write("launch.json", store)

    let cancelled = try await TestHelper.run(["cancel-at", manifest.path, "migrated"])
    #expect(cancelled.status == 0)
    #expect(cancelled.stdout == "failed\nerror: cancelled\n")
    let kept = try SQLiteConnection(url: url, mode: .readOnly)
    #expect(try kept.userVersion() == 1)
    #expect(try kept.tableNames() == StoreSchema.books.tables(atVersion: 1))

    let (retried, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(retried.step("store")?.notes == ["migrated the store from version 1 to 4"])
    let migrated = try SQLiteConnection(url: url, mode: .readOnly)
    #expect(try migrated.integer("SELECT count(*) FROM works") == 1)
  }

  /// A launch killed (SIGKILL: a crash, the system's watchdog) after its migration ran and
  /// before it committed, on a store the app kept in a rollback journal, leaves a store that
  /// every connection reads as it was, a read-only one too (an extension's, a read-only
  /// launch's): the store went to WAL first, so the migration's pages were never written into
  /// the file, nor a hot journal left that only a writer could roll back.
  @Test func aLaunchKilledBeforeItsMigrationCommitsLeavesAStoreEveryConnectionReads()
    async throws
  {
    let folder = try ScratchFolder()
    let url = folder.file("app.sqlite")
    let store = storeManifest(#"{ "path": "app.sqlite", "migrations": "migrations/notes" }"#)
    try folder.write(
      "migrations/notes/001_create_notes.sql",
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);")
    let (created, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    try #require(created.outcome == .succeeded)
    do {
      let app = try SQLiteConnection(url: url, mode: .readWrite)
      try app.execute("PRAGMA journal_mode = DELETE")
      try app.run("INSERT INTO notes (text) VALUES ('kept')")
    }
    // More pages than SQLite's cache holds: in a rollback journal they would be spilled into
    // the file before the commit.
    try folder.write(
      "migrations/notes/002_fill.sql",
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
      INSERT INTO notes (text) SELECT printf('%0200d', i) FROM n;
      """)
    let manifest = try folder.write("killed.json", store)

    let killed = try await TestHelper.run(["recover", manifest.path, "migrated"])
    #expect(killed.status == 128 + SIGKILL, "the helper is killed before the commit")
    do {
      let reader = try SQLiteConnection(url: url, mode: .readOnly)
      #expect(try reader.userVersion() == 1)
      #expect(try reader.integer("SELECT count(*) FROM notes") == 1)
    }

    let (next, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(next.step("store")?.notes == ["migrated the store from version 1 to 2"])
    #expect(
      try SQLiteConnection(url: url, mode: .readOnly).integer("SELECT count(*) FROM notes")
        == 100_001)
  }

  /// What the helper printed, once it ended (on a thread of its own: the wait blocks).
  private func helperOutput(_ process: Process) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
      Thread {
        let data =
          (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        continuation.resume(returning: String(decoding: data, as: UTF8.self))
      }.start()
    }
  }
}
