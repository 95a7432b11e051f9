import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `sample.data`: fills an empty library with a small sample one, once: the built-in books or
/// songs, or the app's own `.sql` file for its own schema.
///
/// Emptiness is checked with `LIMIT 1` (never counting or loading the library): first with a
/// plain read, so every launch but the first neither waits for the store's write lock nor
/// reads the sample; then again inside the write transaction of the inserts, so two launches
/// at once cannot both seed it.
public struct SampleDataStep: StepPlugin {
  /// The kind name.
  public static let kind = "sample.data"
  /// What the step does.
  public static let summary =
    "Seeds sample data when the store's library is empty (a LIMIT 1 check), never twice: built-in books or songs, or the app's own .sql file."
  /// It needs the store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]

  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter(
      "A .sql file shipped with the manifest (relative to its folder), run in one transaction; for a store with its own migrations, such as migrations/screensort/sample.sql.",
      isPath: true, requires: ["whenEmpty"])
    var file: String?
    @Parameter(
      "The table whose emptiness means the library is empty; required with 'file'.",
      requires: ["file"])
    var whenEmpty: String?
    /// Where the manifest is, to check the file when it loads.
    @ManifestDirectory var manifestDirectory: URL?

    /// The built-in sample.
    public init() {}
  }

  /// The app's own sample: a script, and the table that must be empty for it to run.
  private struct Script: Sendable {
    var file: String
    var table: String
  }

  private let script: Script?

  /// Checks that `whenEmpty` names a table, and that the file exists; the declarations make
  /// `file` and `whenEmpty` come together in params.
  public init(parameters: Parameters) throws {
    guard let file = parameters.file, let table = parameters.whenEmpty else {
      script = nil
      return
    }
    guard table.first.map({ $0.isLetter || $0 == "_" }) == true,
      table.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
    else {
      throw ParameterError(
        "whenEmpty", "'whenEmpty' must be a table name (letters, digits, _), not '\(table)'.")
    }
    if let directory = parameters.manifestDirectory {
      let url = StepContext.resolve(file, against: directory)
      guard FileManager.default.isReadableFile(atPath: url.path) else {
        throw ParameterError(
          "file", "the sample data file '\(url.path)' does not exist or cannot be read.")
      }
    }
    script = Script(file: file, table: table)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Seeds the library if it is empty; returns how many items it inserted.
  public func run(_ context: StepContext) async throws -> SampleDataResult {
    let store = try context.input(StoreHandle.self)
    guard !store.isReadOnly else {
      throw StepFailure("the store is read-only; sample data cannot be added")
    }
    if let script {
      return try runScript(script, on: store, context: context)
    }
    let table: String
    let insert: (SQLiteConnection) throws -> Int
    switch store.schema {
    case .music: (table, insert) = ("songs", insertSongs)
    case .books: (table, insert) = ("works", insertBooks)
    default:
      throw StepFailure(
        "sample.data has no built-in sample for the store's own schema '\(store.schema.name)'; give 'file', a .sql file of sample rows, and 'whenEmpty', the table it fills"
      )
    }
    let connection = try store.connect()
    var inserted = 0
    if try !Self.hasRow(table, in: connection) {
      inserted = try connection.immediateTransaction { () throws -> Int in
        // Again under the write lock: another launch may have seeded it since the look.
        guard try !Self.hasRow(table, in: connection) else { return 0 }
        return try insert(connection)
      }
    }
    context.log(
      inserted == 0
        ? "the library already has items; no sample data added" : "added \(inserted) sample items")
    return SampleDataResult(inserted: inserted)
  }

  /// Runs the app's file in one write transaction, only when its table has no row.
  /// Whether `table` has a row, read from its first row only: the check costs the same for a
  /// library of ten songs or a million.
  package static func existenceQuery(_ table: String) -> String {
    "SELECT 1 FROM \"\(table)\" LIMIT 1"
  }

  private static func hasRow(_ table: String, in connection: SQLiteConnection) throws -> Bool {
    try connection.integer(existenceQuery(table)) != nil
  }

  private func runScript(_ script: Script, on store: StoreHandle, context: StepContext) throws
    -> SampleDataResult
  {
    let connection = try store.connect()
    func hasRow() throws -> Bool {
      do {
        return try Self.hasRow(script.table, in: connection)
      } catch let error as SQLiteError
        where !error.isBusy && !error.isCorruption && !error.isInterrupted
      {
        // Anything else the query meets is about the table (`no such table`); a store held
        // past the busy timeout, damaged or interrupted is said as it is.
        throw StepFailure(
          "the table '\(script.table)' named by 'whenEmpty' is not in the store '\(store.url.path)' (\(error.message)); name a table the store's migrations create"
        )
      }
    }
    guard try !hasRow() else {
      context.log("'\(script.table)' already has rows; no sample data added")
      return SampleDataResult(inserted: 0)
    }
    let url = context.resolveResource(script.file)
    let sql = try StoreSchema.sqlText(of: url, noun: "the sample data file")
    let inserted = try connection.immediateTransaction { () throws -> Int in
      // Again under the write lock: another launch may have seeded it since the look.
      guard try !hasRow() else { return 0 }
      let before = connection.totalChanges
      do {
        try connection.executeScript(sql)
      } catch let error as SQLiteError {
        throw StepFailure(
          "the sample data file '\(url.path):\(error.line ?? 1)' failed: \(error.message); nothing was added"
        )
      }
      return connection.totalChanges - before
    }
    context.log(
      inserted == 0
        ? "'\(script.table)' already has rows; no sample data added"
        : "added \(inserted) sample rows from \(url.lastPathComponent)")
    return SampleDataResult(inserted: inserted)
  }

  private func insertBooks(_ connection: SQLiteConnection) throws -> Int {
    let books:
      [(title: String, author: String, year: Int64, isbn: String, pages: Int64, status: String)] = [
        ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969, "9780441478125", 304, "read"),
        ("The Dispossessed", "Ursula K. Le Guin", 1974, "9780061054884", 387, "reading"),
        ("Kindred", "Octavia E. Butler", 1979, "9780807083697", 287, "toRead"),
        ("Parable of the Sower", "Octavia E. Butler", 1993, "9781538732182", 345, "toRead"),
        ("Beloved", "Toni Morrison", 1987, "9781400033416", 324, "read"),
        ("Invisible Cities", "Italo Calvino", 1972, "9780156453806", 165, "reading"),
        ("Half of a Yellow Sun", "Chimamanda Ngozi Adichie", 2006, "9781400095209", 543, "toRead"),
      ]
    var authors: [String: Int64] = [:]
    let now = Date().timeIntervalSince1970
    for (offset, book) in books.enumerated() {
      if authors[book.author] == nil {
        try connection.run("INSERT INTO authors (name) VALUES (?)", [.text(book.author)])
        authors[book.author] = try connection.integer("SELECT last_insert_rowid()")
      }
      try connection.run(
        "INSERT INTO works (title, author_id, first_published) VALUES (?, ?, ?)",
        [.text(book.title), .integer(authors[book.author] ?? 0), .integer(book.year)])
      let work = try connection.integer("SELECT last_insert_rowid()") ?? 0
      try connection.run(
        "INSERT INTO editions (work_id, isbn, page_count, format) VALUES (?, ?, ?, 'paperback')",
        [.integer(work), .text(book.isbn), .integer(book.pages)])
      let edition = try connection.integer("SELECT last_insert_rowid()") ?? 0
      try connection.run(
        "INSERT INTO library_entries (edition_id, status, added_at) VALUES (?, ?, ?)",
        [.integer(edition), .text(book.status), .real(now - Double(offset) * 86_400)])
    }
    return books.count
  }

  private func insertSongs(_ connection: SQLiteConnection) throws -> Int {
    let albums: [(artist: String, album: String, titles: [String])] = [
      (
        "Glenn Gould", "Goldberg Variations",
        ["Aria", "Variation 1", "Variation 2", "Variation 3", "Aria da capo"]
      ),
      (
        "Nina Simone", "Little Girl Blue",
        [
          "Mood Indigo", "Don't Smoke in Bed", "He Needs Me", "Little Girl Blue",
          "My Baby Just Cares for Me",
        ]
      ),
      (
        "Miles Davis", "Kind of Blue",
        ["So What", "Freddie Freeloader", "Blue in Green", "All Blues", "Flamenco Sketches"]
      ),
    ]
    let now = Date().timeIntervalSince1970
    var count = 0
    for (albumIndex, album) in albums.enumerated() {
      for (trackIndex, title) in album.titles.enumerated() {
        count += 1
        try connection.run(
          """
          INSERT INTO songs (title, artist, album, duration, play_count, last_played_at, added_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          """,
          [
            .text(title), .text(album.artist), .text(album.album), .real(Double(180 + 17 * count)),
            .integer(Int64((count * 37) % 50)),
            trackIndex % 2 == 0 ? .real(now - Double(count) * 3600) : .null,
            .real(now - Double(albumIndex * 10 + trackIndex) * 86_400),
          ])
      }
    }
    return count
  }
}

/// What `sample.data` did.
public struct SampleDataResult: Sendable, Equatable {
  /// How many works or songs it inserted, or rows its file did; 0 when the library already
  /// had items.
  public var inserted: Int
}
