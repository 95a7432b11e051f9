import LaunchOrchestrator
import LaunchPlugins
import SQLiteStore

/// The README's plugin, compiled outside the package.
struct WarmCache: StepPlugin {
  static let kind = "cache.warm"
  static let summary = "Loads the most recent items into memory."
  static let inputs: [StepInput] = [.required(StoreHandle.self)]

  struct Parameters: StepParameters {
    @Parameter("How many of the most played songs to keep in memory.", in: 1...) var count = 20
  }
  let count: Int

  init(parameters: Parameters) {
    count = parameters.count
  }

  func run(_ context: StepContext) async throws -> CacheHandle {
    let store = try context.input(StoreHandle.self)
    context.reportProgress(0.5, "Warming cache...")
    return try await CacheHandle(store: store, count: count)
  }
}

/// The most played song titles, in memory.
struct CacheHandle: Sendable {
  let titles: [String]

  init(store: StoreHandle, count: Int) async throws {
    let connection = try store.connect()
    titles = try connection.query(
      "SELECT title FROM songs ORDER BY play_count DESC, id LIMIT ?", [.integer(Int64(count))]
    ) { $0.text(0) ?? "" }
  }
}

/// A client the app owns and hands to its launch.
struct APIClient: Sendable {
  let baseURL: String
}
