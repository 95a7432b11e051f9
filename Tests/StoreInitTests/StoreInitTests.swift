import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

@Suite("store.init", .timeLimit(.minutes(10)))
struct StoreInitTests {
  private func manifest(_ params: String) -> String {
    #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": \#(params) } ] }"#
  }

  private func open(_ url: URL) throws -> SQLiteConnection {
    try SQLiteConnection(url: url, mode: .readWrite)
  }

  /// Creates a books store at schema version 1 and returns a connection to it.
  private func storeAtVersion1(_ url: URL) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(url: url, mode: .create)
    try connection.execute(StoreSchema.books.migrations[0].checkedSQL())
    try connection.execute("PRAGMA user_version = 1")
    return connection
  }

  /// A books store with an author, whose last change is still in its WAL (as a crash leaves
  /// it), and whose first page is then damaged; the WAL does not hold that page.
  private func damagedStoreWithLiveWAL(at url: URL) throws {
    let folder = url.deletingLastPathComponent()
    let source = folder.appendingPathComponent("source.sqlite")
    let connection = try SQLiteConnection(url: source, mode: .create)
    try connection.execute("PRAGMA journal_mode = WAL")
    for migration in StoreSchema.books.migrations { try connection.execute(migration.checkedSQL()) }
    try connection.execute("PRAGMA user_version = \(StoreSchema.books.latestVersion)")
    try connection.execute("INSERT INTO authors (name) VALUES ('Ursula K. Le Guin')")
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    try connection.execute("PRAGMA wal_autocheckpoint = 0")
    try connection.execute("UPDATE authors SET name = 'Octavia E. Butler'")
    // Copied while the connection is open: closing it would checkpoint the WAL away.
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.copyItem(
        atPath: source.path + suffix, toPath: url.path + suffix)
    }
    try damageFirstPage(of: url)
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.removeItem(atPath: source.path + suffix)
    }
  }

  @Test func createsAFreshStoreAtTheLatestVersionInWALMode() async throws {
    let folder = try ScratchFolder()
    let (report, events) = try await launch(
      manifest(#"{ "path": "data/library.sqlite", "createFolders": true }"#), in: folder,
      plugins: [StoreInitStep.self])
    #expect(report.outcome == .succeeded)
    let connection = try open(folder.file("data/library.sqlite"))
    #expect(try connection.userVersion() == StoreSchema.books.latestVersion)
    #expect(try connection.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
    let tables = try connection.query(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    ) {
      $0.text(0) ?? ""
    }
    #expect(tables == ["authors", "editions", "library_entries", "scans", "works"])
    let progress = events.compactMap { event -> String? in
      if case .progress(_, _, let message) = event.kind { return message }
      return nil
    }
    #expect(
      progress == [
        "Migrating to version 1: create the library...",
        "Migrating to version 2: track scanned covers...",
        "Migrating to version 3: index the library for paging...",
        "Migrating to version 4: index library entries by edition...", "store at version 4",
      ])
    #expect(report.step("store")?.notes.last == "migrated the store from version 0 to 4")
  }

  @Test(arguments: ["-shm", "-wal"])
  func aFIFOOrAFolderWhereSQLiteKeepsTheWALOrSharedMemoryIsNamed(suffix: String) async throws {
    let folder = try ScratchFolder()
    let params = #"{ "path": "library.sqlite" }"#
    _ = try await launch(manifest(params), in: folder, plugins: [StoreInitStep.self])
    let url = folder.file("library.sqlite")
    let stranger = url.path + suffix
    try? FileManager.default.removeItem(atPath: stranger)
    if suffix == "-shm" {
      // With a WAL beside it, as a store the app has open has.
      #expect(FileManager.default.createFile(atPath: url.path + "-wal", contents: Data()))
      #expect(mkfifo(stranger, 0o600) == 0)
    } else {
      try FileManager.default.createDirectory(atPath: stranger, withIntermediateDirectories: false)
    }
    let (report, _) = try await launch(manifest(params), in: folder, plugins: [StoreInitStep.self])
    let what = suffix == "-shm" ? "shared memory" : "write-ahead log"
    let type = suffix == "-shm" ? "a FIFO (named pipe)" : "a folder"
    #expect(
      report.step("store")?.error
        == "'\(stranger)', where SQLite keeps the \(what) of the store '\(url.path)', is \(type), not a file, so SQLite cannot open the store; it holds nothing of the store's: move it away, and the store opens"
    )
    // Moved away, as the error says, the store opens as it was.
    try FileManager.default.removeItem(atPath: stranger)
    let (again, _) = try await launch(manifest(params), in: folder, plugins: [StoreInitStep.self])
    #expect(again.outcome == .succeeded)
  }

  @Test func opensAnUpToDateStoreWithoutMigrating() async throws {
    let folder = try ScratchFolder()
    let params = #"{ "path": "library.sqlite" }"#
    _ = try await launch(manifest(params), in: folder, plugins: [StoreInitStep.self])
    let (report, _) = try await launch(manifest(params), in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.notes == [])
  }

  @Test func migratesAStoreFromAnOlderVersionKeepingItsData() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try storeAtVersion1(url).run("INSERT INTO authors (name) VALUES ('Ursula K. Le Guin')")
    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.notes == ["migrated the store from version 1 to 4"])
    let connection = try open(url)
    #expect(try connection.userVersion() == 4)
    #expect(
      try connection.query("SELECT name FROM authors") { $0.text(0) } == ["Ursula K. Le Guin"])
    #expect(try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'scans'") == 1)
  }

  @Test func waitsForAnotherWriterUpToItsBusyTimeout() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    // A store behind the latest version: opening it for the migration needs the write lock.
    _ = try storeAtVersion1(url)
    func params(busyTimeout: String) -> String {
      manifest(#"{ "path": "library.sqlite", "busyTimeout": "\#(busyTimeout)" }"#)
    }

    // The other writer keeps the lock until the launch is over.
    let holder = LockingWriter(url: url)
    defer { holder.release() }
    try await holder.waitUntilLocked()
    let (gaveUp, _) = try await launch(
      params(busyTimeout: "100ms"), in: folder, plugins: [StoreInitStep.self])
    holder.release()
    try await holder.waitUntilDone()
    #expect(gaveUp.outcome == .failed)
    #expect(
      gaveUp.step("store")?.error
        == "the store '\(url.path)' stayed locked by another connection for all of 'busyTimeout' (100ms); close the other writer, or raise 'busyTimeout'"
    )
    #expect(try open(url).userVersion() == 1, "nothing was changed")

    // The other writer lets go half a second after the step starts, well within its timeout.
    let writer = LockingWriter(url: url)
    defer { writer.release() }
    try await writer.waitUntilLocked()
    let (waited, _) = try await launch(
      params(busyTimeout: "30s"), in: folder, plugins: [StoreInitStep.self]
    ) { event in
      if case .started(step: "store", _) = event.kind { writer.release(after: 0.5) }
    }
    try await writer.waitUntilDone()
    #expect(waited.outcome == .succeeded)
    #expect((waited.step("store")?.duration ?? .zero) >= .milliseconds(450))
    #expect(try open(url).userVersion() == StoreSchema.books.latestVersion)
  }

  /// A writer holding only the reserved lock of a rollback-journal store lets the launch read
  /// it, but SQLite refuses the launch's switch to WAL at once, without waiting, because the
  /// launch holds a read lock while it asks for the write lock: the launch lets go and tries
  /// again until its busy timeout is over.
  @Test func waitsForAWriterThatReservedARollbackJournalStoreInsteadOfFailingAtOnce()
    async throws
  {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    _ = try storeAtVersion1(url)
    #expect(try open(url).journalMode() == "delete")
    func params(busyTimeout: String) -> String {
      manifest(#"{ "path": "library.sqlite", "busyTimeout": "\#(busyTimeout)" }"#)
    }

    let holder = LockingWriter(url: url, begin: "BEGIN IMMEDIATE")
    defer { holder.release() }
    try await holder.waitUntilLocked()
    let (gaveUp, _) = try await launch(
      params(busyTimeout: "300ms"), in: folder, plugins: [StoreInitStep.self])
    holder.release()
    try await holder.waitUntilDone()
    #expect(gaveUp.outcome == .failed)
    #expect(
      gaveUp.step("store")?.error
        == "the store '\(url.path)' stayed locked by another connection for all of 'busyTimeout' (300ms); close the other writer, or raise 'busyTimeout'"
    )
    #expect(
      (gaveUp.step("store")?.duration ?? .zero) >= .milliseconds(300),
      "the message says it waited for all of 'busyTimeout'")
    #expect(try open(url).userVersion() == 1, "nothing was changed")

    let writer = LockingWriter(url: url, begin: "BEGIN IMMEDIATE")
    defer { writer.release() }
    try await writer.waitUntilLocked()
    let (waited, _) = try await launch(
      params(busyTimeout: "30s"), in: folder, plugins: [StoreInitStep.self]
    ) { event in
      if case .started(step: "store", _) = event.kind { writer.release(after: 0.5) }
    }
    try await writer.waitUntilDone()
    #expect(waited.outcome == .succeeded)
    #expect(waited.step("store")?.notes == ["migrated the store from version 1 to 4"])
    #expect(try open(url).userVersion() == StoreSchema.books.latestVersion)
    #expect(try open(url).journalMode() == "wal")
  }

  /// A books store at version 1 with one work at `url`, and the rollback journal a writer
  /// stopped mid-transaction left beside it (as a crash leaves the files): a hot journal,
  /// which a read-only connection cannot roll back.
  private func storeWithHotJournal(at url: URL) throws {
    let source = url.deletingLastPathComponent().appendingPathComponent(
      "source-\(UUID().uuidString).sqlite")
    let writer = try storeAtVersion1(source)
    try writer.run("INSERT INTO works (id, title) VALUES (1, 'Kept')")
    // A small cache spills the transaction's pages into the file before it commits.
    try writer.execute("PRAGMA cache_size = 2")
    try writer.execute("BEGIN")
    try writer.execute(
      """
      WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO works (id, title) SELECT i, 'Never committed ' || i FROM n
      """)
    for suffix in ["", "-journal"] {
      try FileManager.default.copyItem(atPath: source.path + suffix, toPath: url.path + suffix)
    }
    try writer.execute("ROLLBACK")
    for suffix in ["", "-journal"] {
      try? FileManager.default.removeItem(atPath: source.path + suffix)
    }
    try #require(FileManager.default.fileExists(atPath: url.path + "-journal"))
  }

  private let rolledBack =
    "rolled back the transaction a stopped writer left in 'library.sqlite-journal'; it was never committed"

  /// A writer stopped mid-transaction in a rollback journal (the app, on a store it keeps in
  /// one) leaves a hot journal, which a read-only connection cannot roll back: the launch
  /// rolls it back with a read-write one, as any writer's first read would, and goes on.
  @Test func rollsBackWhatAWriterStoppedInARollbackJournalLeftAndOpensTheStore() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try storeWithHotJournal(at: url)
    let journal = try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal"))

    let (readOnly, _) = try await launch(
      manifest(#"{ "path": "library.sqlite", "readOnly": true }"#), in: folder,
      plugins: [StoreInitStep.self])
    #expect(
      readOnly.step("store")?.error
        == "the store '\(url.path)' has a transaction that a stopped writer never committed in 'library.sqlite-journal', which only a read-write connection can roll back; nothing was changed in read-only mode, and the next launch that opens it read-write rolls it back"
    )
    #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + "-journal")) == journal)

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded, "\(report.step("store")?.error ?? "")")
    #expect(report.step("store")?.notes.first == rolledBack)
    #expect(try open(url).integer("SELECT count(*) FROM works") == 1)
    #expect(try open(url).userVersion() == StoreSchema.books.latestVersion)
  }

  /// A damage marker an earlier launch left beside such a store is judged after the
  /// rollback: the store passes its integrity check, so it is kept, not moved aside for what
  /// a read-only connection could not read, its journal lost with it.
  @Test func judgesADamageMarkerAfterRollingBackWhatAStoppedWriterLeft() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try storeWithHotJournal(at: url)
    try folder.write("library.sqlite.damaged", "malformed")

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded, "\(report.step("store")?.error ?? "")")
    #expect(report.step("store")?.notes.first == rolledBack)
    #expect(try names(in: folder).filter { $0.contains("corrupt") }.isEmpty)
    #expect(try open(url).integer("SELECT count(*) FROM works") == 1)
  }

  /// The journal is looked for where SQLite keeps it: beside the target of a store's link.
  @Test func rollsBackTheJournalBesideTheTargetOfALinkedStore() async throws {
    let folder = try ScratchFolder()
    try FileManager.default.createDirectory(
      at: folder.file("real"), withIntermediateDirectories: true)
    let real = folder.file("real/library.sqlite")
    try storeWithHotJournal(at: real)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("library.sqlite").path, withDestinationPath: "real/library.sqlite")

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded, "\(report.step("store")?.error ?? "")")
    #expect(report.step("store")?.notes.first == rolledBack)
    #expect(try open(real).integer("SELECT count(*) FROM works") == 1)
  }

  /// A file at the journal's name that is no journal, which SQLite would take for the
  /// store's and delete, is neither taken for one nor touched: the step names it.
  @Test func leavesAFileNamedLikeTheJournalThatIsNoJournalAloneAndNamesIt() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    _ = try storeAtVersion1(url)
    let stranger = try folder.write("library.sqlite-journal", "my notes, not a journal")

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(
      report.step("store")?.error
        == "'library.sqlite-journal' beside the store '\(url.path)' is not a SQLite journal, yet SQLite takes a file by that name for the store's and would delete it; move it elsewhere, and the store opens"
    )
    #expect(try String(contentsOf: stranger, encoding: .utf8) == "my notes, not a journal")
    try FileManager.default.removeItem(at: stranger)
    #expect(try open(url).userVersion() == 1, "the store as it was")
  }

  @Test func movesADamagedStoreAsideWithItsLiveWALByteForByteAndStartsAnew() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try damagedStoreWithLiveWAL(at: url)
    let files = ["", "-wal", "-shm"]
    let before = try files.map { try Data(contentsOf: URL(fileURLWithPath: url.path + $0)) }

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded)
    let asideName = try #require(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).first {
        $0.hasPrefix("library.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
      })
    let after = try files.map { try Data(contentsOf: folder.file(asideName + $0)) }
    #expect(after == before, "the store, its WAL and its -shm are kept as they were found")
    let note = try #require(report.step("store")?.notes.first)
    #expect(note.hasPrefix("the store was damaged (database disk image is malformed"))
    #expect(note.hasSuffix("moved it aside to \(asideName) and created a new one"))
    #expect(try open(url).userVersion() == 4)
    #expect(try open(url).integer("SELECT count(*) FROM authors") == 0)
  }

  /// A store the app reaches through its link (into a shared container, say) is recovered
  /// where SQLite keeps it with its WAL: the link stays the app's and leads to the new store.
  @Test func recoversADamagedStoreBesideTheTargetOfItsLinkAndKeepsTheLink() async throws {
    let folder = try ScratchFolder()
    let shared = folder.file("shared")
    try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
    let real = folder.file("shared/library.sqlite")
    try damagedStoreWithLiveWAL(at: real)
    let link = folder.file("library.sqlite")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "shared/library.sqlite")
    let before = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: real.path + $0)) }

    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded, "\(report.step("store")?.error ?? "")")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
        == "shared/library.sqlite")
    #expect(try names(in: folder).filter { $0.contains("corrupt") }.isEmpty)
    let asideName = try #require(
      try FileManager.default.contentsOfDirectory(atPath: shared.path).first {
        $0.hasPrefix("library.sqlite.corrupt-") && !$0.contains("-wal") && !$0.contains("-shm")
      })
    let after = try ["", "-wal"].map {
      try Data(contentsOf: shared.appendingPathComponent(asideName + $0))
    }
    #expect(after == before, "the damaged store and its WAL moved aside together")
    #expect(try open(link).userVersion() == 4)
    #expect(try open(real).integer("SELECT count(*) FROM authors") == 0)
  }

  /// A store reached through a folder that is a link, and a relative link whose `..` comes
  /// after it: opened where the file system finds it, and named so (not as the text of the
  /// path, whose `..` would lead elsewhere).
  @Test func opensAStoreThroughLinkedFoldersAndNamesItWhereItIs() async throws {
    let folder = try ScratchFolder()
    for path in ["real/inner/data", "real/inner/shared"] {
      try FileManager.default.createDirectory(
        at: folder.file(path), withIntermediateDirectories: true)
    }
    try FileManager.default.createDirectory(
      at: folder.file("app"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("app/data").path, withDestinationPath: "../real/inner/data")
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("real/inner/data/library.sqlite").path,
      withDestinationPath: "../shared/library.sqlite")

    let (report, _) = try await launch(
      manifest(#"{ "path": "app/data/library.sqlite" }"#), in: folder,
      plugins: [StoreInitStep.self])

    #expect(report.outcome == .succeeded, "\(report.step("store")?.error ?? "")")
    let store = try #require(report.output(of: "store", as: StoreHandle.self))
    let real = folder.file("real/inner/shared/library.sqlite").resolvingSymlinksInPath()
    #expect(store.url.path == real.path)
    #expect(report.step("store")?.notes.first == "created a new books store at \(real.path)")
    #expect(try open(real).userVersion() == 4)
  }

  /// store.init resolves the path's link itself, then opens the file it found without
  /// following links: one planted there in between is refused, not followed.
  @Test func aConnectionThatFollowsNoLinksRefusesOne() throws {
    let folder = try ScratchFolder()
    let real = folder.file("library.sqlite")
    _ = try storeAtVersion1(real)
    let link = folder.file("planted.sqlite")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: real.path)
    #expect(throws: SQLiteError.self) {
      _ = try SQLiteConnection(url: link, mode: .readWrite, followingLinks: false)
    }
    #expect(try SQLiteConnection(url: link, mode: .readOnly).userVersion() == 1)
  }

  @Test func neverTouchesADamagedStoreInReadOnlyMode() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try damagedStoreWithLiveWAL(at: url)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
    let bytes = try Data(contentsOf: url)
    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite", "readOnly": true }"#), in: folder,
      plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    #expect(
      report.step("store")?.error
        == "the store '\(url.path)' is damaged (database disk image is malformed); nothing was changed in read-only mode"
    )
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        == (names + ["launch.json"]).sorted())
    #expect(try Data(contentsOf: url) == bytes)
  }

  @Test func failsOnAMissingStoreItMayNotCreate() async throws {
    let folder = try ScratchFolder()
    let (report, _) = try await launch(
      manifest(#"{ "path": "missing.sqlite", "create": false }"#), in: folder,
      plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    #expect(
      report.step("store")?.error?.hasSuffix("does not exist; set \"create\": true to create it")
        == true)
  }

  @Test func leavesAnEmptyFileItMayNotCreateAStoreIn() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("empty.sqlite")
    try Data().write(to: url)
    let (report, _) = try await launch(
      manifest(#"{ "path": "empty.sqlite", "create": false }"#), in: folder,
      plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    #expect(
      report.step("store")?.error
        == "'\(url.path)' is an empty file, not a store; with \"create\": false store.init makes none in it: remove the file, or set \"create\": true"
    )
    #expect(try Data(contentsOf: url).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: url.path + ".created"))
  }

  @Test func refusesAStoreNewerThanItKnows() async throws {
    let folder = try ScratchFolder()
    do {
      let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .create)
      try connection.execute("PRAGMA user_version = 99")
    }
    let (report, _) = try await launch(
      manifest(#"{ "path": "library.sqlite" }"#), in: folder, plugins: [StoreInitStep.self])
    #expect(
      report.step("store")?.error
        == "the store '\(folder.file("library.sqlite").path)' is at schema version 99, newer than this build knows (4); update the app"
    )
    #expect(try open(folder.file("library.sqlite")).journalMode() == "delete", "left as it was")
  }

  @Test func rejectsBadParametersWhenTheManifestLoads() {
    #expect(
      loadProblems(
        manifest(#"{ "path": "a.sqlite", "schema": "bookz" }"#), plugins: [StoreInitStep.self]) == [
          "steps[0].params.schema: unknown schema 'bookz'. Did you mean 'books'? Use one of: books, music."
        ])
    #expect(
      loadProblems(
        manifest(#"{ "path": "a.sqlite", "readOnly": true, "create": true }"#),
        plugins: [StoreInitStep.self])
        == [
          "steps[0].params.create: 'create' cannot be used with 'readOnly'; remove one of them."
        ])
    #expect(
      loadProblems(manifest(#"{ "schema": "books" }"#), plugins: [StoreInitStep.self]) == [
        "steps[0].params: 'store.init' needs the parameter 'path'."
      ])
    #expect(
      loadProblems(manifest(#"{ "path": "" }"#), plugins: [StoreInitStep.self]) == [
        "steps[0].params.path: 'path' cannot be empty."
      ])
    #expect(
      loadProblems(
        manifest(#"{ "path": "a.sqlite", "migrations": "" }"#), plugins: [StoreInitStep.self])
        == ["steps[0].params.migrations: 'migrations' cannot be empty; leave it out instead."])
  }
}

/// Another writer: a connection on a thread of its own that begins a transaction with `begin`
/// (the exclusive lock unless told otherwise) and holds it until released. Waiting for it
/// suspends; it never blocks one of the cooperative threads other tests need.
private final class LockingWriter: Sendable {
  private let locked: AsyncStream<String?>
  private let done: AsyncStream<String?>
  private let releaseSignal = DispatchSemaphore(value: 0)

  init(url: URL, begin: String = "BEGIN EXCLUSIVE") {
    let (locked, lockedContinuation) = AsyncStream.makeStream(of: String?.self)
    let (done, doneContinuation) = AsyncStream.makeStream(of: String?.self)
    self.locked = locked
    self.done = done
    let releaseSignal = releaseSignal
    Thread {
      var failure: String?
      do {
        let connection = try SQLiteConnection(url: url, mode: .readWrite)
        try connection.execute(begin)
        lockedContinuation.yield(nil)
        releaseSignal.wait()
        try connection.execute("COMMIT")
      } catch {
        failure = "\(error)"
        lockedContinuation.yield(failure)
      }
      doneContinuation.yield(failure)
      lockedContinuation.finish()
      doneContinuation.finish()
    }.start()
  }

  /// Lets go of the lock, now or `delay` seconds from now.
  func release(after delay: TimeInterval = 0) {
    DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [releaseSignal] in
      releaseSignal.signal()
    }
  }

  func waitUntilLocked() async throws {
    try Self.check(await locked.first { _ in true })
  }

  func waitUntilDone() async throws {
    try Self.check(await done.first { _ in true })
  }

  private static func check(_ signal: String??) throws {
    if case .some(.some(let failure)) = signal { throw StepFailure(failure) }
  }
}
