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
    let page = try MusicStore.read(for: context, kind: Self.kind) { connection in
      try Page.load(
        connection,
        sql: "SELECT \(MusicStore.columns) FROM songs ORDER BY \(order.orderBy) LIMIT ? OFFSET ?",
        window: window, row: MusicStore.song)
    }
    context.log(
      "loaded \(page.items.count) songs by \(order.rawValue) from offset \(window.offset) (hasMore: \(page.hasMore))"
    )
    return page
  }
}
