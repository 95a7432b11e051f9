import CSQLite
import Foundation

/// An error from SQLite, with its result code and message.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// SQLite's primary result code (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, ...).
  public var code: Int32
  /// SQLite's message.
  public var message: String
  /// The line of a script the failing statement starts on, from 1; `nil` outside scripts.
  public var line: Int?

  /// Creates an error.
  public init(code: Int32, message: String, line: Int? = nil) {
    self.code = code
    self.message = message
    self.line = line
  }

  /// The result code for a damaged database.
  public static let corruptCode = SQLITE_CORRUPT

  /// Whether the file is not a database or is damaged.
  public var isCorruption: Bool {
    code == SQLITE_NOTADB || code == SQLITE_CORRUPT
  }

  /// Whether the statement was stopped before it finished (see
  /// ``SQLiteConnection/interruptsWhenCancelled()``).
  public var isInterrupted: Bool { code == SQLITE_INTERRUPT }

  /// Whether another connection held a lock for longer than the busy timeout.
  public var isBusy: Bool {
    code == SQLITE_BUSY || code == SQLITE_LOCKED
  }

  /// Whether SQLite could not write: the disk is full, the file or its folder cannot be
  /// written or opened, or a read-only connection met what only a writer may do (roll back a
  /// hot journal, say).
  public var isWriteFailure: Bool {
    [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM].contains(code)
  }

  /// Whether a read-only connection met what only a writer may do, such as rolling back the
  /// hot journal a stopped writer left.
  public var isReadOnly: Bool { code == SQLITE_READONLY }

  /// `message (SQLite code N)`.
  public var description: String { "\(message) (SQLite code \(code))" }
}

/// A value bound to or read from a statement.
public enum SQLiteValue: Sendable, Equatable, Codable, ExpressibleByStringLiteral,
  ExpressibleByIntegerLiteral
{
  /// An integer.
  case integer(Int64)
  /// A floating-point number.
  case real(Double)
  /// Text.
  case text(String)
  /// NULL.
  case null

  /// Text.
  public init(stringLiteral value: String) { self = .text(value) }
  /// An integer.
  public init(integerLiteral value: Int64) { self = .integer(value) }
}

/// One connection to a SQLite database file. Not shareable between tasks: open one per step.
public final class SQLiteConnection {
  /// How to open the file.
  public enum Mode: Sendable {
    /// Reading only; the file must exist.
    case readOnly
    /// Reading and writing; the file must exist.
    case readWrite
    /// Reading and writing, creating the file if needed.
    case create
  }

  fileprivate let handle: OpaquePointer
  private let busyTimeout: Duration

  /// Opens the database at `url`; with `followingLinks` false, refuses a symbolic link
  /// there (a caller that resolved the path itself: a link planted since is not followed).
  public convenience init(
    url: URL, mode: Mode, busyTimeout: Duration = .seconds(5), followingLinks: Bool = true
  ) throws(SQLiteError) {
    var flags: Int32 = SQLITE_OPEN_NOMUTEX | (followingLinks ? 0 : SQLITE_OPEN_NOFOLLOW)
    switch mode {
    case .readOnly: flags |= SQLITE_OPEN_READONLY
    case .readWrite: flags |= SQLITE_OPEN_READWRITE
    case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    }
    try self.init(path: url.path, flags: flags, busyTimeout: busyTimeout)
  }

  /// A new, empty database in memory, gone when the connection is.
  public static func inMemory() throws(SQLiteError) -> SQLiteConnection {
    try SQLiteConnection(
      path: ":memory:", flags: SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READWRITE, busyTimeout: .zero)
  }

  private init(path: String, flags: Int32, busyTimeout: Duration) throws(SQLiteError) {
    var pointer: OpaquePointer?
    let result = sqlite3_open_v2(path, &pointer, flags, nil)
    guard result == SQLITE_OK, let pointer else {
      let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
      sqlite3_close_v2(pointer)
      throw SQLiteError(code: result, message: message)
    }
    handle = pointer
    self.busyTimeout = busyTimeout
    waitWhenBusy(for: busyTimeout)
  }

  /// How long SQLite's busy handler waits for a lock before a statement fails.
  private func waitWhenBusy(for timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    sqlite3_busy_timeout(
      handle, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  /// Runs one or more statements that return no rows.
  public func execute(_ sql: String) throws(SQLiteError) {
    var errorMessage: UnsafeMutablePointer<CChar>?
    let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
    guard result == SQLITE_OK else {
      let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
      sqlite3_free(errorMessage)
      throw SQLiteError(code: result & 0xFF, message: message)
    }
  }

  /// Runs a script of statements one by one, so that a failure names the line its statement
  /// starts on (``SQLiteError/line``).
  public func executeScript(_ sql: String) throws(SQLiteError) {
    try runScript(sql, guard: nil)
  }

  /// Runs a script inside the transaction the connection is in (a migration inside
  /// `store.init`'s), which the script cannot end, begin anew or leave: `COMMIT`, `END`,
  /// `ROLLBACK`, `BEGIN`, the release of a savepoint the script did not open, `ATTACH`,
  /// `DETACH`, `VACUUM` and the pragmas that change the journal are refused by SQLite's own
  /// parser (an authorizer) as each statement is prepared, and a statement after which the
  /// transaction has ended anyway (a trigger's `RAISE(ROLLBACK)`) stops the script.
  ///
  /// Check the script first with ``transactionEscape(in:)`` to refuse it before any of it runs.
  /// - Throws: ``SQLiteError`` with the line of the failing or refused statement.
  public func executeScriptInTransaction(_ sql: String) throws(SQLiteError) {
    guard sqlite3_get_autocommit(handle) == 0 else {
      throw SQLiteError(code: SQLITE_MISUSE, message: "no transaction is open to run the script in")
    }
    let transactionGuard = TransactionGuard()
    let context = Unmanaged.passUnretained(transactionGuard).toOpaque()
    sqlite3_set_authorizer(handle, transactionGuardCallback, context)
    defer { sqlite3_set_authorizer(handle, nil, nil) }
    try withExtendedLifetime(transactionGuard) { () throws(SQLiteError) in
      try runScript(sql, guard: transactionGuard)
    }
  }

  /// The first statement of `script` that would end, begin or leave the transaction it runs
  /// in (see ``executeScriptInTransaction(_:)``), as an error with its line; `nil` when there
  /// is none. Only parses the script, with SQLite's own parser, on a scratch database: comments
  /// and string literals that spell `COMMIT` are not statements, and nothing is run.
  public static func transactionEscape(in script: String) -> SQLiteError? {
    guard let scratch = try? SQLiteConnection.inMemory() else { return nil }
    let transactionGuard = TransactionGuard()
    let context = Unmanaged.passUnretained(transactionGuard).toOpaque()
    sqlite3_set_authorizer(scratch.handle, transactionGuardCallback, context)
    defer { sqlite3_set_authorizer(scratch.handle, nil, nil) }
    return withExtendedLifetime(transactionGuard) { () -> SQLiteError? in
      // Split where SQLite's tokenizer says a statement is complete (a trigger's body, a
      // string or a comment holding `;` is not split), then prepare each on its own: one
      // that cannot be prepared here (its table is created by an earlier one) still has its
      // boundaries right.
      let bytes = Array(script.utf8)
      var start = 0
      var lineOfStart = 1
      var index = 0
      while index < bytes.count {
        defer { index += 1 }
        guard bytes[index] == UInt8(ascii: ";") else { continue }
        let text = String(decoding: bytes[start...index], as: UTF8.self)
        guard sqlite3_complete(text) != 0 else { continue }
        if let refusal = refusal(of: text, on: scratch, transactionGuard) {
          return SQLiteError(
            code: SQLITE_AUTH, message: refusal, line: lineOfStart + firstLine(of: text) - 1)
        }
        lineOfStart += bytes[start...index].count { $0 == 0x0A }
        start = index + 1
      }
      let rest = String(decoding: bytes[start...], as: UTF8.self)
      if let refusal = refusal(of: rest, on: scratch, transactionGuard) {
        return SQLiteError(
          code: SQLITE_AUTH, message: refusal, line: lineOfStart + firstLine(of: rest) - 1)
      }
      return nil
    }
  }

  /// Why the one statement `text` may not run inside a caller's transaction, by preparing it.
  private static func refusal(
    of text: String, on scratch: SQLiteConnection, _ transactionGuard: TransactionGuard
  ) -> String? {
    transactionGuard.refusal = nil
    var statement: OpaquePointer?
    let result = sqlite3_prepare_v2(scratch.handle, text, -1, &statement, nil)
    sqlite3_finalize(statement)
    return transactionGuard.refusal
      ?? (result == SQLITE_OK && statement != nil
        ? TransactionGuard.refusal(ofKeywordsIn: text) : nil)
  }

  /// The line, from 1, of `text`'s first character that is not a blank or in a comment.
  private static func firstLine(of text: String) -> Int {
    let bytes = Array(text.utf8CString)
    return bytes.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return 1 }
      return line(of: base, in: base)
    }
  }

  private func runScript(_ sql: String, guard transactionGuard: TransactionGuard?)
    throws(SQLiteError)
  {
    let bytes = Array(sql.utf8CString)
    let failure = bytes.withUnsafeBufferPointer { buffer -> SQLiteError? in
      guard let base = buffer.baseAddress else { return nil }
      var start = base
      while start.pointee != 0 {
        var statement: OpaquePointer?
        var next: UnsafePointer<CChar>?
        transactionGuard?.refusal = nil
        var result = sqlite3_prepare_v2(handle, start, -1, &statement, &next)
        if result == SQLITE_OK, let statement, transactionGuard != nil, let next {
          let text = String(
            decoding: UnsafeBufferPointer(start: start, count: next - start).map {
              UInt8(bitPattern: $0)
            }, as: UTF8.self)
          if let refusal = TransactionGuard.refusal(ofKeywordsIn: text) {
            sqlite3_finalize(statement)
            return SQLiteError(
              code: SQLITE_AUTH, message: refusal, line: Self.line(of: start, in: base))
          }
        }
        if result == SQLITE_OK, let statement {
          repeat { result = sqlite3_step(statement) } while result == SQLITE_ROW
          sqlite3_finalize(statement)
          if result == SQLITE_DONE { result = SQLITE_OK }
        }
        if let refusal = transactionGuard?.refusal {
          return SQLiteError(
            code: SQLITE_AUTH, message: refusal, line: Self.line(of: start, in: base))
        }
        guard result == SQLITE_OK else {
          let line = Self.line(of: start, in: base)
          return SQLiteError(code: result & 0xFF, message: lastErrorMessage, line: line)
        }
        if transactionGuard != nil, sqlite3_get_autocommit(handle) != 0 {
          return SQLiteError(
            code: SQLITE_AUTH,
            message: "the statement ended the transaction the script runs in",
            line: Self.line(of: start, in: base))
        }
        guard let next, next > start else { return nil }
        start = next
      }
      return nil
    }
    if let failure { throw failure }
  }

  /// The line of the first character of `statement` that is not a blank or in a comment.
  fileprivate static func line(of statement: UnsafePointer<CChar>, in script: UnsafePointer<CChar>)
    -> Int
  {
    var cursor = statement
    while true {
      while [0x20, 0x09, 0x0A, 0x0D].contains(cursor.pointee) { cursor += 1 }
      if cursor.pointee == 0x2D, cursor[1] == 0x2D {
        while cursor.pointee != 0, cursor.pointee != 0x0A { cursor += 1 }
      } else if cursor.pointee == 0x2F, cursor[1] == 0x2A {
        cursor += 2
        while cursor.pointee != 0, !(cursor.pointee == 0x2A && cursor[1] == 0x2F) { cursor += 1 }
        if cursor.pointee != 0 { cursor += 2 }
      } else {
        break
      }
    }
    var line = 1
    var scan = script
    while scan < cursor {
      if scan.pointee == 0x0A { line += 1 }
      scan += 1
    }
    return line
  }

  /// Makes a long statement stop with `SQLITE_INTERRUPT` soon after the task running it is
  /// cancelled: SQLite asks every 1,000 steps of its virtual machine. A check reading a whole
  /// store then ends with the launch instead of holding its thread to the end.
  public func interruptsWhenCancelled() {
    sqlite3_progress_handler(handle, 1000, { _ in Task.isCancelled ? 1 : 0 }, nil)
  }

  /// Prepares one statement.
  public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
    var statement: OpaquePointer?
    let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
    guard result == SQLITE_OK, let statement else {
      throw SQLiteError(code: result & 0xFF, message: lastErrorMessage)
    }
    return SQLiteStatement(statement: statement, connection: self)
  }

  /// Runs a query and maps every row.
  public func query<Row>(
    _ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> Row
  ) throws -> [Row] {
    let statement = try prepare(sql)
    try statement.bind(values)
    var rows: [Row] = []
    while try statement.step() { rows.append(try row(statement)) }
    return rows
  }

  /// The first column of the first row, as an integer; `nil` when there is no row.
  public func integer(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
    let statement = try prepare(sql)
    try statement.bind(values)
    return try statement.step() ? statement.integer(0) : nil
  }

  /// Runs a statement that returns no rows, with values bound to its parameters.
  public func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
    let statement = try prepare(sql)
    try statement.bind(values)
    while try statement.step() {}
  }

  /// Runs `body` in a transaction that takes the write lock at once (`BEGIN IMMEDIATE`), so
  /// two launches checking then writing cannot interleave. Rolls back when `body` throws.
  public func immediateTransaction<Result>(_ body: () throws -> Result) throws -> Result {
    try execute("BEGIN IMMEDIATE")
    do {
      let result = try body()
      try execute("COMMIT")
      return result
    } catch {
      try? execute("ROLLBACK")
      throw error
    }
  }

  /// Runs `body` again while it fails with `SQLITE_BUSY`, until the connection's busy timeout
  /// has passed since the first try; then the failure is that of the last try.
  ///
  /// SQLite's busy handler waits only for a connection that holds no lock. One that holds a
  /// read lock and asks for the write lock while another connection has it gets `SQLITE_BUSY`
  /// at once, since waiting could deadlock: `PRAGMA journal_mode = WAL` on a rollback-journal
  /// store does that, and a WAL read snapshot gone stale does too (`SQLITE_BUSY_SNAPSHOT`).
  /// The way out is to let go of the read lock and start again, so `body` must leave no
  /// transaction open when it throws. Each try waits only for what is left of the timeout.
  public func retryingWhenBusy<Result>(_ body: () throws -> Result) throws -> Result {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: busyTimeout)
    defer { waitWhenBusy(for: busyTimeout) }
    var pause = Duration.milliseconds(2)
    while true {
      do {
        return try body()
      } catch let error as SQLiteError where error.code == SQLITE_BUSY {
        guard clock.now < deadline else { throw error }
        // A random pause, so that launches refused together do not come back together.
        let wait = min(pause * Double.random(in: 0.5...1.5), clock.now.duration(to: deadline))
        Thread.sleep(
          forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds)
            * 1e-18)
        pause = min(pause * 2, .milliseconds(100))
        let left = clock.now.duration(to: deadline)
        guard left > .zero else { throw error }
        waitWhenBusy(for: left)
      }
    }
  }

  /// How many rows the connection's statements inserted, updated or deleted so far.
  public var totalChanges: Int { Int(sqlite3_total_changes(handle)) }

  /// `PRAGMA application_id`: which application's format the file holds, 0 when unset.
  public func applicationID() throws(SQLiteError) -> Int32 {
    Int32(truncatingIfNeeded: try integer("PRAGMA application_id") ?? 0)
  }

  /// `PRAGMA journal_mode`, in lower case.
  public func journalMode() throws(SQLiteError) -> String {
    let statement = try prepare("PRAGMA journal_mode")
    return try statement.step() ? (statement.text(0) ?? "").lowercased() : ""
  }

  /// The names of the tables and virtual tables the schema declares, SQLite's own tables and
  /// the shadow tables of full-text indexes left out; reads only the schema, never the tables.
  public func tableNames() throws(SQLiteError) -> Set<String> {
    let statement = try prepare(
      """
      SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual')
      AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
      """)
    var names: Set<String> = []
    while try statement.step() { names.insert(statement.text(0) ?? "") }
    return names
  }

  /// `PRAGMA user_version`: the schema version stored in the file.
  public func userVersion() throws(SQLiteError) -> Int {
    Int(try integer("PRAGMA user_version") ?? 0)
  }

  var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement of a ``SQLiteConnection``.
public final class SQLiteStatement {
  private let statement: OpaquePointer
  private let connection: SQLiteConnection

  init(statement: OpaquePointer, connection: SQLiteConnection) {
    self.statement = statement
    self.connection = connection
  }

  deinit {
    sqlite3_finalize(statement)
  }

  /// Binds values to the statement's parameters, in order, after resetting it.
  public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
    sqlite3_reset(statement)
    sqlite3_clear_bindings(statement)
    // SQLITE_TRANSIENT: SQLite copies the text before this call returns.
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let result: Int32
      switch value {
      case .integer(let integer): result = sqlite3_bind_int64(statement, index, integer)
      case .real(let real): result = sqlite3_bind_double(statement, index, real)
      case .text(let text): result = sqlite3_bind_text(statement, index, text, -1, transient)
      case .null: result = sqlite3_bind_null(statement, index)
      }
      guard result == SQLITE_OK else {
        throw SQLiteError(code: result, message: connection.lastErrorMessage)
      }
    }
  }

  /// How many virtual-machine instructions the statement has run: the measure of its work
  /// that does not depend on the machine or the cache, for tests that a query reads as much
  /// of a large table as of a small one.
  package var virtualMachineSteps: Int {
    Int(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0))
  }

  /// Advances to the next row; `false` when there is none.
  public func step() throws(SQLiteError) -> Bool {
    switch sqlite3_step(statement) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let result: throw SQLiteError(code: result & 0xFF, message: connection.lastErrorMessage)
    }
  }

  /// Column `index` of the current row as an integer.
  public func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

  /// Column `index` of the current row as a number.
  public func real(_ index: Int32) -> Double { sqlite3_column_double(statement, index) }

  /// Column `index` of the current row as text; `nil` for NULL.
  public func text(_ index: Int32) -> String? {
    guard let pointer = sqlite3_column_text(statement, index) else { return nil }
    return String(cString: pointer)
  }

  /// How many columns each row has.
  public var columnCount: Int32 { sqlite3_column_count(statement) }

  /// Column `index` of the current row, as the type SQLite stored it in (blobs as NULL).
  public func value(_ index: Int32) -> SQLiteValue {
    switch sqlite3_column_type(statement, index) {
    case SQLITE_INTEGER: .integer(integer(index))
    case SQLITE_FLOAT: .real(real(index))
    case SQLITE_TEXT: text(index).map { .text($0) } ?? .null
    default: .null
    }
  }

  /// Whether column `index` of the current row is NULL.
  public func isNull(_ index: Int32) -> Bool {
    sqlite3_column_type(statement, index) == SQLITE_NULL
  }
}

/// What a script run inside a caller's transaction may not do, told by SQLite's authorizer
/// as each statement is prepared: the first refusal of the statement, and the savepoints the
/// script opened itself (the only ones it may release or roll back to).
private final class TransactionGuard {
  var refusal: String?
  /// The savepoints the script opened and has not released, innermost last. A dry run
  /// (``SQLiteConnection/transactionEscape(in:)``) prepares each statement once, in order,
  /// as the run does, so both keep the same stack: a `RELEASE` of a savepoint the script
  /// already released is refused before anything runs, not halfway through the migration.
  var savepoints: [String] = []

  /// The pragmas that change or end the journal, which cannot change inside a transaction
  /// without ending it or failing halfway.
  static let refusedPragmas: Set<String> = [
    "journal_mode", "locking_mode", "wal_checkpoint", "wal_autocheckpoint",
  ]

  func judge(_ action: Int32, _ first: String?, _ second: String?) -> Int32 {
    let refusal: String?
    switch action {
    case SQLITE_TRANSACTION:
      refusal =
        "'\(first ?? "")' would \(first == "BEGIN" ? "begin a transaction inside" : "end") the transaction it runs in"
    case SQLITE_ATTACH: refusal = "'ATTACH' would reach outside the transaction it runs in"
    case SQLITE_DETACH: refusal = "'DETACH' would reach outside the transaction it runs in"
    case SQLITE_PRAGMA where Self.refusedPragmas.contains((first ?? "").lowercased()):
      refusal = "'PRAGMA \(first ?? "")' cannot change inside the transaction it runs in"
    case SQLITE_SAVEPOINT:
      let name = (second ?? "").lowercased()
      switch first {
      case "BEGIN":
        savepoints.append(name)
        refusal = nil
      case let operation where savepoints.contains(name):
        if operation == "RELEASE", let index = savepoints.lastIndex(of: name) {
          savepoints.removeSubrange(index...)
        }
        refusal = nil
      default:
        refusal =
          "'\(first == "RELEASE" ? "RELEASE" : "ROLLBACK TO") \(second ?? "")' names a savepoint the script did not open, and would end the transaction it runs in"
      }
    default:
      refusal = nil
    }
    guard let refusal else { return SQLITE_OK }
    self.refusal = self.refusal ?? refusal
    return SQLITE_DENY
  }

  /// What a statement's leading keyword says that no authorizer is asked about: `VACUUM`
  /// cannot run inside a transaction. The statement's text is SQLite's own split of the
  /// script; comments before its first keyword are skipped.
  static func refusal(ofKeywordsIn statement: String) -> String? {
    var text = Substring(statement)
    while true {
      text = text.drop { $0.isWhitespace }
      if text.hasPrefix("--") {
        text = text.drop { $0 != "\n" }
      } else if text.hasPrefix("/*") {
        guard let end = text.range(of: "*/") else { return nil }
        text = text[end.upperBound...]
      } else {
        break
      }
    }
    let keyword = text.prefix { $0.isLetter }.uppercased()
    return keyword == "VACUUM" ? "'VACUUM' cannot run inside the transaction it runs in" : nil
  }
}

/// SQLite's authorizer calls this for every action of a statement being prepared.
private let transactionGuardCallback:
  @convention(c) (
    UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
    UnsafePointer<CChar>?, UnsafePointer<CChar>?
  ) -> Int32 = { context, action, first, second, _, _ in
    guard let context else { return SQLITE_OK }
    let transactionGuard = Unmanaged<TransactionGuard>.fromOpaque(context).takeUnretainedValue()
    return transactionGuard.judge(
      action, first.map { String(cString: $0) }, second.map { String(cString: $0) })
  }
