import Foundation
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// One opening of a store by `store.init`: looks before it writes, reads only the header and
/// the schema (never the tables), and writes only inside one `BEGIN IMMEDIATE` transaction
/// that reads the version again, so any number of launches at once migrate it exactly once.
struct StoreOpener {
  let url: URL
  let schema: StoreSchema
  let readOnly: Bool
  let create: Bool
  let createFolders: Bool
  let adopt: Bool
  let busyTimeout: Duration
  let integrityCheck: Bool
  let context: StepContext

  /// What the header and the schema say, read without touching a table.
  struct State {
    var version: Int
    var applicationID: Int32
    var tables: Set<String>
    var journalMode: String
  }

  /// Opens the store. Launches opening a store hold a shared lock on its folder while they
  /// look at it and open it, and one that recovers a damaged store holds it exclusively while
  /// it moves it aside and creates the new one, so no launch sees a store half moved aside,
  /// finds its path empty in between, or creates a new one beside the old WAL.
  func openStore() throws -> StoreHandle {
    try prepareFolder()
    switch try FolderLock.holding(folder, exclusive: false, openLocked) {
    case .opened(let handle):
      return handle
    case .damaged(let reason, let shm, let found):
      return try recover(from: reason, shm: shm, found: found)
    case .interruptedRecovery:
      return try finishRecovery()
    }
  }

  private var folder: URL { url.deletingLastPathComponent() }

  private enum Opening {
    case opened(StoreHandle)
    /// `found` is the file's number when it was found damaged.
    case damaged(reason: String, shm: Data?, found: Int?)
    /// A launch was killed while it moved the store aside.
    case interruptedRecovery
  }

  private func openLocked() throws -> Opening {
    // Before anything else: the store at the path may be half moved aside, or gone with its
    // WAL still there, and nothing may open it until the move is finished.
    var info = stat()
    if lstat(StoreHandle.recoveryMarker(for: url).path, &info) == 0 {
      guard !readOnly else {
        throw StepFailure(
          "the store '\(url.path)' was being moved aside when a launch stopped; nothing was changed in read-only mode, and the next launch that opens it read-write finishes the move"
        )
      }
      return .interruptedRecovery
    }
    switch try StoreFile.at(url) {
    case .folder:
      throw StepFailure(
        "'\(url.path)' is a folder; 'path' names the store's file in it, such as '\(url.appendingPathComponent("library.sqlite").path)'"
      )
    case .foreign(let start):
      throw StepFailure(
        "'\(url.path)' is not a SQLite database (it starts with \(start)); give another path or move it yourself"
      )
    case .special(let what):
      throw StepFailure(
        "'\(url.path)' is \(what), not a SQLite database; give the path of a file or of none yet"
      )
    case .missing:
      guard create else { throw missingStore }
      let scripts = try newStoreScripts(otherwise: "no store was created at '\(url.path)'")
      return .opened(try createStore(movedAside: nil, scripts: scripts))
    case .empty where !create:
      throw StepFailure(
        "'\(url.path)' is an empty file, not a store; with \"create\": false store.init makes none in it: remove the file, or set \"create\": true"
      )
    case .sqlite, .empty:
      break
    }
    let found = Self.identity(of: url)

    if let finding = try recordedDamage(found: found) {
      return .damaged(reason: "recorded by an earlier launch: \(finding)", shm: nil, found: found)
    }
    let shm = readOnly ? nil : sharedMemorySnapshot()
    let state: State
    do {
      state = try probeRollingBack()
    } catch let error as SQLiteError where error.isCorruption {
      return .damaged(reason: error.message, shm: shm, found: found)
    } catch let error as SQLiteError {
      throw explain(error)
    }
    let needsMigration = try judge(state)
    if readOnly {
      guard !needsMigration else {
        throw StepFailure(
          "the read-only store '\(url.path)' is at version \(state.version) and needs migrating to \(schema.latestVersion); open it read-write"
        )
      }
    } else if needsMigration || state.journalMode != "wal"
      || state.applicationID != schema.applicationID
    {
      let scripts =
        needsMigration
        ? try checkedScripts(
          above: state.version,
          otherwise: "the store '\(url.path)' was left as it was, at version \(state.version)")
        : [:]
      // A store at version 0 gets the schema's tables in this launch (a launch created it and
      // its migrations failed, or `adopt`): they hold nothing yet, and nothing the app keeps
      // can be judged against them.
      return .opened(
        try openForWriting(movedAside: nil, isNew: state.version == 0, scripts: scripts))
    }
    context.reportProgress(1, "store is up to date (version \(state.version))")
    return .opened(handle(version: state.version, movedAside: nil, isNew: false))
  }

  private func handle(version: Int, movedAside: URL?, isNew: Bool) -> StoreHandle {
    StoreHandle(
      url: url, schema: schema, version: version, isReadOnly: readOnly, busyTimeout: busyTimeout,
      movedAside: movedAside, isNew: isNew, isFallback: context.isFallback)
  }

  /// The finding of the damage marker beside the store when it still holds: the marker names
  /// this very file (an older marker names none) and the store fails its integrity check.
  /// A stale marker (left by a recovery killed midway, or of a store since replaced) never
  /// moves a healthy store aside: it is removed, and the launch says so.
  private func recordedDamage(found: Int?) throws -> String? {
    let marker = StoreHandle.damageMarker(for: url)
    let data: Data
    do {
      guard let read = try SafeFiles.contentsOfRegularFile(at: marker, limit: 64 * 1024) else {
        return nil
      }
      data = read
    } catch {
      context.log("left '\(marker.path)' alone: \(error)")
      return nil
    }
    var text = String(decoding: data, as: UTF8.self)
    var stale: String?
    if text.hasPrefix("store "), let newline = text.firstIndex(of: "\n") {
      let named = text[text.index(text.startIndex, offsetBy: 6)..<newline]
      text = String(text[text.index(after: newline)...])
      if let current = StoreHandle.identity(of: url), named != current {
        stale = "it was written for another file at that path"
      }
    }
    if stale == nil {
      switch integrityProblem() {
      case .some(let problem): return text.isEmpty ? problem : text
      case .none: stale = "the store passes its integrity check"
      }
    }
    guard let stale else { return nil }
    // What the marker says, when it says anything: an empty one is named without it.
    let said = text.isEmpty ? "" : " (\(text))"
    guard !readOnly else {
      context.log(
        "ignored the damage marker '\(marker.lastPathComponent)'\(said): \(stale); it was left in read-only mode"
      )
      return nil
    }
    // Only the marker that was judged: one written again meanwhile is another finding.
    if (try? SafeFiles.contentsOfRegularFile(at: marker, limit: 64 * 1024)) == data {
      unlink(marker.path)
    }
    context.log(
      "removed the stale damage marker '\(marker.lastPathComponent)'\(said): \(stale), so it was kept"
    )
    return nil
  }

  /// `PRAGMA integrity_check` through a read-only connection: `nil` when the store passes,
  /// otherwise what is wrong. Reads the whole store, so it runs only when a marker says the
  /// store is damaged.
  ///
  /// A transaction a stopped writer left in a rollback journal is rolled back first
  /// (``rolledBackStoppedWriter(after:)``): the store is judged as any writer would find it,
  /// never moved aside for what a read-only connection cannot read.
  private func integrityProblem(rollingBack: Bool = true) -> String? {
    do {
      let connection = try SQLiteConnection(
        url: url, mode: .readOnly, busyTimeout: busyTimeout, followingLinks: false)
      let result = try connection.retryingWhenBusy {
        try connection.query("PRAGMA integrity_check") { $0.text(0) ?? "" }
      }
      return result == ["ok"]
        ? nil : "integrity check failed: \(result.prefix(3).joined(separator: "; "))"
    } catch let error as SQLiteError {
      if error.isCorruption { return error.message }
      if rollingBack, (try? rolledBackStoppedWriter(after: error)) == true {
        return integrityProblem(rollingBack: false)
      }
      // Busy or unreadable is no finding either way: the marker's word stands.
      return "\(error)"
    } catch {
      return "\(error)"
    }
  }

  /// Reads the store through a read-only connection, which never checkpoints its WAL into
  /// the file when it closes: a damaged store stays byte for byte as it was found.
  private func probe() throws -> State {
    let connection = try SQLiteConnection(
      url: url, mode: .readOnly, busyTimeout: busyTimeout, followingLinks: false)
    let state = try connection.retryingWhenBusy { try Self.inspect(connection) }
    if integrityCheck {
      let result = try connection.query("PRAGMA quick_check") { $0.text(0) ?? "" }
      if result != ["ok"] {
        throw SQLiteError(
          code: SQLiteError.corruptCode,
          message: "integrity check failed: \(result.prefix(3).joined(separator: "; "))")
      }
    }
    return state
  }

  /// ``probe()``, after rolling back what a writer stopped mid-transaction in a rollback
  /// journal left (``rolledBackStoppedWriter(after:)``); a read-only launch leaves it and says
  /// so.
  private func probeRollingBack() throws -> State {
    do {
      return try probe()
    } catch let error as SQLiteError where error.isReadOnly {
      if try rolledBackStoppedWriter(after: error) { return try probe() }
      let journal = "'\(url.lastPathComponent)-journal'"
      switch Self.journal(beside: url) {
      case .transaction where readOnly:
        throw StepFailure(
          "the store '\(url.path)' has a transaction that a stopped writer never committed in \(journal), which only a read-write connection can roll back; nothing was changed in read-only mode, and the next launch that opens it read-write rolls it back"
        )
      case .stranger:
        // SQLite takes any file by that name for the store's journal, and a writer would
        // delete one it cannot use: it is someone's, and left alone.
        throw StepFailure(
          "\(journal) beside the store '\(url.path)' is not a SQLite journal, yet SQLite takes a file by that name for the store's and would delete it; move it elsewhere, and the store opens"
        )
      default:
        throw error
      }
    }
  }

  /// After `error` from a read-only connection: rolls back the transaction a writer stopped
  /// mid-way left in the store's rollback journal, and returns whether it did. SQLite takes
  /// such a journal (hot: its writer holds no lock any more) for one a read-only connection
  /// cannot roll back (`SQLITE_READONLY`); a read-write connection's first read rolls it
  /// back, as the app's would. Only in a read-write launch, and only for a file beside the
  /// store (its target's, for a link) that starts as SQLite's journals do.
  private func rolledBackStoppedWriter(after error: SQLiteError) throws -> Bool {
    guard !readOnly, error.isReadOnly, Self.journal(beside: url) == .transaction else {
      return false
    }
    let connection = try SQLiteConnection(
      url: url, mode: .readWrite, busyTimeout: busyTimeout, followingLinks: false)
    _ = try connection.retryingWhenBusy { try connection.userVersion() }
    guard Self.journal(beside: url) != .transaction else { return false }
    context.log(
      "rolled back the transaction a stopped writer left in '\(url.lastPathComponent)-journal'; it was never committed"
    )
    return true
  }

  /// What lies where SQLite keeps the store's rollback journal (beside the link's target,
  /// for a link).
  private enum Journal {
    /// Nothing, or a journal with no transaction in it (empty, or its header cleared).
    case absent
    /// A journal with a transaction in it: a regular file that starts with the 8 bytes every
    /// journal header starts with.
    case transaction
    /// Something else: a file that is no journal, a link, a folder.
    case stranger
  }

  private static func journal(beside url: URL) -> Journal {
    let path = url.resolvingSymlinksInPath().path + "-journal"
    // Judged on the open file: a link fails to open (ELOOP), a FIFO opens without waiting.
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return errno == ENOENT ? .absent : .stranger }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
      return .stranger
    }
    var header = [UInt8](repeating: 0, count: 8)
    let count = read(descriptor, &header, 8)
    if count <= 0 || header.allSatisfy({ $0 == 0 }) { return .absent }
    return count == 8 && header == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
      ? .transaction : .stranger
  }

  /// Reading the schema first makes a damaged first page fail here, with `SQLITE_CORRUPT`.
  private static func inspect(_ connection: SQLiteConnection) throws(SQLiteError) -> State {
    let tables = try connection.tableNames()
    return State(
      version: try connection.userVersion(), applicationID: try connection.applicationID(),
      tables: tables, journalMode: try connection.journalMode())
  }

  /// Refuses a store this schema cannot open; returns whether migrations are pending.
  private func judge(_ state: State) throws -> Bool {
    if state.applicationID != schema.applicationID,
      let owner = StoreSchema.all.first(where: { $0.applicationID == state.applicationID })
    {
      throw StepFailure(
        "'\(url.path)' holds a \(owner.name) store at version \(state.version), not a \(schema.name) store; give store.init the schema it was created with, or another path"
      )
    }
    guard state.version <= schema.latestVersion else {
      throw StepFailure(
        "the store '\(url.path)' is at schema version \(state.version), newer than this build knows (\(schema.latestVersion)); update the app"
      )
    }
    if state.version == 0 {
      guard state.tables.isEmpty || adopt else {
        throw StepFailure(
          "'\(url.path)' is a database this schema did not create: it has the tables \(Self.list(state.tables)) and no schema version; give another path, or set \"adopt\": true to add the \(schema.name) schema's tables to it"
        )
      }
      return schema.latestVersion > 0
    }
    if state.applicationID != schema.applicationID {
      // Stores made before the schema's identity was recorded are told by their tables, for
      // which the migrations they have are read.
      let expected: Set<String>
      do {
        expected = try schema.tables(atVersion: state.version)
      } catch let error as StepFailure {
        throw StepFailure(
          "cannot tell whether '\(url.path)' holds a \(schema.name) store, as it records no schema identity (application_id) to tell it by: \(error.message)"
        )
      }
      let missing = expected.subtracting(state.tables)
      if !missing.isEmpty {
        let other = StoreSchema.all.first { other in
          other != schema && other.latestVersion >= state.version
            && (try? other.tables(atVersion: state.version))?.isSubset(of: state.tables) == true
        }
        throw StepFailure(
          "'\(url.path)' holds \(other.map { "a \($0.name) store" } ?? "a store of another schema") at version \(state.version), without the tables \(Self.list(missing)) of the \(schema.name) schema; give store.init the schema it was created with, or another path"
        )
      }
    }
    return state.version < schema.latestVersion
  }

  private static func list(_ names: Set<String>) -> String {
    let sorted = names.sorted()
    let shown = sorted.prefix(5).joined(separator: ", ")
    return sorted.count > 5 ? "\(shown) and \(sorted.count - 5) more" : shown
  }

  /// Switches to WAL, then migrates inside one write transaction that reads the state again:
  /// another launch may have migrated the store while this one waited for the lock.
  ///
  /// WAL first, whatever the migration does: the app's and its extensions' readers go on
  /// reading while it runs, and a migration killed midway leaves its changes in the WAL,
  /// which any connection ignores, read-only ones included; in a rollback journal it would
  /// leave a hot journal that only a read-write connection can roll back. A failed migration
  /// leaves the store's data and version as they were, in WAL mode.
  ///
  /// Both are tried again while SQLite refuses them at once (see
  /// ``SQLiteConnection/retryingWhenBusy(_:)``): switching a rollback-journal store to WAL
  /// reads the file's header before it asks for the write lock, so launches opening an old
  /// store together refuse one another instead of waiting.
  private func openForWriting(movedAside: URL?, isNew: Bool, scripts: [Int: String]) throws
    -> StoreHandle
  {
    let result: (from: Int, to: Int)
    do {
      let connection = try SQLiteConnection(
        url: url, mode: .create, busyTimeout: busyTimeout, followingLinks: false)
      // Before its tables: a store found at version 0 is new again to the next launch.
      if isNew { try recordCreation() }
      result = try connection.retryingWhenBusy {
        if try connection.journalMode() != "wal" {
          try connection.execute("PRAGMA journal_mode = WAL")
        }
        return try migrate(connection, scripts: scripts)
      }
    } catch let error as SQLiteError {
      throw explain(error)
    }
    if result.from == result.to {
      context.reportProgress(1, "store is up to date (version \(result.to))")
    } else {
      context.reportProgress(1, "store at version \(result.to)")
      context.log("migrated the store from version \(result.from) to \(result.to)")
    }
    return handle(version: result.to, movedAside: movedAside, isNew: isNew)
  }

  /// Records, beside the store, that it is new now (``StoreHandle/recordCreation(of:at:)``):
  /// every later launch keeps what the app wrote before it from the steps that judge the
  /// app's data against it.
  private func recordCreation() throws {
    do {
      try StoreHandle.recordCreation(of: url)
    } catch {
      throw StepFailure(
        "cannot record that the store '\(url.path)' is new (\(error)), which keeps the app's"
          + " older data from being judged against it; the store was left at version 0 until a"
          + " launch can record it")
    }
  }

  /// The statements of the migrations above `version`, by version, each read and checked
  /// (``StoreSchema/Migration/checkedSQL()``) before anything is written: a file that cannot
  /// be used, or a statement that would end the transaction (and commit half a migration),
  /// fails the step with `otherwise`, what became of the store, added. Only these files are
  /// read: a launch on an up-to-date store opens none.
  private func checkedScripts(above version: Int, otherwise: String) throws(StepFailure)
    -> [Int: String]
  {
    var scripts: [Int: String] = [:]
    for migration in schema.migrations where migration.version > version {
      do {
        scripts[migration.version] = try migration.checkedSQL()
      } catch {
        throw StepFailure("\(error.message); \(otherwise)")
      }
    }
    return scripts
  }

  /// Migrates the store in one `BEGIN IMMEDIATE` transaction with the `scripts` read before;
  /// returns the versions it found and left.
  private func migrate(_ connection: SQLiteConnection, scripts: [Int: String]) throws -> (
    from: Int, to: Int
  ) {
    try connection.immediateTransaction {
      let state = try Self.inspect(connection)
      _ = try judge(state)
      let pending = schema.migrations.filter { $0.version > state.version }
      // Read before down to the version the store had then: a store replaced by an older one
      // meanwhile has its migrations read now, all before the first is applied.
      let texts =
        pending.allSatisfy { scripts[$0.version] != nil }
        ? scripts
        : try checkedScripts(
          above: state.version,
          otherwise: "the store '\(url.path)' was left as it was, at version \(state.version)")
      let pendingScripts = pending.compactMap { texts[$0.version] }
      for (index, migration) in pending.enumerated() {
        try Task.checkCancellation()
        context.reportProgress(
          Double(index) / Double(pending.count),
          "Migrating to version \(migration.version): \(migration.summary)...")
        do {
          try connection.executeScriptInTransaction(pendingScripts[index])
        } catch let error as SQLiteError {
          throw failure(error, in: migration, leftAt: state.version)
        }
        try connection.execute("PRAGMA user_version = \(migration.version)")
      }
      // An attempt that timed out during its last statement commits nothing: the step failed,
      // and its retry finds the store as it was (and new, when it was at version 0).
      if !pending.isEmpty {
        StoreFile.testHook?("migrated")
        try Task.checkCancellation()
      }
      if state.applicationID != schema.applicationID {
        try connection.execute("PRAGMA application_id = \(schema.applicationID)")
      }
      return (state.version, max(state.version, schema.latestVersion))
    }
  }

  private func failure(
    _ error: SQLiteError, in migration: StoreSchema.Migration, leftAt version: Int
  )
    -> StepFailure
  {
    failure(
      error, in: migration,
      otherwise: "the store '\(url.path)' was left as it was, at version \(version)")
  }

  /// `migration` failed with `error`, which `otherwise` says what became of the store.
  private func failure(
    _ error: SQLiteError, in migration: StoreSchema.Migration, otherwise: String
  ) -> StepFailure {
    let line = error.line.map { ":\($0)" } ?? ""
    let location =
      migration.file.map { "the migration '\($0.path)\(line)'" }
      ?? "migration \(migration.version) (\(migration.summary)) of the \(schema.name) schema at line \(error.line ?? 1)"
    return StepFailure("\(location) failed: \(error.message); \(otherwise)")
  }

  /// Every migration, read and checked, and applied first to an empty database in memory:
  /// before a store is created, or a damaged one moved aside for a new one, so that a file
  /// that cannot be read or a statement that fails leaves the path as it was (`otherwise`
  /// says how) instead of an empty store there. Only a new store pays for it.
  private func newStoreScripts(otherwise: String) throws -> [Int: String] {
    let scripts = try checkedScripts(above: 0, otherwise: otherwise)
    let memory = try SQLiteConnection.inMemory()
    for migration in schema.migrations {
      do {
        try memory.executeScript(scripts[migration.version] ?? "")
      } catch {
        throw failure(error, in: migration, otherwise: otherwise)
      }
    }
    return scripts
  }

  /// Moves the damaged store aside with its WAL and creates a new one in its place.
  ///
  /// `found` is the file this launch found damaged: when the file at the path is no longer
  /// that one, another launch recovered the store first, and its new store is opened instead
  /// of being moved aside in turn. The new store is created before the lock is let go: a
  /// launch that finds the path empty in between would create a store of its own, or fail
  /// when it may not create one.
  private func recover(from reason: String, shm: Data?, found: Int?) throws -> StoreHandle {
    guard !readOnly else {
      throw StepFailure(
        "the store '\(url.path)' is damaged (\(reason)); nothing was changed in read-only mode")
    }
    // Before the damaged store is moved: its replacement needs every migration.
    let scripts = try newStoreScripts(
      otherwise:
        "the store '\(url.path)' is damaged (\(reason)) and was left as it was, since a new one needs every migration"
    )
    StoreFile.testHook?("recovering")
    let recovered = try FolderLock.holding(folder, exclusive: true) { () throws -> StoreHandle? in
      guard Self.identity(of: url) == found else { return nil }
      let destination = try StoreFile.moveAside(url, shm: shm)
      context.log(
        "the store was damaged (\(reason)); moved it aside to \(destination.lastPathComponent) and created a new one"
      )
      return try createStore(movedAside: destination, scripts: scripts)
    }
    // Recovered by another launch while this one waited for the lock: as new to this launch.
    return try recovered ?? Self.asNew(openStore())
  }

  /// Finishes moving aside the store a killed launch was recovering, then creates the new
  /// one, holding the folder's lock exclusively throughout.
  private func finishRecovery() throws -> StoreHandle {
    let scripts = try newStoreScripts(
      otherwise:
        "the store '\(url.path)' was being moved aside when a launch stopped; the move waits for a launch that can read every migration, which a new store needs"
    )
    let recovered = try FolderLock.holding(folder, exclusive: true) { () throws -> StoreHandle? in
      // Another launch may have finished it while this one waited for the lock.
      guard let destination = try StoreFile.finishInterruptedRecovery(url) else { return nil }
      context.log(
        "finished moving the damaged store aside to \(destination.lastPathComponent), which a stopped launch had begun, and created a new one"
      )
      guard case .missing = try StoreFile.at(url) else { return nil }
      return try createStore(movedAside: destination, scripts: scripts)
    }
    return try recovered ?? Self.asNew(openStore())
  }

  /// `handle` as a store new to this launch: one another launch created or recovered while
  /// this one waited, which holds nothing the app wrote before either.
  private static func asNew(_ handle: StoreHandle) -> StoreHandle {
    StoreHandle(
      url: handle.url, schema: handle.schema, version: handle.version,
      isReadOnly: handle.isReadOnly, busyTimeout: handle.busyTimeout,
      movedAside: handle.movedAside, isNew: true, isFallback: handle.isFallback)
  }

  private func createStore(movedAside: URL?, scripts: [Int: String]) throws -> StoreHandle {
    context.log("created a new \(schema.name) store at \(url.path)")
    return try openForWriting(movedAside: movedAside, isNew: true, scripts: scripts)
  }

  private var missingStore: StepFailure {
    StepFailure("the store '\(url.path)' does not exist; set \"create\": true to create it")
  }

  /// The file system's number for the file at `url`, which a rename keeps and a new file
  /// does not share.
  private static func identity(of url: URL) -> Int? {
    // One `lstat`, as `attributesOfItem` makes, without the rest of its dictionary (the
    // owner's and group's names are looked up for it) on every launch.
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return nil }
    return Int(truncatingIfNeeded: info.st_ino)
  }

  /// The `-shm` file's bytes, read before SQLite opens the store and changes them; it is as
  /// small as the WAL is short (32 KiB per 4,096 pages), whatever the store's size.
  private func sharedMemorySnapshot() -> Data? {
    let shm = URL(fileURLWithPath: url.path + "-shm")
    guard FileManager.default.fileExists(atPath: url.path + "-wal") else { return nil }
    return try? Data(contentsOf: shm)
  }

  /// A new store's folder must exist unless `createFolders` says to make it: a typo in `path`
  /// should not silently start an empty library somewhere else.
  ///
  /// Only the folder is looked at here, before the folder's lock is taken: the store's own
  /// path is looked at under it, since another launch may be moving a damaged store aside.
  private func prepareFolder() throws {
    var isFolder: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder)
    if exists && isFolder.boolValue { return }
    // Without its folder the store cannot exist.
    guard create else { throw missingStore }
    guard !exists else {
      throw StepFailure(
        "'\(folder.path)' is a file, not a folder, so the store '\(url.path)' cannot be created in it; give another path"
      )
    }
    guard createFolders else {
      throw StepFailure(
        "the folder '\(folder.path)' for the store '\(url.path)' does not exist; create it, or set \"createFolders\": true"
      )
    }
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      throw StepFailure(
        "cannot create the folder '\(folder.path)' for the store '\(url.path)': \(error.localizedDescription)"
      )
    }
  }

  /// What stands where SQLite keeps the store's WAL or shared memory (beside the link's
  /// target, for a link) when it is no file (a FIFO, a folder, a device or a link to one),
  /// which SQLite reports only as "disk I/O error" or "unable to open database file"; `nil`
  /// when both are files or missing.
  private func companionProblem() -> String? {
    let base = url.resolvingSymlinksInPath().path
    for (suffix, what) in [("-wal", "write-ahead log"), ("-shm", "shared memory")] {
      var info = stat()
      // Followed, as SQLite follows it.
      guard stat(base + suffix, &info) == 0 else { continue }
      let type = info.st_mode & mode_t(S_IFMT)
      guard type != mode_t(S_IFREG) else { continue }
      return
        "'\(base + suffix)', where SQLite keeps the \(what) of the store '\(url.path)', is "
        + "\(StoreFile.describe(type)), not a file, so SQLite cannot open the store; it "
        + "holds nothing of the store's: move it away, and the store opens"
    }
    return nil
  }

  /// SQLite says "database is locked", "unable to open database file" or "disk I/O error";
  /// another writer, a folder it cannot write to or a full disk is the cause people can act
  /// on, so it is named.
  private func explain(_ error: SQLiteError) -> any Error {
    if let problem = companionProblem() { return StepFailure(problem) }
    if error.isBusy {
      return StepFailure(
        "the store '\(url.path)' stayed locked by another connection for all of 'busyTimeout' (\(busyTimeout.manifestText)); close the other writer, or raise 'busyTimeout'"
      )
    }
    // Only SQLite failing to write: a statement's own error (a constraint, say) on a nearly
    // full disk is that error.
    guard error.isWriteFailure,
      let problem = SafeFiles.writeProblem(in: url.deletingLastPathComponent())
    else { return error }
    return StepFailure(
      "cannot open the store '\(url.path)': \(problem.reason), and SQLite writes its journal beside the store, even to read it (\(error.message)); \(problem.advice)"
    )
  }
}
