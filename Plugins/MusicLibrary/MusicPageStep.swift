import Foundation
import LaunchOrchestrator
import SQLiteStore

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
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter("Songs per page.", in: 1...1000) var limit = 50
    @Parameter("Songs before the page.", minimum: 0) var offset = 0
    @Parameter("The order of the songs.") var sort = SongOrder.mostPlayed

    /// The first page of 50 most played songs.
    public init() {}
  }

  private let window: PageWindow
  private let order: SongOrder

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    window = try PageWindow(
      limit: parameters.limit, offset: parameters.offset, defaultLimit: 50, maximumLimit: 1000)
    order = parameters.sort
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<Song> {
    let page = try MusicStore.read(for: context, kind: Self.kind) { connection in
      try Page.load(
        connection, select: MusicStore.columns, from: "songs", order: order.keyset,
        window: window, row: MusicStore.song)
    }
    context.log(
      "loaded \(page.items.count) songs by \(order.rawValue) from offset \(window.offset) (hasMore: \(page.hasMore))"
    )
    return page
  }

  /// The page after `cursor` (a page's ``Page/next``) from the music `store`, in the
  /// cursor's order and size: found through the order's index, so page 1,000 costs what
  /// page 2 does.
  /// - Throws: ``StepFailure`` for a cursor of another listing or a store that is not a
  ///   music store; ``SQLiteError`` when the store cannot be read.
  public static func page(after cursor: PageCursor, in store: StoreHandle) throws -> Page<Song> {
    guard let order = SongOrder(rawValue: cursor.order) else {
      throw StepFailure(
        "the cursor is for the order '\(cursor.order)', which songs are not listed in; use a cursor from a music.page page"
      )
    }
    let window = try PageWindow(
      limit: cursor.limit, offset: cursor.offset, defaultLimit: 50, maximumLimit: 1000)
    return try MusicStore.read(store, kind: kind) { connection in
      try Page.load(
        connection, select: MusicStore.columns, from: "songs", order: order.keyset,
        window: window, after: cursor, row: MusicStore.song)
    }
  }
}
