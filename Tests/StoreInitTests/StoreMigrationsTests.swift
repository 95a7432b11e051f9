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

/// An app's own schema as a folder of numbered `.sql` files.
@Suite("store.init with a migrations folder", .timeLimit(.minutes(10)))
struct StoreMigrationsTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self]
  private let params = #"{ "path": "app.sqlite", "migrations": "migrations/notes" }"#

  private func progress(_ events: [LaunchEvent]) -> [String] {
    events.compactMap { event in
      if case .progress(_, _, let message?) = event.kind { return message }
      return nil
    }
  }

  @Test func appliesTheFilesInOrderThenOnlyNewOnes() async throws {
    let folder = try ScratchFolder()
    try folder.write(
      "migrations/notes/001_create_notes.sql",
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);")
    try folder.write(
      "migrations/notes/002_add_pinned.sql",
      "ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;")
    try folder.write("migrations/notes/README.md", "not a migration")
    let (first, events) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(first.outcome == .succeeded)
    #expect(
      progress(events) == [
        "Migrating to version 1: create notes...", "Migrating to version 2: add pinned...",
        "store at version 2",
      ])
    let url = folder.file("app.sqlite")
    try SQLiteConnection(url: url, mode: .readWrite).run(
      "INSERT INTO notes (text, pinned) VALUES ('kept', 1)")

    let (again, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(again.step("store")?.notes == [])

    try folder.write(
      "migrations/notes/003_index_pinned.sql", "CREATE INDEX notes_pinned ON notes (pinned, id);")
    let (third, thirdEvents) = try await launch(
      storeManifest(params), in: folder, plugins: plugins)
    #expect(third.step("store")?.notes == ["migrated the store from version 2 to 3"])
    #expect(progress(thirdEvents).first == "Migrating to version 3: index pinned...")
    let connection = try SQLiteConnection(url: url, mode: .readOnly)
    #expect(try connection.userVersion() == 3)
    #expect(
      try connection.applicationID() == StoreSchema(name: "notes", migrations: []).applicationID)
    #expect(try connection.query("SELECT text FROM notes") { $0.text(0) } == ["kept"])
  }

  @Test func aFailingFileNamesItsLineAndLeavesTheStoreAsItWas() async throws {
    let folder = try ScratchFolder()
    try folder.write(
      "migrations/notes/001_create_notes.sql",
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);")
    _ = try await launch(storeManifest(params), in: folder, plugins: plugins)
    let broken = try folder.write(
      "migrations/notes/002_add_tags.sql",
      """
      -- Tags for notes.
      CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT);

      INSERT INTO tag (name) VALUES ('first');
      """)
    try folder.write("migrations/notes/003_more.sql", "CREATE TABLE more (id INTEGER);")
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(
      storeError(report)
        == "the migration '\(broken.path):4' failed: no such table: tag; the store '\(folder.file("app.sqlite").path)' was left as it was, at version 1"
    )
    let connection = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readOnly)
    #expect(try connection.userVersion() == 1)
    #expect(try connection.tableNames() == ["notes"])
  }

  @Test func refusesAStoreNewerThanItsNewestFile() async throws {
    let folder = try ScratchFolder()
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    try folder.write("migrations/notes/002_more.sql", "CREATE TABLE more (id INTEGER);")
    _ = try await launch(storeManifest(params), in: folder, plugins: plugins)
    try FileManager.default.removeItem(at: folder.file("migrations/notes/002_more.sql"))
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(
      storeError(report)
        == "the store '\(folder.file("app.sqlite").path)' is at schema version 2, newer than this build knows (1); update the app"
    )
  }

  /// `manifests/migrations/books` and `music`: the built-in schemas as folders.
  private static let shipped = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("manifests/migrations")

  @Test(arguments: StoreSchema.all.map(\.name))
  func theShippedFolderOfABuiltInSchemaHoldsItsMigrations(name: String) throws {
    let schema = try #require(StoreSchema.named(name))
    // The Swift declaration is the one source; the folder is written from it, for apps that
    // ship their schema as files.
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
      let target = Self.shipped.appendingPathComponent(name)
      try? FileManager.default.removeItem(at: target)
      try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
      for migration in schema.migrations {
        let file =
          String(repeating: "0", count: max(0, 3 - String(migration.version).count))
          + "\(migration.version)_\(migration.summary.replacingOccurrences(of: " ", with: "_")).sql"
        try (migration.checkedSQL() + "\n").write(
          to: target.appendingPathComponent(file), atomically: true, encoding: .utf8)
      }
      return
    }
    let folder = try StoreSchema(folder: Self.shipped.appendingPathComponent(name))
    #expect(folder.name == schema.name)
    #expect(folder.applicationID == schema.applicationID)
    #expect(folder.migrations.map(\.version) == schema.migrations.map(\.version))
    #expect(folder.migrations.map(\.summary) == schema.migrations.map(\.summary))
    #expect(folder.migrations.map(\.sql) == schema.migrations.map { _ in nil })
    #expect(
      try folder.migrations.map {
        try $0.checkedSQL().trimmingCharacters(in: .whitespacesAndNewlines)
      }
        == schema.migrations.map(\.sql),
      "manifests/migrations/\(name) is stale; rerun with RECORD_SNAPSHOTS=1 to write it from StoreSchema.\(name)"
    )
  }

  @Test func aStoreOfABuiltInSchemaOpensThroughItsShippedFolderWithoutMigratingAgain()
    async throws
  {
    let folder = try ScratchFolder()
    let builtIn = #"{ "path": "music.sqlite", "schema": "music" }"#
    let shipped = #"{ "path": "music.sqlite", "migrations": "\#(Self.shipped.path)/music" }"#
    let (created, _) = try await launch(storeManifest(builtIn), in: folder, plugins: plugins)
    #expect(created.outcome == .succeeded)
    let (again, _) = try await launch(storeManifest(shipped), in: folder, plugins: plugins)
    #expect(again.outcome == .succeeded)
    #expect(again.step("store")?.notes == [])

    let other = try ScratchFolder()
    _ = try await launch(storeManifest(shipped), in: other, plugins: plugins)
    let (back, _) = try await launch(storeManifest(builtIn), in: other, plugins: plugins)
    #expect(back.step("store")?.notes == [])
    let connection = try SQLiteConnection(url: other.file("music.sqlite"), mode: .readOnly)
    #expect(try connection.userVersion() == StoreSchema.music.latestVersion)
    #expect(try connection.applicationID() == StoreSchema.music.applicationID)
  }

  @Test func appliesEmptyAndLinkedFilesAndIgnoresBackupsAndOtherFiles() async throws {
    let folder = try ScratchFolder()
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    try folder.write("migrations/notes/001_create_notes.sql.bak", "not SQL at all")
    try folder.write("migrations/notes/notes.txt", "not SQL either")
    let outside = try folder.write("shared/tags.sql", "CREATE TABLE tags (id INTEGER);")
    try FileManager.default.createSymbolicLink(
      at: folder.file("migrations/notes/002_add_tags.sql"), withDestinationURL: outside)
    try folder.write("migrations/notes/003_nothing_yet.sql", "-- kept for its number\n")
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(report.step("store")?.notes.last == "migrated the store from version 0 to 3")
    let connection = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readOnly)
    #expect(try connection.userVersion() == 3)
    #expect(try connection.tableNames() == ["notes", "tags"])
  }

  @Test func namesAMigrationThatIsALinkToNothingAFolderAFIFOOrNotTextWhenALaunchReadsIt()
    async throws
  {
    let folder = try ScratchFolder()
    let migrations = folder.file("migrations/notes")
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    let manifest = storeManifest(#"{ "path": "a.sqlite", "migrations": "\#(migrations.path)" }"#)
    // What `orchestrate validate` reports, reading every file; a launch loads the names only
    // and finds the file when its store needs it, before applying anything.
    func problems() async throws -> (validate: [String], launch: String?) {
      let validate = loadProblems(manifest, plugins: plugins, checksShippedFiles: true)
      #expect(loadProblems(manifest, plugins: plugins) == [])
      let (report, _) = try await launch(manifest, in: folder, plugins: plugins)
      // Read before anything is written: no store is created without its migrations.
      #expect(!FileManager.default.fileExists(atPath: folder.file("a.sqlite").path))
      return (
        validate.map { $0.replacingOccurrences(of: folder.url.path, with: "F") },
        storeError(report)?.replacingOccurrences(of: folder.url.path, with: "F")
      )
    }
    func expectNamed(_ problem: String) async throws {
      let (validate, launch) = try await problems()
      #expect(validate == ["steps[0].params.migrations: \(problem)."])
      #expect(launch == "\(problem); no store was created at 'F/a.sqlite'")
    }
    let second = migrations.appendingPathComponent("002_more.sql")
    try FileManager.default.createSymbolicLink(
      at: second, withDestinationURL: folder.file("gone.sql"))
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is a link to 'F/gone.sql', which does not exist; ship the file itself"
    )
    // The end of a chain of links is named, and links that lead round are a loop.
    try FileManager.default.removeItem(at: second)
    try FileManager.default.createSymbolicLink(
      at: second, withDestinationURL: folder.file("l1.sql"))
    try FileManager.default.createSymbolicLink(
      at: folder.file("l1.sql"), withDestinationURL: folder.file("gone.sql"))
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is a link to 'F/gone.sql', which does not exist; ship the file itself"
    )
    try FileManager.default.removeItem(at: folder.file("l1.sql"))
    try FileManager.default.createSymbolicLink(
      at: folder.file("l1.sql"), withDestinationURL: second)
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is a link in a loop of links, which leads to no file; ship the file itself"
    )
    try FileManager.default.removeItem(at: second)
    try FileManager.default.createDirectory(at: second, withIntermediateDirectories: false)
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is a folder, not a file; move it or rename it"
    )
    try FileManager.default.removeItem(at: second)
    #expect(mkfifo(second.path, 0o600) == 0)
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is not a regular file; ship a .sql file")
    try FileManager.default.removeItem(at: second)
    try Data([0xFF, 0xFE, 0x43]).write(to: second)
    try await expectNamed(
      "the migration 'F/migrations/notes/002_more.sql' is not UTF-8 text; save it as UTF-8")
  }

  @Test func aLaunchReadsOnlyTheMigrationsItsStoreLacks() async throws {
    let folder = try ScratchFolder()
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    try folder.write("migrations/notes/002_more.sql", "CREATE TABLE more (id INTEGER);")
    let (first, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(first.outcome == .succeeded)
    // Both files applied, then spoiled: a launch that read them would fail.
    try Data([0xFF, 0xFE]).write(to: folder.file("migrations/notes/001_create_notes.sql"))
    try FileManager.default.removeItem(at: folder.file("migrations/notes/002_more.sql"))
    try FileManager.default.createDirectory(
      at: folder.file("migrations/notes/002_more.sql"), withIntermediateDirectories: false)
    try folder.write("migrations/notes/003_tags.sql", "CREATE TABLE tags (id INTEGER);")
    let (second, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(second.outcome == .succeeded, "\(storeError(second) ?? "")")
    #expect(second.step("store")?.notes == ["migrated the store from version 2 to 3"])
    let connection = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readOnly)
    #expect(try connection.tableNames() == ["more", "notes", "tags"])
    // `orchestrate validate` still reads them all, and names each it cannot use.
    let migrations = folder.file("migrations/notes").path
    #expect(
      loadProblems(
        storeManifest(#"{ "path": "app.sqlite", "migrations": "\#(migrations)" }"#),
        plugins: plugins, checksShippedFiles: true)
        == [
          "steps[0].params.migrations: the migration '\(migrations)/001_create_notes.sql' is not UTF-8 text; save it as UTF-8. Also, the migration '\(migrations)/002_more.sql' is a folder, not a file; move it or rename it."
        ])
  }

  @Test func aDamagedStoreStaysWhereItIsWhileItsReplacementCannotReadItsMigrations()
    async throws
  {
    let folder = try ScratchFolder()
    let migration = try folder.write(
      "migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    _ = try await launch(storeManifest(params), in: folder, plugins: plugins)
    let store = folder.file("app.sqlite")
    try damageFirstPage(of: store)
    let damaged = try Data(contentsOf: store)
    try Data([0x43, 0xFF]).write(to: migration)
    let (failed, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    let error = try #require(storeError(failed))
    #expect(
      error.hasPrefix(
        "the migration '\(migration.path)' is not UTF-8 text; save it as UTF-8; the store '\(store.path)' is damaged ("
      ), "\(error)")
    #expect(error.hasSuffix(") and was left as it was, since a new one needs every migration"))
    #expect(try Data(contentsOf: store) == damaged)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(!names.contains { $0.contains(".corrupt-") }, "\(names)")

    // An update ships the file again: the next launch moves the store aside and starts anew.
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    let (recovered, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    let handle = try #require(recovered.output(of: "store", as: StoreHandle.self))
    #expect(handle.movedAside != nil)
    #expect(handle.isNew)
  }

  @Test func aFailingFirstMigrationCreatesNoStoreAndAStoreAtVersion0IsNewWhenItGetsItsTables()
    async throws
  {
    let folder = try ScratchFolder()
    let store = folder.file("app.sqlite")
    let migration = try folder.write(
      "migrations/notes/001_create_notes.sql",
      "CREATE TABLE notes (id INTEGER);\nINSERT INTO note (id) VALUES (1);")
    // Tried on a database in memory first: no empty store is left at the path.
    let (failed, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(
      storeError(failed)
        == "the migration '\(migration.path):2' failed: no such table: note; no store was created at '\(store.path)'"
    )
    #expect(!FileManager.default.fileExists(atPath: store.path))

    // Such a store, left by an earlier build, and a database adopted with tables of its own:
    // the schema's tables are made in this launch, so no plugin may judge the app's files
    // against them.
    try folder.write("migrations/notes/001_create_notes.sql", "CREATE TABLE notes (id INTEGER);")
    for (tables, extra) in [("", ""), ("CREATE TABLE mine (id INTEGER);", #", "adopt": true"#)] {
      try? FileManager.default.removeItem(at: store)
      do {
        let connection = try SQLiteConnection(url: store, mode: .create)
        try connection.execute("PRAGMA journal_mode = WAL")
        if !tables.isEmpty { try connection.execute(tables) }
      }
      let manifest = storeManifest(
        #"{ "path": "app.sqlite", "migrations": "migrations/notes"\#(extra) }"#)
      let (migrated, _) = try await launch(manifest, in: folder, plugins: plugins)
      let handle = try #require(migrated.output(of: "store", as: StoreHandle.self))
      #expect(handle.version == 1)
      #expect(handle.isNew, "\(extra)")
      #expect(handle.movedAside == nil)
      let (again, _) = try await launch(manifest, in: folder, plugins: plugins)
      #expect(again.output(of: "store", as: StoreHandle.self)?.isNew == false)
    }
  }

  @Test func validateReadsTheMigrationsOfAFallbackAndOfEveryStepOfTheKind() throws {
    let folder = try ScratchFolder()
    try folder.write("good/001_create.sql", "CREATE TABLE a (id INTEGER);")
    let bad = try folder.write("bad/001_create.sql", "COMMIT;")
    let good = folder.file("good").path
    let manifest = #"""
      { "version": 1, "steps": [
        { "id": "a", "plugin": "store.init",
          "params": { "path": "a.sqlite", "migrations": "\#(good)" },
          "fallback": { "params": { "migrations": "\#(folder.file("bad").path)" } } },
        { "id": "b", "plugin": "store.init",
          "params": { "path": "b.sqlite", "migrations": "\#(folder.file("bad").path)" } } ] }
      """#
    #expect(loadProblems(manifest, plugins: plugins) == [])
    let refusal =
      "the migration '\(bad.path):1' is refused: 'COMMIT' would end the transaction it runs in; store.init applies each migration inside one transaction and commits it itself, so that a failure leaves the store as it was; remove the statement."
    #expect(
      loadProblems(manifest, plugins: plugins, checksShippedFiles: true) == [
        "steps[0].fallback.params.migrations: \(refusal)",
        "steps[1].params.migrations: \(refusal)",
      ])
  }

  @Test func readsTheNamesAsBytesPaddedNumbersAndAllButANameThatIsNotUTF8() throws {
    let folder = try ScratchFolder()
    try folder.write("migrations/notes/0000000000000000000001_create.sql", "CREATE TABLE a (id);")
    try folder.write("migrations/notes/002_more_of_it.sql", "CREATE TABLE b (id);")
    let schema = try StoreSchema(folder: folder.file("migrations/notes"))
    #expect(schema.migrations.map(\.version) == [1, 2])
    #expect(schema.migrations.map(\.summary) == ["create", "more of it"])
    #expect(
      schema.migrations.map { $0.file?.lastPathComponent } == [
        "0000000000000000000001_create.sql", "002_more_of_it.sql",
      ])
    // 0xFF is never UTF-8: the file could not be named in a message, nor opened by that name.
    let name =
      folder.file("migrations/notes").path.utf8.map { CChar(bitPattern: $0) } + [
        47, 51, 95, -1, 46, 115, 113, 108, 0,
      ]
    let descriptor = open(name, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    try #require(descriptor >= 0)
    close(descriptor)
    #expect(
      loadProblems(
        storeManifest(
          #"{ "path": "a.sqlite", "migrations": "\#(folder.file("migrations/notes").path)" }"#),
        plugins: plugins
      ) == [
        "steps[0].params.migrations: the migration file '\(folder.file("migrations/notes").path)/3_\u{FFFD}.sql' has a name that is not UTF-8; rename it, such as '004_add_tags.sql'."
      ])
  }

  @Test func checksTheFolderWhenTheManifestLoads() throws {
    let folder = try ScratchFolder()
    func problems(_ files: [String]) throws -> [String] {
      let migrations = folder.file("m-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: true)
      for file in files { try folder.write("\(migrations.lastPathComponent)/\(file)", "SELECT 1;") }
      return loadProblems(
        storeManifest(#"{ "path": "a.sqlite", "migrations": "\#(migrations.path)" }"#),
        plugins: plugins
      ).map { $0.replacingOccurrences(of: migrations.path, with: "M") }
    }
    #expect(
      try problems(["001_a.sql", "003_c.sql"]) == [
        "steps[0].params.migrations: the migrations in 'M' skip number 2 after '001_a.sql' (the next is '003_c.sql'); number them from 1 without gaps."
      ])
    #expect(
      try problems(["002_b.sql"]) == [
        "steps[0].params.migrations: the migrations in 'M' skip number 1 (the next is '002_b.sql'); number them from 1 without gaps."
      ])
    #expect(
      try problems(["001_a.sql", "002_b.sql", "002_c.sql"]) == [
        "steps[0].params.migrations: '002_b.sql' and '002_c.sql' in 'M' both have number 2; give each migration its own number."
      ])
    #expect(
      try problems(["001_a.sql", "2-b.sql"]) == [
        "steps[0].params.migrations: the migration file 'M/2-b.sql' is not named NNN_name.sql; rename it to its number, an underscore and a name, such as '004_add_tags.sql'."
      ])
    #expect(
      try problems(["000_a.sql", "001_b.sql"]) == [
        "steps[0].params.migrations: the migration 'M/000_a.sql' has number 0; number the migrations from 1, as '001_create.sql'."
      ])
    // Every problem at once, each a sentence of its own; one gap or repeat said once.
    #expect(
      try problems(["000_z.sql", "001_a.sql", "001_b.sql", "003_c.sql", "004_d.sql", "5.sql"]) == [
        "steps[0].params.migrations: the migration file 'M/5.sql' is not named NNN_name.sql; rename it to its number, an underscore and a name, such as '004_add_tags.sql'. Also, the migration 'M/000_z.sql' has number 0; number the migrations from 1, as '001_create.sql'. Also, '001_a.sql' and '001_b.sql' in 'M' both have number 1; give each migration its own number. Also, the migrations in 'M' skip number 2 after '001_b.sql' (the next is '003_c.sql'); number them from 1 without gaps."
      ])
    #expect(
      try problems(["sample.sql"]) == [
        "steps[0].params.migrations: the migrations folder 'M' holds no migration files; add the first one as '001_create.sql'."
      ])
    #expect(
      loadProblems(
        storeManifest(#"{ "path": "a.sqlite", "migrations": "/nowhere/migrations" }"#),
        plugins: plugins)
        == [
          "steps[0].params.migrations: the migrations folder '/nowhere/migrations' does not exist; give the folder of NNN_name.sql files shipped with the manifest."
        ])
    #expect(
      loadProblems(
        storeManifest(#"{ "path": "a.sqlite", "schema": "books", "migrations": "m" }"#),
        plugins: plugins)
        == [
          "steps[0].params.migrations: 'migrations' cannot be used with 'schema'; remove one of them."
        ])
  }
}
