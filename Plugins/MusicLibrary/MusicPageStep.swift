import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `music.page`: loads one page of a music library in one of four orders, without loading
/// the rest of it.
public struct MusicPageStep: StepPlugin, PagedListing {
  /// The kind name.
  public static let kind = "music.page"
  /// What the step does.
  public static let summary =
    "Loads one page of songs from the music store, in an indexed order; reports hasMore."
  /// It needs a music store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// What a manifest gives the step: the page size, offset and order every listing takes.
  public typealias Parameters = ListingParameters<SongOrder>

  private let parameters: Parameters

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) { self.parameters = parameters }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Songs are listed in these orders.
  public typealias Order = SongOrder
  /// A music store.
  public static let schema = StoreSchema.music
  /// The columns of a song.
  public static let columns = MusicStore.columns

  /// A song from a row of ``columns``.
  public static func item(_ row: SQLiteStatement) -> Song { MusicStore.song(row) }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<Song> {
    try Self.page(parameters, in: context)
  }

  /// The page after `cursor` (a page's ``Page/next``) from the music `store`, in the
  /// cursor's order and size: found through the order's index, so page 1,000 costs what
  /// page 2 does.
  /// - Throws: ``StepFailure`` for a cursor of another listing or a store that is not a
  ///   music store; ``SQLiteError`` when the store cannot be read.
  public static func page(after cursor: PageCursor, in store: StoreHandle) throws -> Page<Song> {
    try listingPage(after: cursor, in: store)
  }
}
