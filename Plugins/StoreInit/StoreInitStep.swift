import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `store.init`: opens or creates the SQLite library store, migrates it, and recovers a
/// damaged file by moving it aside (never deleting it) and creating a new one.
public struct StoreInitStep: StepPlugin {
  /// The kind name.
  public static let kind = "store.init"
  /// What the step does.
  public static let summary =
    "Opens or creates the SQLite library store, migrates it, and moves a damaged file aside before recreating it."
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("path", .path, required: true, "The database file; relative to the manifest's folder."),
    .init(
      "schema", .oneOf(StoreSchema.all.map(\.name)), default: "books",
      "Which library the store holds."),
    .init(
      "readOnly", .boolean, default: "false", "Open for reading only: no migrations, no recovery."),
    .init(
      "create", .boolean, default: "true unless readOnly",
      "Create the store when the file does not exist."),
    .init("busyTimeout", .duration, default: "5s", "How long to wait for another writer."),
    .init("integrityCheck", .boolean, default: "true", "Run PRAGMA quick_check when opening."),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var path: String
    var schema: String?
    var readOnly: Bool?
    var create: Bool?
    var busyTimeout: DurationParameter?
    var integrityCheck: Bool?
  }

  private let path: String
  private let schema: StoreSchema
  private let readOnly: Bool
  private let create: Bool
  private let busyTimeout: Duration
  private let integrityCheck: Bool

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    guard !parameters.path.isEmpty else { throw ParameterError("path", "'path' cannot be empty.") }
    path = parameters.path
    let name = parameters.schema ?? "books"
    guard let schema = StoreSchema.named(name) else {
      let names = StoreSchema.all.map(\.name)
      throw ParameterError(
        "schema",
        "unknown schema '\(name)'.\(Suggestions.didYouMean(name, in: names)) Use one of: \(names.joined(separator: ", "))."
      )
    }
    self.schema = schema
    readOnly = parameters.readOnly ?? false
    create = parameters.create ?? !readOnly
    if readOnly && create {
      throw ParameterError(
        "create", "a read-only store cannot be created; drop 'create' or 'readOnly'.")
    }
    busyTimeout = parameters.busyTimeout?.duration ?? .seconds(5)
    integrityCheck = parameters.integrityCheck ?? true
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Opens, checks, recovers and migrates the store.
  public func run(_ context: StepContext) async throws -> StoreHandle {
    let url = context.resolve(path)
    if !FileManager.default.fileExists(atPath: url.path) {
      guard create else {
        throw StepFailure(
          "the store '\(url.path)' does not exist; set \"create\": true to create it")
      }
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      context.log("created a new \(schema.name) store at \(url.path)")
    }

    var movedAside: URL?
    var connection: SQLiteConnection
    do {
      connection = try openAndCheck(url)
    } catch let error as SQLiteError where !error.isCorruption {
      throw explain(error, openingStoreAt: url)
    } catch let error as SQLiteError where error.isCorruption {
      guard !readOnly else {
        throw StepFailure(
          "the store '\(url.path)' is damaged (\(error.message)); nothing was changed in read-only mode"
        )
      }
      let destination = try SafeFiles.moveAside(url, label: "corrupt")
      for suffix in ["-wal", "-shm"] {
        let sidecar = URL(fileURLWithPath: url.path + suffix)
        if FileManager.default.fileExists(atPath: sidecar.path) {
          _ = try SafeFiles.moveAside(sidecar, label: "corrupt")
        }
      }
      movedAside = destination
      context.log(
        "the store was damaged (\(error.message)); moved it aside to \(destination.lastPathComponent) and created a new one"
      )
      connection = try openAndCheck(url)
    }
    let version = try migrate(connection, context: context)
    return StoreHandle(
      url: url, schema: schema, version: version, isReadOnly: readOnly, busyTimeout: busyTimeout,
      movedAside: movedAside)
  }

  /// SQLite says "database is locked", "unable to open database file" or "disk I/O error";
  /// another writer, a folder it cannot write to or a full disk is the cause people can act
  /// on, so it is named.
  private func explain(_ error: SQLiteError, openingStoreAt url: URL) -> any Error {
    if error.isBusy {
      return StepFailure(
        "the store '\(url.path)' stayed locked by another connection for all of 'busyTimeout' (\(DurationText.format(busyTimeout))); close the other writer, or raise 'busyTimeout'"
      )
    }
    guard let problem = SafeFiles.writeProblem(in: url.deletingLastPathComponent()) else {
      return error
    }
    return StepFailure(
      "cannot open the store '\(url.path)': \(problem.reason), and SQLite writes its journal beside the store, even to read it (\(error.message)); \(problem.advice)"
    )
  }

  private func openAndCheck(_ url: URL) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(
      url: url, mode: readOnly ? .readOnly : .create, busyTimeout: busyTimeout)
    if readOnly {
      _ = try connection.userVersion()
    } else {
      try connection.execute("PRAGMA journal_mode = WAL")
    }
    if integrityCheck {
      let result = try connection.query("PRAGMA quick_check") { $0.text(0) ?? "" }
      if result != ["ok"] {
        throw SQLiteError(
          code: SQLiteError.corruptCode,
          message: "integrity check failed: \(result.prefix(3).joined(separator: "; "))")
      }
    }
    return connection
  }

  /// Applies pending migrations in one transaction, so an interrupted upgrade leaves the store
  /// as it was; reports progress per migration.
  private func migrate(_ connection: SQLiteConnection, context: StepContext) throws -> Int {
    let current = try connection.userVersion()
    guard current <= schema.latestVersion else {
      throw StepFailure(
        "the store is at schema version \(current), newer than this build knows (\(schema.latestVersion)); update the app"
      )
    }
    let pending = schema.migrations.filter { $0.version > current }
    guard !pending.isEmpty else {
      context.reportProgress(1, "store is up to date (version \(current))")
      return current
    }
    guard !readOnly else {
      throw StepFailure(
        "the read-only store is at version \(current) and needs migrating to \(schema.latestVersion); open it read-write"
      )
    }
    try connection.immediateTransaction {
      for (index, migration) in pending.enumerated() {
        try context.checkCancellation()
        context.reportProgress(
          Double(index) / Double(pending.count),
          "Migrating to version \(migration.version): \(migration.summary)...")
        try connection.execute(migration.sql)
        try connection.execute("PRAGMA user_version = \(migration.version)")
      }
    }
    context.reportProgress(1, "store at version \(schema.latestVersion)")
    context.log("migrated the store from version \(current) to \(schema.latestVersion)")
    return schema.latestVersion
  }
}
