import Foundation
import LaunchOrchestrator

/// An opened, migrated library store: what `store.init` hands to the steps that use the store.
///
/// It holds no connection: each step opens its own with ``connect()``, so steps reading the
/// store in parallel do not queue behind one another (the store is in WAL mode).
public final class StoreHandle: Sendable {
  /// The database file.
  public let url: URL
  /// Its schema.
  public let schema: StoreSchema
  /// Its schema version after migrations.
  public let version: Int
  /// Whether steps may only read it.
  public let isReadOnly: Bool
  /// How long a connection waits for another writer before failing.
  public let busyTimeout: Duration
  /// Where a damaged file was moved before the store was recreated, if that happened.
  public let movedAside: URL?

  /// Describes an opened store.
  public init(
    url: URL, schema: StoreSchema, version: Int, isReadOnly: Bool, busyTimeout: Duration,
    movedAside: URL? = nil
  ) {
    self.url = url
    self.schema = schema
    self.version = version
    self.isReadOnly = isReadOnly
    self.busyTimeout = busyTimeout
    self.movedAside = movedAside
  }

  /// Where a finding of damage is written for the next launch: `store.init` then moves the
  /// store aside and creates a new one. Beside the store, named after it.
  public var damageMarker: URL { Self.damageMarker(for: url) }

  /// The damage marker of the store at `url`.
  public static func damageMarker(for url: URL) -> URL {
    URL(fileURLWithPath: url.path + ".damaged")
  }

  /// Writes `finding` to ``damageMarker``, so that the next launch recovers the store.
  ///
  /// Steps call it when a query fails with `SQLITE_CORRUPT` or `SQLITE_NOTADB`, and
  /// `store.check` when its integrity check fails; the store itself is not touched while in use.
  public func recordDamage(_ finding: String) throws {
    try SafeFiles.writeAtomically(Data(finding.utf8), to: damageMarker)
  }

  /// A step's failure for `error` from a query of the store: for damage, also records it (see
  /// ``recordDamage(_:)``) and says that the next launch recovers the store.
  public func failure(_ error: SQLiteError) -> any Error {
    guard error.isCorruption, !isReadOnly else { return error }
    do {
      try recordDamage(error.message)
    } catch {
      return error
    }
    return StepFailure(
      "the store '\(url.path)' is damaged (\(error.message)); the next launch moves it aside and creates a new one"
    )
  }

  /// A new connection to the store, read-only when the store is.
  ///
  /// Automatic indexes are off: SQLite builds one by reading a whole table, on every query
  /// that lacks a real index, so a missing index shows up in `EXPLAIN QUERY PLAN` as a SCAN
  /// instead of hiding a cost that grows with the data.
  public func connect() throws(SQLiteError) -> SQLiteConnection {
    let connection = try SQLiteConnection(
      url: url, mode: isReadOnly ? .readOnly : .readWrite, busyTimeout: busyTimeout)
    try connection.execute("PRAGMA automatic_index = OFF")
    return connection
  }
}
