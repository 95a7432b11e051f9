import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `results.load`: the first page of sorted screenshots, newest first, for a store made from
/// the ScreenSort migrations (a `results` table with a `results_recent` index and `folders`).
///
/// Its output is `Codable`, so the step is made for a `cache`: last session's page shows at
/// once and this query refreshes it behind the screen.
public struct ResultsLoadStep: StepPlugin {
  /// The kind name.
  public static let kind = "results.load"
  /// What the step does.
  public static let summary =
    "Loads the newest page of sorted screenshots (results, with their folder)."
  /// It needs the ScreenSort store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]

  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter("Results per page.", in: 1...500) var limit = 50

    /// The first 50 results.
    public init() {}
  }

  /// Newest first, by the `results_recent` index: the page costs the same for 10 results or
  /// 100,000.
  static let order = KeysetOrder(
    name: "newest", key: "results.sorted_at", descending: true, id: "results.id")
  private static let columns =
    "results.id, results.image_path, results.label, results.confidence, results.sorted_at, folders.name"
  private static let tables = "results LEFT JOIN folders ON folders.id = results.folder_id"

  private let window: PageWindow

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) {
    window = PageWindow(limit: parameters.limit)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<ScreenshotResult> {
    let store = try context.input(StoreHandle.self)
    let page: Page<ScreenshotResult>
    do {
      page = try Page.load(
        try store.connect(), select: Self.columns, from: Self.tables, order: Self.order,
        window: window, row: Self.result)
    } catch let error as SQLiteError where error.message.hasPrefix("no such") {
      throw StepFailure(
        "the store '\(store.url.path)' has no ScreenSort results (\(error.message)); give store.init the ScreenSort migrations (\"migrations\": \"migrations/screensort\")"
      )
    } catch let error as SQLiteError {
      throw store.failure(error)
    }
    context.log("loaded \(page.items.count) results (hasMore: \(page.hasMore))")
    return page
  }

  private static func result(_ row: SQLiteStatement) -> ScreenshotResult {
    ScreenshotResult(
      id: row.integer(0), imagePath: row.text(1) ?? "", label: row.text(2) ?? "",
      confidence: row.real(3), sortedAt: Date(timeIntervalSince1970: row.real(4)),
      folder: row.text(5))
  }
}
