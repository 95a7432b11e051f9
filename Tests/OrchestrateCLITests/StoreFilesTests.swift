import Foundation
import LaunchOrchestrator
import SQLiteStore
import Testing

/// `store.init` through the real binary on files a user could point it at by mistake, and on
/// a migrations folder shipped with a manifest: each is refused before anything is written,
/// with the path and what to do.
@Suite("orchestrate with stores it must not touch", .timeLimit(.minutes(10)))
struct StoreFilesTests {
  private func storeManifest(_ params: String) -> String {
    #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": \#(params) } ] }"#
  }

  @Test func validateNamesAGapInTheShippedMigrationsFolder() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    try folder.write("migrations/screensort/004_add_tags.sql", "CREATE TABLE tags (id INTEGER);")
    let result = try await Orchestrate.run(["validate", manifest])
    #expect(result.status == 65)
    #expect(
      (result.stdout + result.stderr).contains(
        "the migrations in '\(folder.path("migrations/screensort"))' skip number 3 after '002_add_folders.sql' (the next is '004_add_tags.sql'); number them from 1 without gaps."
      ))
    #expect(!FileManager.default.fileExists(atPath: folder.path(".data")))
  }

  /// A launch reads only the migrations its store lacks; `validate` reads every one, so a file
  /// spoiled after it was applied is named before the next release, and never fails a launch.
  @Test func validateReadsEveryMigrationWhileARunReadsOnlyThoseItsStoreLacks() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    #expect(try await Orchestrate.run(["run", manifest, "--quiet"]).status == 0)
    let applied = folder.path("migrations/screensort/002_add_folders.sql")
    try Data([0x43, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: applied))
    #expect(try await Orchestrate.run(["run", manifest, "--quiet"]).status == 0)
    let result = try await Orchestrate.run(["validate", manifest])
    #expect(result.status == 65)
    #expect(
      (result.stdout + result.stderr).contains(
        "error: step 'store' (steps[0].params.migrations): the migration '\(applied)' is not UTF-8 text; save it as UTF-8."
      ), "\(result.stdout)\(result.stderr)")
  }

  /// `validate` applies the migrations to a store in memory: a statement that fails is named
  /// before the app ships, not by the first launch that needs it. Every file that cannot be
  /// read is named at once, not one per run.
  @Test func validateNamesAMigrationThatFailsAndEveryFileItCannotRead() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("migrations/app"), withIntermediateDirectories: true)
    try folder.write("migrations/app/001_create.sql", "CREATE TABLE items (id INTEGER);\n")
    let broken = try folder.write(
      "migrations/app/002_tags.sql", "CREATE TABLE tags (id INTEGER);\nCREATE TABL oops;\n")
    try folder.write("migrations/app/003_more.sql", "CREATE TABLE more (id INTEGER);\n")
    let manifest = try folder.write(
      "app.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "app.sqlite", "migrations": "migrations/app" } } ] }"#
    )

    let failing = try await Orchestrate.run(["validate", manifest])
    #expect(failing.status == 65)
    #expect(
      failing.stdout.contains(
        "error: step 'store' (steps[0].params.migrations): the migration '\(broken):2' fails on a new store: near \"TABL\": syntax error; a launch that applies it would fail.\n"
      ), "\(failing.stdout)")

    try Data([0x43, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: broken))
    let transaction = try folder.write("migrations/app/003_more.sql", "BEGIN;\n")
    let unreadable = try await Orchestrate.run(["validate", manifest])
    #expect(unreadable.status == 65)
    #expect(
      unreadable.stdout.contains(
        "the migration '\(broken)' is not UTF-8 text; save it as UTF-8. Also, the migration '\(transaction):1' is refused: "
      ), "\(unreadable.stdout)")
    #expect(!FileManager.default.fileExists(atPath: folder.path("app.sqlite")))
  }

  @Test func refusesTheManifestAsItsStoreAndAMissingFolderLeavingBothAsTheyWere() async throws {
    let folder = try TemporaryFolder()
    let text = storeManifest(#"{ "path": "store.json" }"#)
    let manifest = try folder.write("store.json", text)
    // Refused before the launch; an app's launch, which skips that check, is refused by the
    // step itself (StoreSafetyTests).
    let refused = try await Orchestrate.run([
      "run", manifest, "--quiet", "--report", folder.path("1.json"),
    ])
    #expect(refused.status == 65)
    #expect(
      refused.stderr.contains(
        "error: step 'store' (steps[0].params.path): store.init rewrites 'store.json', or moves it aside when it cannot read it, but it is the manifest itself; give it a file of its own.\n"
      ), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: folder.path("1.json")))
    #expect(try String(contentsOfFile: manifest, encoding: .utf8) == text)

    let missing = try folder.write(
      "missing.json", storeManifest(#"{ "path": "data/library.sqlite" }"#))
    let failed = try await Orchestrate.run([
      "run", missing, "--quiet", "--report", folder.path("2.json"),
    ])
    #expect(failed.status == 1)
    #expect(
      try readReport(folder.path("2.json")).step("store")?.error
        == "the folder '\(folder.path("data"))' for the store '\(folder.path("data/library.sqlite"))' does not exist; create it, or set \"createFolders\": true"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.path("data")))
  }

  @Test func refusesABooksStoreOpenedAsMusicWithoutChangingIt() async throws {
    let folder = try TemporaryFolder()
    let books = try folder.write(
      "books.json", storeManifest(#"{ "path": "library.sqlite", "schema": "books" }"#))
    #expect(try await Orchestrate.run(["run", books, "--quiet"]).status == 0)
    let store = folder.path("library.sqlite")
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    let music = try folder.write(
      "music.json", storeManifest(#"{ "path": "library.sqlite", "schema": "music" }"#))
    let result = try await Orchestrate.run([
      "run", music, "--quiet", "--report", folder.path("report.json"),
    ])
    #expect(result.status == 1)
    #expect(
      try readReport(folder.path("report.json")).step("store")?.error
        == "'\(store)' holds a books store at version 4, not a music store; give store.init the schema it was created with, or another path"
    )
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
  }
}
