import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

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
  /// Whether the store was created in this launch, or recovered (moved aside and created
  /// anew, see ``movedAside``), or got the schema's tables in it (found at version 0: an
  /// earlier launch created it and its first migrations failed, or `adopt`), or a launch
  /// running beside this one created or recovered it while this one waited: it knows nothing
  /// the app wrote before.
  ///
  /// A step that acts on the user's data because the store does not mention it (a queue
  /// entry whose work is missing, an image no scan names) must do nothing destructive
  /// against a new store: its silence is no judgement. In later launches, the same holds for
  /// data older than the store (``recordedCreation()``, ``reasonToKeep(_:modifiedAt:)``).
  public let isNew: Bool
  /// Whether a step's fallback opened it, its own store having failed: another store than
  /// the one the app's data lives beside, perhaps, which steps that judge that data must not
  /// judge it against (see ``newStoreReason``), however old the store is.
  public let isFallback: Bool

  /// Describes an opened store; `isNew` when it was created in this launch (a store with
  /// `movedAside` always is), `isFallback` when a step's fallback opened it.
  public init(
    url: URL, schema: StoreSchema, version: Int, isReadOnly: Bool, busyTimeout: Duration,
    movedAside: URL? = nil, isNew: Bool = false, isFallback: Bool = false
  ) {
    self.url = url
    self.schema = schema
    self.version = version
    self.isReadOnly = isReadOnly
    self.busyTimeout = busyTimeout
    self.movedAside = movedAside
    self.isNew = isNew || movedAside != nil
    self.isFallback = isFallback
  }

  /// Why a step that judges the user's data against the store left it alone: the store is
  /// new, so its silence about the data says nothing, or a fallback opened it, so it may be
  /// another store than the data's. `nil` for a store that existed, opened by its own step.
  public var newStoreReason: String? {
    if isFallback {
      return "the store '\(url.lastPathComponent)' was opened by a fallback in this launch (the"
        + " step's own store failed) and may not be the store the app's data belongs to"
    }
    guard isNew else { return nil }
    if let movedAside {
      return "the store was recovered in this launch (the damaged one was moved aside to"
        + " '\(movedAside.lastPathComponent)'), so it does not know what the app wrote before"
    }
    return
      "the store was created or given its tables in this launch (or a launch beside it),"
      + " so it does not know what the app wrote before"
  }

  /// Where `store.init` records when this store became new (created, recovered, or given its
  /// tables): `<store>.created`, beside the database file itself (a link to the store is
  /// followed), so that it moves with the file's folder when that is copied or restored.
  public static func creationRecord(for url: URL) -> URL {
    URL(fileURLWithPath: url.resolvingSymlinksInPath().path + ".created")
  }

  /// A record of when a store became new that cannot be used: what is at its path and why.
  public struct UnreadableRecord: Error, CustomStringConvertible {
    /// The record's path.
    public let url: URL
    /// The record and what is wrong with it, for a message.
    public let description: String
  }

  /// Records that the store at `url` is new at `date` (see ``recordedCreation()``).
  /// `store.init` calls it when it creates a store, recovers one, or gives one its tables,
  /// before it migrates the store: a launch stopped in between leaves a store at version 0,
  /// which the next launch records again.
  ///
  /// - Throws: when the record cannot be written, or when something that is not such a record
  ///   is at its path (a file of the user's, another store, a link, a folder): it is left alone.
  public static func recordCreation(of url: URL, at date: Date = Date()) throws {
    let record = creationRecord(for: url)
    do {
      _ = try recordedTime(at: record)
    } catch let unreadable {
      throw StepFailure(
        "\(unreadable), so it was left alone; move it away")
    }
    // Only store.init writes the record: a link there can only redirect the write.
    try SafeFiles.writeAtomically(
      Data("created \(date.timeIntervalSince1970)\n".utf8), to: record, followingLinks: false)
  }

  /// When `store.init` last made this store new (created it, recovered it or gave it its
  /// tables), from the record beside it (``creationRecord(for:)``); `nil` when there is none:
  /// a store made before launches kept the record.
  ///
  /// The store knows nothing the app wrote before then: a step that acts on the user's data
  /// because the store does not mention it must leave alone data older than the store, in
  /// every launch (a new store's first launch leaves it all alone: ``isNew``). It reads the
  /// record, so read it once, from the step that judges, after its queries of the store.
  ///
  /// - Throws: ``UnreadableRecord`` when something is at the record's path that cannot be
  ///   read as one: then nothing can be judged against the store.
  public func recordedCreation() throws(UnreadableRecord) -> Date? {
    try Self.recordedTime(at: Self.creationRecord(for: url))
  }

  private static func recordedTime(at record: URL) throws(UnreadableRecord) -> Date? {
    let data: Data?
    do {
      data = try SafeFiles.contentsOfRegularFile(at: record, limit: 4096)
    } catch {
      throw UnreadableRecord(url: record, description: "\(error)")
    }
    guard let data else { return nil }
    let text = String(decoding: data, as: UTF8.self)
    guard text.hasPrefix("created "), text.hasSuffix("\n"),
      let seconds = Double(text.dropFirst("created ".count).dropLast()), seconds.isFinite
    else {
      throw UnreadableRecord(
        url: record, description: "'\(record.path)' is not a record store.init wrote")
    }
    return Date(timeIntervalSince1970: seconds)
  }

  /// Why a step that judges the user's data against the store leaves alone `data` (`"the
  /// queue"`), which the app last changed at `modified`: the store is new to this launch
  /// (``newStoreReason``), it became new after that (``recordedCreation()``, read here), or
  /// its record cannot be read. `nil` when the store can judge it.
  public func reasonToKeep(_ data: String, modifiedAt modified: Date) -> String? {
    if let newStoreReason { return newStoreReason }
    let created: Date?
    do {
      created = try recordedCreation()
    } catch {
      return "cannot tell when the store became new (\(error)), and so what it knows"
    }
    guard let created, modified < created else { return nil }
    let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    return "\(data) was last changed at \(modified.formatted(time)), before the store became"
      + " new at \(created.formatted(time)) (created, recovered or given its tables), so the"
      + " store does not know what the app wrote before"
  }

  /// Where a finding of damage is written for the next launch: `store.init` then moves the
  /// store aside and creates a new one. Beside the store, named after it.
  public var damageMarker: URL { Self.damageMarker(for: url) }

  /// The damage marker of the store at `url`.
  public static func damageMarker(for url: URL) -> URL {
    URL(fileURLWithPath: url.path + ".damaged")
  }

  /// Where `store.init` notes a recovery in progress (`<store>.recovering`, naming where the
  /// store and its WAL go): written before the first file moves and removed after the last,
  /// so a recovery killed midway is finished by the next launch.
  public static func recoveryMarker(for url: URL) -> URL {
    URL(fileURLWithPath: url.path + ".recovering")
  }

  /// Writes `finding` to ``damageMarker``, so that the next launch recovers the store.
  ///
  /// Steps call it when a query fails with `SQLITE_CORRUPT` or `SQLITE_NOTADB`, and
  /// `store.check` when its integrity check fails; the store itself is not touched while in use.
  /// The marker names the file it was written for (device and inode), so that it never
  /// moves another store aside, and the next launch checks the store's integrity before it
  /// acts on it. A link at the marker's path is refused, never followed.
  public func recordDamage(_ finding: String) throws {
    var text = ""
    if let identity = Self.identity(of: url) { text = "store \(identity)\n" }
    // Only the package writes the marker: a link there can only redirect the write.
    try SafeFiles.writeAtomically(
      Data((text + finding).utf8), to: damageMarker, followingLinks: false)
  }

  /// `<device>:<inode>` of the file at `url`, which a rename keeps and a new file does not
  /// share; `nil` when nothing is there.
  public static func identity(of url: URL) -> String? {
    var info = stat()
    guard stat(url.path, &info) == 0 else { return nil }
    return "\(UInt64(truncatingIfNeeded: info.st_dev)):\(UInt64(info.st_ino))"
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
