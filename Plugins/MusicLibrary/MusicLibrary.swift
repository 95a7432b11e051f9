import Foundation
import LaunchOrchestrator
import SQLiteStore

/// A song of a music library.
public struct Song: Sendable, Equatable {
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

/// The orders a page of songs can come in, each backed by an index.
enum SongOrder: String, CaseIterable {
  case mostPlayed, recentlyPlayed, recentlyAdded, alphabetical

  var orderBy: String {
    switch self {
    case .mostPlayed: "play_count DESC, id"
    case .recentlyPlayed: "last_played_at DESC, id"
    case .recentlyAdded: "added_at DESC, id"
    case .alphabetical: "title COLLATE NOCASE, id"
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

  /// The store a music step reads, after checking that it holds a music library.
  static func connection(for context: StepContext, kind: String) throws -> SQLiteConnection {
    let store = try context.input(StoreHandle.self)
    guard store.schema == .music else {
      throw StepFailure(
        "'\(kind)' needs a music store, and its store holds a \(store.schema.name) library; give store.init \"schema\": \"music\""
      )
    }
    return try store.connect()
  }
}

/// `music.page`: loads one page of a music library in one of four orders, without loading
/// the rest of it.
public struct MusicPageStep: StepPlugin {
  /// The kind name.
  public static let kind = "music.page"
  /// What the step does.
  public static let summary =
    "Loads one page of songs from the music store, in an indexed order; reports hasMore."
  /// It needs a music store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("limit", .integer(minimum: 1, maximum: 1000), default: "50", "Songs per page."),
    .init("offset", .integer(minimum: 0), default: "0", "Songs before the page."),
    .init(
      "sort", .oneOf(SongOrder.allCases.map(\.rawValue)), default: "mostPlayed",
      "The order of the songs."),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var limit: Int?
    var offset: Int?
    var sort: String?
  }

  private let window: PageWindow
  private let order: SongOrder

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    window = try PageWindow(
      limit: parameters.limit, offset: parameters.offset, defaultLimit: 50, maximumLimit: 1000)
    order = try PageWindow.order(parameters.sort, default: .mostPlayed)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<Song> {
    let connection = try MusicStore.connection(for: context, kind: Self.kind)
    let page = try Page.load(
      connection,
      sql: "SELECT \(MusicStore.columns) FROM songs ORDER BY \(order.orderBy) LIMIT ? OFFSET ?",
      window: window, row: MusicStore.song)
    context.log(
      "loaded \(page.items.count) songs by \(order.rawValue) from offset \(window.offset) (hasMore: \(page.hasMore))"
    )
    return page
  }
}

/// `music.search`: the songs matching a term, through the store's full-text index.
public struct MusicSearchStep: StepPlugin {
  /// The kind name.
  public static let kind = "music.search"
  /// What the step does.
  public static let summary =
    "Finds songs whose title, artist or album match a term, through the full-text index."
  /// It needs a music store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("term", .string, required: true, "Words to find; each matches as a prefix."),
    .init("limit", .integer(minimum: 1, maximum: 500), default: "25", "Songs per page."),
    .init("offset", .integer(minimum: 0), default: "0", "Songs before the page."),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var term: String
    var limit: Int?
    var offset: Int?
  }

  private let query: String
  private let term: String
  private let window: PageWindow

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    let words = parameters.term.split(whereSeparator: \.isWhitespace)
    guard !words.isEmpty else { throw ParameterError("term", "'term' needs at least one word.") }
    term = parameters.term
    // Each word as a quoted prefix: user text is never read as FTS syntax.
    query = words.map { "\"\($0.replacingOccurrences(of: "\"", with: "\"\""))\"*" }.joined(
      separator: " ")
    window = try PageWindow(
      limit: parameters.limit, offset: parameters.offset, defaultLimit: 25, maximumLimit: 500)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Runs the search.
  public func run(_ context: StepContext) async throws -> Page<Song> {
    let connection = try MusicStore.connection(for: context, kind: Self.kind)
    let page = try Page.load(
      connection,
      sql: """
        SELECT \(MusicStore.columns) FROM songs_search JOIN songs ON songs.id = songs_search.rowid
        WHERE songs_search MATCH ? ORDER BY songs_search.rank, songs.id LIMIT ? OFFSET ?
        """,
      values: [.text(query)], window: window, row: MusicStore.song)
    context.log("found \(page.items.count) songs for '\(term)' (hasMore: \(page.hasMore))")
    return page
  }
}
