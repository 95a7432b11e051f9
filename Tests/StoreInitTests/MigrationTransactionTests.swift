import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

/// A migration runs inside `store.init`'s transaction and cannot end it, begin another or
/// reach outside it: such a statement is refused, with its file and line, before anything is
/// applied; comments and strings that spell one are not statements.
@Suite("store.init migrations stay in their transaction", .timeLimit(.minutes(10)))
struct MigrationTransactionTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self]
  private let params = #"{ "path": "app.sqlite", "migrations": "migrations/notes" }"#

  /// A store at version 1 of the notes schema, holding one note.
  private func storeAtVersion1() async throws -> ScratchFolder {
    let folder = try ScratchFolder()
    try folder.write(
      "migrations/notes/001_create_notes.sql",
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);")
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    try #require(report.outcome == .succeeded)
    try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readWrite).run(
      "INSERT INTO notes (text) VALUES ('kept')")
    return folder
  }

  @Test(arguments: [
    ("COMMIT;", "'COMMIT' would end the transaction it runs in"),
    ("END TRANSACTION;", "'COMMIT' would end the transaction it runs in"),
    ("ROLLBACK;", "'ROLLBACK' would end the transaction it runs in"),
    ("BEGIN;", "'BEGIN' would begin a transaction inside the transaction it runs in"),
    (
      "RELEASE SAVEPOINT outer_one;",
      "'RELEASE outer_one' names a savepoint the script did not open, and would end the transaction it runs in"
    ),
    (
      "ATTACH DATABASE 'other.sqlite' AS other;",
      "'ATTACH' would reach outside the transaction it runs in"
    ),
    ("DETACH DATABASE other;", "'DETACH' would reach outside the transaction it runs in"),
    ("VACUUM;", "'VACUUM' cannot run inside the transaction it runs in"),
    (
      "PRAGMA journal_mode = DELETE;",
      "'PRAGMA journal_mode' cannot change inside the transaction it runs in"
    ),
    // Spelled as an attacker would: mixed case, after a comment, schema-qualified, quoted.
    ("/* tidy */ cOmMiT TrAnSaCtIoN;", "'COMMIT' would end the transaction it runs in"),
    ("/* done */ rollback;", "'ROLLBACK' would end the transaction it runs in"),
    (
      "pragma MAIN.Journal_Mode = off;",
      "'PRAGMA Journal_Mode' cannot change inside the transaction it runs in"
    ),
    (
      #"PRAGMA "journal_mode" = memory;"#,
      "'PRAGMA journal_mode' cannot change inside the transaction it runs in"
    ),
    // A savepoint of its own released twice: the second release would end the transaction.
    (
      "savepoint mine; release MINE; Release mine;",
      "'RELEASE mine' names a savepoint the script did not open, and would end the transaction it runs in"
    ),
    ("vacuum into 'copy.sqlite';", "'VACUUM' cannot run inside the transaction it runs in"),
  ])
  func refusesAStatementThatWouldLeaveTheTransactionBeforeApplyingAnything(
    statement: String, reason: String
  ) async throws {
    let folder = try await storeAtVersion1()
    let migration = try folder.write(
      "migrations/notes/002_add_tags.sql",
      """
      CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
      -- the app's author thought a commit here was tidy
      INSERT INTO tags (name) VALUES ('first');
        \(statement)
      CREATE TABLE labels (id INTEGER PRIMARY KEY);
      """)
    let refusal =
      "the migration '\(migration.path):4' is refused: \(reason); store.init applies each migration inside one transaction and commits it itself, so that a failure leaves the store as it was; remove the statement"
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(
      storeError(report)
        == "\(refusal); the store '\(folder.file("app.sqlite").path)' was left as it was, at version 1"
    )
    // `orchestrate validate` reads every migration, and refuses it before any launch.
    let absolute =
      #"{ "path": "app.sqlite", "migrations": "\#(folder.file("migrations/notes").path)" }"#
    #expect(
      loadProblems(storeManifest(absolute), plugins: plugins, checksShippedFiles: true) == [
        "steps[0].params.migrations: \(refusal)."
      ])
    let connection = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readOnly)
    #expect(try connection.userVersion() == 1)
    #expect(try connection.tableNames() == ["notes"])
    #expect(try connection.query("SELECT text FROM notes") { $0.text(0) } == ["kept"])
  }

  @Test func commentsStringsTriggersAndItsOwnSavepointsAreNoEscape() async throws {
    let folder = try await storeAtVersion1()
    try folder.write(
      "migrations/notes/002_add_tags.sql",
      """
      -- COMMIT; a comment is no statement
      /* ROLLBACK; nor is this */
      CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
      INSERT INTO tags (name) VALUES ('COMMIT;'), ('END; BEGIN;');
      CREATE TRIGGER tags_touch AFTER INSERT ON tags BEGIN
        UPDATE notes SET text = text WHERE id = new.id;
      END;
      SAVEPOINT mine;
      INSERT INTO tags (name) VALUES ('inside');
      ROLLBACK TO mine;
      RELEASE mine;
      """)
    let (report, _) = try await launch(storeManifest(params), in: folder, plugins: plugins)
    #expect(report.outcome == .succeeded)
    let connection = try SQLiteConnection(url: folder.file("app.sqlite"), mode: .readOnly)
    #expect(try connection.userVersion() == 2)
    #expect(
      try connection.query("SELECT name FROM tags ORDER BY id") { $0.text(0) ?? "" } == [
        "COMMIT;", "END; BEGIN;",
      ])
  }

  @Test func aTriggerThatRollsBackTheTransactionStopsTheMigrationAndCommitsNothing() throws {
    let connection = try SQLiteConnection.inMemory()
    try connection.execute("CREATE TABLE t (x INTEGER); CREATE TABLE log (x INTEGER)")
    try connection.execute(
      "CREATE TRIGGER t_stop AFTER INSERT ON t BEGIN SELECT RAISE(ROLLBACK, 'stopped'); END")
    try connection.execute("BEGIN IMMEDIATE")
    #expect(throws: SQLiteError.self) {
      try connection.executeScriptInTransaction(
        "INSERT INTO log VALUES (1);\nINSERT INTO t VALUES (1);\nINSERT INTO log VALUES (2);")
    }
    #expect(try connection.integer("SELECT count(*) FROM log") == 0)
  }
}
