import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `music.search`: the songs matching a term, through the store's full-text index.
public struct MusicSearchStep: StepPlugin {
  /// The kind name.
  public static let kind = "music.search"
  /// What the step does.
  public static let summary =
    "Finds songs whose title, artist or album match a term, through the full-text index."
  /// It needs a music store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter("Words to find; each matches as a prefix.", nonEmpty: true) var term: String
    @Parameter("Songs per page.", in: 1...500) var limit = 25
    @Parameter("Songs before the page.", in: 0...) var offset = 0

    /// No term yet: a manifest must give one.
    public init() {}
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
    window = PageWindow(limit: parameters.limit, offset: parameters.offset)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Runs the search.
  public func run(_ context: StepContext) async throws -> Page<Song> {
    let page = try MusicStore.read(for: context, kind: Self.kind) { connection in
      try Page.load(
        connection,
        sql: """
          SELECT \(MusicStore.columns) FROM songs_search JOIN songs ON songs.id = songs_search.rowid
          WHERE songs_search MATCH ? ORDER BY songs_search.rank, songs.id LIMIT ? OFFSET ?
          """,
        values: [.text(query)], window: window, row: MusicStore.song)
    }
    context.log("found \(page.items.count) songs for '\(term)' (hasMore: \(page.hasMore))")
    return page
  }
}
