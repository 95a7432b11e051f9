import Foundation
import LaunchOrchestrator

/// The versioned schema of a store: a list of migrations, built in (`books`, `music`) or read
/// from an app's folder of numbered `.sql` files.
///
/// `store.init` applies the migrations; `sample.data`, `queue.validate`, `images.cleanup` and
/// the paging plugins read and write these tables. Versions live in `PRAGMA user_version`;
/// the schema's identity in `PRAGMA application_id`.
public struct StoreSchema: Sendable, Equatable {
  /// One step from a version to the next.
  public struct Migration: Sendable, Equatable {
    /// The version the store has after it.
    public var version: Int
    /// What it does, for progress messages.
    public var summary: String
    /// Its statements, or the file that holds them: one or the other, never neither.
    private let source: Source

    private enum Source: Sendable, Equatable {
      case sql(String)
      case file(URL)
    }

    /// The statements it runs, for a migration written in code; `nil` for one in an app's
    /// folder, whose ``file`` is read only when a store needs it (``checkedSQL()``).
    public var sql: String? {
      if case .sql(let sql) = source { sql } else { nil }
    }
    /// The file it is read from; `nil` for a built-in migration.
    public var file: URL? {
      if case .file(let file) = source { file } else { nil }
    }

    /// A migration written in code.
    public init(version: Int, summary: String, sql: String) {
      self.version = version
      self.summary = summary
      source = .sql(sql)
    }

    /// A migration in a file, read when a store needs it: a launch whose store is already
    /// past it never opens the file.
    public init(version: Int, summary: String, file: URL) {
      self.version = version
      self.summary = summary
      source = .file(file)
    }

    /// `'003_add_tags.sql'` or `3 (index the library for paging)`, for messages.
    public var label: String {
      file.map { "'\($0.lastPathComponent)'" } ?? "\(version) (\(summary))"
    }

    /// The statements it runs, read from its file now for a migration of an app's folder,
    /// checked to run inside the one transaction `store.init` applies migrations in.
    /// - Throws: ``StepFailure`` naming the file (or the built-in migration) and what to
    ///   change: a link to nothing, a folder, a FIFO, bytes that are not UTF-8, a statement that
    ///   would end, begin or leave the transaction (with its line).
    public func checkedSQL() throws(StepFailure) -> String {
      let text: String
      switch source {
      case .sql(let sql): text = sql
      case .file(let file): text = try StoreSchema.sqlText(of: file, noun: "the migration")
      }
      if let escape = SQLiteConnection.transactionEscape(in: text) {
        let location =
          file.map { "the migration '\($0.path):\(escape.line ?? 1)'" }
          ?? "migration \(version) (\(summary)) at line \(escape.line ?? 1)"
        throw StepFailure(
          "\(location) is refused: \(escape.message); store.init applies each migration inside one transaction and commits it itself, so that a failure leaves the store as it was; remove the statement"
        )
      }
      return text
    }
  }

  /// The schema's name: `books`, `music`, or the name of the app's migrations folder.
  public var name: String
  /// Its migrations, oldest first; versions count from 1 without gaps.
  public var migrations: [Migration]

  /// Describes a schema.
  public init(name: String, migrations: [Migration]) {
    self.name = name
    self.migrations = migrations
  }

  /// The newest version.
  public var latestVersion: Int { migrations.last?.version ?? 0 }

  /// The value `store.init` writes to `PRAGMA application_id`: a hash of the name, so a store
  /// opened with another schema is recognised without reading its tables.
  public var applicationID: Int32 {
    // FNV-1a: stable across processes and builds, unlike `Hasher`.
    var hash: UInt32 = 2_166_136_261
    for byte in "LaunchOrchestrator.\(name)".utf8 {
      hash = (hash ^ UInt32(byte)) &* 16_777_619
    }
    return Int32(bitPattern: hash == 0 ? 1 : hash)
  }

  /// The tables a store of this schema has at `version`, found by applying the migrations up
  /// to it to an empty database in memory (reading their files); costs the same whatever the
  /// store's size.
  /// - Throws: ``StepFailure`` for a migration that cannot be read (``Migration/checkedSQL()``),
  ///   ``SQLiteError`` for one that fails.
  public func tables(atVersion version: Int) throws -> Set<String> {
    let memory = try SQLiteConnection.inMemory()
    for migration in migrations where migration.version <= version {
      try memory.executeScript(migration.checkedSQL())
    }
    return try memory.tableNames()
  }

  /// Every schema by name.
  public static let all = [books, music]

  /// The schema called `name`.
  public static func named(_ name: String) -> StoreSchema? {
    all.first { $0.name == name }
  }

  /// A books library: works, editions, authors, library entries, and scanned covers.
  public static let books = StoreSchema(
    name: "books",
    migrations: [
      Migration(
        version: 1, summary: "create the library",
        sql: """
          CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
          CREATE TABLE works (
            id INTEGER PRIMARY KEY, title TEXT NOT NULL,
            author_id INTEGER REFERENCES authors(id), first_published INTEGER);
          CREATE TABLE editions (
            id INTEGER PRIMARY KEY, work_id INTEGER NOT NULL REFERENCES works(id),
            isbn TEXT, page_count INTEGER, format TEXT);
          CREATE TABLE library_entries (
            id INTEGER PRIMARY KEY, edition_id INTEGER NOT NULL REFERENCES editions(id),
            status TEXT NOT NULL DEFAULT 'toRead', added_at REAL NOT NULL, rating INTEGER);
          """),
      Migration(
        version: 2, summary: "track scanned covers",
        sql: """
          CREATE TABLE scans (
            id INTEGER PRIMARY KEY, image_path TEXT, reviewed INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL);
          """),
      Migration(
        version: 3, summary: "index the library for paging",
        sql: """
          CREATE INDEX library_entries_added ON library_entries (added_at DESC, id);
          CREATE INDEX works_title ON works (title COLLATE NOCASE, id);
          CREATE INDEX editions_work ON editions (work_id);
          """),
      Migration(
        version: 4, summary: "index library entries by edition",
        sql: """
          CREATE INDEX library_entries_edition ON library_entries (edition_id);
          """),
    ])

  /// A music library: songs, indexed for every page order, with full-text search.
  public static let music = StoreSchema(
    name: "music",
    migrations: [
      Migration(
        version: 1, summary: "create the library",
        sql: """
          CREATE TABLE songs (
            id INTEGER PRIMARY KEY, title TEXT NOT NULL, artist TEXT NOT NULL, album TEXT,
            duration REAL, play_count INTEGER NOT NULL DEFAULT 0, last_played_at REAL,
            added_at REAL NOT NULL);
          """),
      Migration(
        version: 2, summary: "index songs for every page order",
        sql: """
          CREATE INDEX songs_most_played ON songs (play_count DESC, id);
          CREATE INDEX songs_recently_played ON songs (last_played_at DESC, id);
          CREATE INDEX songs_recently_added ON songs (added_at DESC, id);
          CREATE INDEX songs_alphabetical ON songs (title COLLATE NOCASE, id);
          """),
      Migration(
        version: 3, summary: "add full-text search",
        sql: """
          CREATE VIRTUAL TABLE songs_search USING fts5 (
            title, artist, album, content='songs', content_rowid='id');
          CREATE TRIGGER songs_search_insert AFTER INSERT ON songs BEGIN
            INSERT INTO songs_search (rowid, title, artist, album)
            VALUES (new.id, new.title, new.artist, new.album);
          END;
          CREATE TRIGGER songs_search_delete AFTER DELETE ON songs BEGIN
            INSERT INTO songs_search (songs_search, rowid, title, artist, album)
            VALUES ('delete', old.id, old.title, old.artist, old.album);
          END;
          CREATE TRIGGER songs_search_update AFTER UPDATE ON songs BEGIN
            INSERT INTO songs_search (songs_search, rowid, title, artist, album)
            VALUES ('delete', old.id, old.title, old.artist, old.album);
            INSERT INTO songs_search (rowid, title, artist, album)
            VALUES (new.id, new.title, new.artist, new.album);
          END;
          INSERT INTO songs_search (songs_search) VALUES ('rebuild');
          """),
    ])
}
