import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import SampleDataPlugin
import StoreInitPlugin
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("sample.data", .timeLimit(.minutes(10)))
struct SampleDataTests {
  private func manifest(schema: String) -> String {
    """
    { "version": 1, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "schema": "\(schema)" } },
      { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"] }
    ] }
    """
  }

  private func count(_ table: String, in folder: ScratchFolder, store: String = "library.sqlite")
    throws -> Int64?
  {
    try SQLiteConnection(url: folder.file(store), mode: .readOnly).integer(
      "SELECT count(*) FROM \(table)")
  }

  @Test(arguments: [("books", "works", 7), ("music", "songs", 15)])
  func seedsAnEmptyLibraryOnceAndNeverTwice(schema: String, table: String, expected: Int64)
    async throws
  {
    let folder = try ScratchFolder()
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self, SampleDataStep.self]
    let first = try await launch(manifest(schema: schema), in: folder, plugins: plugins).report
    #expect(first.outcome == .succeeded)
    #expect(first.step("sample")?.notes == ["added \(expected) sample items"])
    #expect(try count(table, in: folder) == expected)
    let second = try await launch(manifest(schema: schema), in: folder, plugins: plugins).report
    #expect(second.step("sample")?.notes == ["the library already has items; no sample data added"])
    #expect(try count(table, in: folder) == expected)
  }

  @Test(arguments: ["songs", "works"])
  func checksForARowInTheSameWorkWhateverTheLibrarysSize(table: String) async throws {
    let folder = try ScratchFolder()
    let schema = table == "songs" ? "music" : "books"
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self, SampleDataStep.self]
    _ = try await launch(manifest(schema: schema), in: folder, plugins: plugins)
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    func steps() throws -> Int {
      let statement = try connection.prepare(SampleDataStep.existenceQuery(table))
      #expect(try statement.step())
      while try statement.step() {}
      return statement.virtualMachineSteps
    }
    let few = try steps()
    // Copies of the sample rows, 20,000 more.
    let columns = table == "songs" ? "title, artist, added_at" : "title"
    try connection.run(
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
      INSERT INTO \(table) (\(columns)) SELECT \(columns) FROM n, (SELECT * FROM \(table) LIMIT 1)
      """)
    #expect(try count(table, in: folder) ?? 0 > 20_000)
    #expect(try steps() == few)
  }

  @Test func leavesALibraryWithItsOwnBooksAlone() async throws {
    let folder = try ScratchFolder()
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self]
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: plugins)
    try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite).run(
      "INSERT INTO works (title) VALUES ('My Own Book')")
    let report = try await launch(
      manifest(schema: "books"), in: folder, plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(report.outcome == .succeeded)
    #expect(try count("works", in: folder) == 1)
  }

  @Test func needsAStoreFromADependency() {
    #expect(
      loadProblems(
        #"{ "version": 1, "steps": [ { "id": "sample", "plugin": "sample.data" } ] }"#,
        plugins: [StoreInitStep.self, SampleDataStep.self])
        == [
          "steps[0].dependsOn: 'sample.data' needs a StoreHandle from a dependency, and none of the step's 'dependsOn' steps provides one; add a step of kind 'store.init' to its 'dependsOn'."
        ])
  }

  private func scriptManifest(_ sample: String) -> String {
    """
    { "version": 1, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "app.sqlite", "migrations": "schema" } },
      { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"], "params": \(sample) }
    ] }
    """
  }

  @Test func aFailingSampleFileNamesItsLineAndAddsNothing() async throws {
    let folder = try ScratchFolder()
    try folder.write(
      "schema/001_create.sql", "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);")
    let file = try folder.write(
      "schema/sample.sql",
      "INSERT INTO items (name) VALUES ('a');\nINSERT INTO item (name) VALUES ('b');")
    let report = try await launch(
      scriptManifest(#"{ "file": "schema/sample.sql", "whenEmpty": "items" }"#), in: folder,
      plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(
      report.step("sample")?.error
        == "the sample data file '\(file.path):2' failed: no such table: item; nothing was added")
    #expect(try count("items", in: folder, store: "app.sqlite") == 0)

    let unknownTable = try await launch(
      scriptManifest(#"{ "file": "schema/sample.sql", "whenEmpty": "things" }"#), in: folder,
      plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(
      unknownTable.step("sample")?.error
        == "the table 'things' named by 'whenEmpty' is not in the store '\(folder.file("app.sqlite").path)' (no such table: things); name a table the store's migrations create"
    )
  }

  @Test func aSeededLibraryIsLeftWhileAnotherConnectionHoldsTheWriteLock() async throws {
    let folder = try ScratchFolder()
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self, SampleDataStep.self]
    _ = try await launch(manifest(schema: "books"), in: folder, plugins: plugins)
    let writer = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try writer.run("BEGIN IMMEDIATE")
    defer { try? writer.run("ROLLBACK") }

    let report = try await launch(manifest(schema: "books"), in: folder, plugins: plugins).report

    // A launch that took the write lock to look would wait for it, then fail as busy.
    #expect(report.outcome == .succeeded, "\(report.steps.compactMap(\.error))")
    #expect(report.step("sample")?.notes == ["the library already has items; no sample data added"])
  }

  @Test func aSeededLibraryIsLeftWithoutTheWriteLockOrReadingTheSample() async throws {
    let folder = try ScratchFolder()
    try folder.write("schema/001_create.sql", "CREATE TABLE items (id INTEGER PRIMARY KEY);")
    try folder.write("schema/sample.sql", "INSERT INTO items (id) VALUES (1);")
    let manifest = scriptManifest(#"{ "file": "schema/sample.sql", "whenEmpty": "items" }"#)
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self, SampleDataStep.self]
    let first = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(first.step("sample")?.notes == ["added 1 sample rows from sample.sql"])
    // The sample is no longer text, and another connection (the app, an extension) holds the
    // store's write lock: a launch that had to read the one or wait for the other would fail.
    try Data([0xFF, 0xFE, 0x00]).write(to: folder.file("schema/sample.sql"))
    let writer = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readWrite)
    try writer.run("BEGIN IMMEDIATE")
    defer { try? writer.run("ROLLBACK") }

    let second = try await launch(manifest, in: folder, plugins: plugins).report

    #expect(second.outcome == .succeeded, "\(second.steps.compactMap(\.error))")
    #expect(second.step("sample")?.notes == ["'items' already has rows; no sample data added"])
    #expect(try count("items", in: folder, store: "app.sqlite") == 1)
  }

  @Test func refusesASampleFileThatIsAFIFOInsteadOfWaitingOnIt() async throws {
    let folder = try ScratchFolder()
    try folder.write("schema/001_create.sql", "CREATE TABLE items (id INTEGER PRIMARY KEY);")
    let fifo = folder.file("schema/sample.sql")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    let report = try await launch(
      scriptManifest(#"{ "file": "schema/sample.sql", "whenEmpty": "items" }"#), in: folder,
      plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(
      report.step("sample")?.error
        == "the sample data file '\(fifo.path)' is not a regular file; ship a .sql file")
  }

  @Test func asksForAFileForAStoreWithItsOwnSchema() async throws {
    let folder = try ScratchFolder()
    try folder.write("schema/001_create.sql", "CREATE TABLE items (id INTEGER PRIMARY KEY);")
    let report = try await launch(
      scriptManifest("{}"), in: folder, plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(
      report.step("sample")?.error
        == "sample.data has no built-in sample for the store's own schema 'schema'; give 'file', a .sql file of sample rows, and 'whenEmpty', the table it fills"
    )
  }

  @Test func checksFileAndWhenEmptyWhenTheManifestLoads() {
    func problems(_ params: String) -> [String] {
      loadProblems(
        """
        { "version": 1, "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": "a.sqlite" } },
          { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"], "params": \(params) }
        ] }
        """, plugins: [StoreInitStep.self, SampleDataStep.self])
    }
    #expect(
      problems(#"{ "file": "/nowhere/sample.sql", "whenEmpty": "items" }"#) == [
        "steps[1].params.file: the sample data file '/nowhere/sample.sql' does not exist or cannot be read."
      ])
    #expect(
      problems(#"{ "file": "sample.sql" }"#) == [
        "steps[1].params.file: 'file' needs 'whenEmpty' too; give 'whenEmpty', or remove 'file'."
      ])
    #expect(
      problems(#"{ "whenEmpty": "items" }"#) == [
        "steps[1].params.whenEmpty: 'whenEmpty' needs 'file' too; give 'file', or remove 'whenEmpty'."
      ])
    #expect(
      problems(#"{ "file": "/nowhere/sample.sql", "whenEmpty": "items; DROP TABLE x" }"#) == [
        "steps[1].params.whenEmpty: 'whenEmpty' must be a table name (letters, digits, _), not 'items; DROP TABLE x'."
      ])
  }
}
