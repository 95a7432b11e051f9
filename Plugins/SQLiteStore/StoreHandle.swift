import Foundation

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

  /// A new connection to the store, read-only when the store is.
  public func connect() throws(SQLiteError) -> SQLiteConnection {
    try SQLiteConnection(
      url: url, mode: isReadOnly ? .readOnly : .readWrite, busyTimeout: busyTimeout)
  }
}
