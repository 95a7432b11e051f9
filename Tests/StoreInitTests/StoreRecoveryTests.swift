import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

/// A recovery (moving a damaged store aside with its WAL, creating a new one) killed at any
/// point, a stale damage marker, and what a recovered store tells the steps after it.
@Suite("store.init recovery", .timeLimit(.minutes(10)))
struct StoreRecoveryTests {
  /// A books store whose last page of the file is damaged, with rows of `tags` committed only
  /// in its WAL, and a damage marker written for it; returns how many tags the WAL holds.
  private func damagedStoreWithRowsOnlyInItsWAL(at url: URL) async throws -> Int {
    let folder = url.deletingLastPathComponent()
    let source = folder.appendingPathComponent("source.sqlite")
    let connection = try SQLiteConnection(url: source, mode: .create)
    try connection.execute("PRAGMA journal_mode = WAL")
    for migration in StoreSchema.books.migrations { try connection.execute(migration.checkedSQL()) }
    try connection.execute("PRAGMA user_version = \(StoreSchema.books.latestVersion)")
    try connection.execute(
      """
      CREATE TABLE kept_in_wal (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
      INSERT INTO works (title) SELECT 'Work ' || i FROM n;
      PRAGMA wal_checkpoint(TRUNCATE);
      PRAGMA wal_autocheckpoint = 0;
      """)
    let rows = 25
    for row in 1...rows {
      try connection.run("INSERT INTO kept_in_wal (name) VALUES (?)", [.text("row \(row)")])
    }
    // Copied while the connection is open: closing it would checkpoint the WAL away.
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.copyItem(atPath: source.path + suffix, toPath: url.path + suffix)
    }
    try damageLastPage(of: url)
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.removeItem(atPath: source.path + suffix)
    }
    try StoreHandle(
      url: url, schema: .books, version: StoreSchema.books.latestVersion, isReadOnly: false,
      busyTimeout: .seconds(5)
    ).recordDamage("a query found the store malformed")
    return rows
  }

  private let store = storeManifest(#"{ "path": "library.sqlite" }"#)

  @Test(arguments: ["marker", "store", "-wal", "-shm", ".damaged", "done"])
  func aRecoveryKilledAtAnyPointLosesNoCommittedRowAndTheNextLaunchFinishesIt(point: String)
    async throws
  {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    let rows = try await damagedStoreWithRowsOnlyInItsWAL(at: url)
    let manifest = try folder.write("launch.json", store)

    let killed = try await TestHelper.run(["recover", manifest.path, point])
    #expect(killed.status == 128 + SIGKILL, "the helper is killed at '\(point)'")

    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .succeeded)
    let asides = try names(in: folder).filter {
      $0.hasPrefix("library.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
        && !$0.hasSuffix(".damaged")
    }
    let all = try names(in: folder)
    try #require(asides.count == 1, "moved aside once: \(all)")
    let aside = folder.file(asides[0])
    // The WAL went with its store: every row committed in it is in the copy.
    #expect(FileManager.default.fileExists(atPath: aside.path + "-wal"))
    let copy = try SQLiteConnection(url: aside, mode: .readOnly)
    #expect(try copy.integer("SELECT count(*) FROM kept_in_wal") == Int64(rows))
    #expect(FileManager.default.fileExists(atPath: aside.path + ".damaged"))
    // The new store is whole and empty, and nothing of the recovery is left at the path.
    #expect(
      try SQLiteConnection(url: url, mode: .readOnly).integer("SELECT count(*) FROM works") == 0)
    for leftover in ["-wal.damaged", ".damaged", ".recovering"] {
      #expect(!FileManager.default.fileExists(atPath: url.path + leftover), "\(leftover)")
    }

    // The next launch opens the new store as it is: no marker moves it aside.
    let (again, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(again.outcome == .succeeded)
    #expect(
      try names(in: folder).filter { $0.hasPrefix("library.sqlite.corrupt-") }.count
        == (try names(in: folder).filter { $0.hasPrefix(asides[0]) }.count))
    #expect(
      try names(in: folder).filter {
        $0.hasPrefix("library.sqlite.corrupt-") && !$0.hasPrefix(asides[0])
      }.isEmpty)
  }

  @Test func aStaleDamageMarkerNeverMovesAHealthyStoreAside() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    _ = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    try SQLiteConnection(url: url, mode: .readWrite).run(
      "INSERT INTO works (id, title) VALUES (1, 'Kindred')")
    // A marker of another file at this path (a store since replaced), one with no identity
    // (an older launch's) for a store that passes its integrity check, and an empty one.
    let said = [
      "store 1:2\nmalformed": " (malformed): it was written for another file at that path",
      "malformed": " (malformed): the store passes its integrity check",
      "": ": the store passes its integrity check",
    ]
    for (marker, reason) in said {
      try folder.write("library.sqlite.damaged", marker)
      let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
      #expect(report.outcome == .succeeded)
      #expect(
        try SQLiteConnection(url: url, mode: .readOnly).integer("SELECT count(*) FROM works") == 1)
      #expect(try names(in: folder).filter { $0.contains("corrupt") }.isEmpty)
      #expect(!FileManager.default.fileExists(atPath: url.path + ".damaged"))
      let note = try #require(report.step("store")?.notes.first)
      #expect(
        note == "removed the stale damage marker 'library.sqlite.damaged'\(reason), so it was kept")
    }
  }

  @Test func aLinkWhereTheDamageMarkerGoesIsNotFollowed() async throws {
    let folder = try ScratchFolder()
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    let opened = try #require(report.output(of: "store", as: StoreHandle.self))
    let precious = try folder.write("precious.txt", "the user's own words")
    try FileManager.default.createSymbolicLink(
      at: opened.damageMarker, withDestinationURL: precious)
    #expect(throws: (any Error).self) { try opened.recordDamage("malformed") }
    #expect(try String(contentsOf: precious, encoding: .utf8) == "the user's own words")
  }

  @Test func aStoreCreatedOrRecoveredInThisLaunchSaysSo() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    var handles: [StoreHandle] = []
    for _ in 0..<2 {
      let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
      handles += [report.output(of: "store", as: StoreHandle.self)].compactMap { $0 }
    }
    _ = try await damagedStoreWithRowsOnlyInItsWAL(at: folder.file("other.sqlite"))
    for suffix in ["", "-wal", "-shm", ".damaged"] {
      try? FileManager.default.removeItem(atPath: url.path + suffix)
      try FileManager.default.moveItem(
        atPath: folder.file("other.sqlite").path + suffix, toPath: url.path + suffix)
    }
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    handles += [report.output(of: "store", as: StoreHandle.self)].compactMap { $0 }
    try #require(handles.count == 3)
    #expect(handles.map(\.isNew) == [true, false, true])
    #expect(handles[2].movedAside?.lastPathComponent.hasPrefix("library.sqlite.corrupt-") == true)
  }
}
