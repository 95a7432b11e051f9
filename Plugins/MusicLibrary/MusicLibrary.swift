import Foundation
import LaunchOrchestrator
import SQLiteStore

/// A song of a music library.
public struct Song: Sendable, Equatable, Codable {
  /// Its id in the store.
  public var id: Int64
  /// The title.
  public var title: String
  /// The artist.
  public var artist: String
  /// The album, if known.
  public var album: String?
  /// How often it was played.
  public var playCount: Int64
}

/// The orders a page of songs can come in, each backed by an index on its key and the id.
public enum SongOrder: String, CaseIterable, ParameterValue, ListingOrder {
  /// Most played first.
  case mostPlayed
  /// Last played first; never played last.
  case recentlyPlayed
  /// Newest in the library first.
  case recentlyAdded
  /// By title, ignoring case.
  case alphabetical

  /// Most played first.
  public static let defaultOrder = mostPlayed
  /// Songs.
  public static let itemsName = "songs"

  /// Songs are listed from their own table in every order.
  public var tables: String { "songs" }

  /// The sort key and id of the order.
  public var keyset: KeysetOrder {
    switch self {
    case .mostPlayed:
      KeysetOrder(name: rawValue, key: "songs.play_count", descending: true, id: "songs.id")
    case .recentlyPlayed:
      KeysetOrder(
        name: rawValue, key: "songs.last_played_at", descending: true, nullable: true,
        id: "songs.id")
    case .recentlyAdded:
      KeysetOrder(name: rawValue, key: "songs.added_at", descending: true, id: "songs.id")
    case .alphabetical:
      KeysetOrder(
        name: rawValue, key: "songs.title", descending: false, id: "songs.id", collation: "NOCASE")
    }
  }
}

enum MusicStore {
  static let columns = "songs.id, songs.title, songs.artist, songs.album, songs.play_count"

  static func song(_ row: SQLiteStatement) -> Song {
    Song(
      id: row.integer(0), title: row.text(1) ?? "", artist: row.text(2) ?? "", album: row.text(3),
      playCount: row.integer(4))
  }

  /// Runs `body` on a connection to the music store the step reads, after checking that it
  /// holds a music library; damage found on the way is recorded for the next launch.
  static func read<Result>(
    for context: StepContext, kind: String, _ body: (SQLiteConnection) throws -> Result
  ) throws -> Result {
    try read(try context.input(StoreHandle.self), kind: kind, body)
  }

  /// Runs `body` on a connection to `store`, as ``read(for:kind:_:)`` does.
  static func read<Result>(
    _ store: StoreHandle, kind: String, _ body: (SQLiteConnection) throws -> Result
  ) throws -> Result {
    guard store.schema == .music else {
      throw StepFailure(
        "'\(kind)' needs a music store, and its store holds a \(store.schema.name) library; give store.init \"schema\": \"music\""
      )
    }
    do {
      return try body(try store.connect())
    } catch let error as SQLiteError {
      throw store.failure(error)
    }
  }
}
