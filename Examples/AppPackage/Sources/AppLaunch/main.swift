import Foundation
import LaunchOrchestrator
import LaunchPlugins
import SQLiteStore

/// Runs the launch the way an app does and checks what its first screen gets; exits 1 when
/// something is off.
@MainActor
func launch() async throws -> Bool {
  var registry = PluginRegistry.builtIn  // every kind `orchestrate` ships
  registry.register(WarmCache.self)  // plus the app's own
  registry.register(
    kind: "app.sync", summary: "Syncs with the app's server.",
    requirements: [.required(APIClient.self)]
  ) { context in
    context.log("syncing with \(try context.environment(APIClient.self).baseURL)")
  }

  // The manifest ships in the bundle (read-only); the data goes to a writable folder.
  let manifest = try require(
    Bundle.module.url(forResource: "launch", withExtension: "json"), "launch.json in the bundle")
  let data = FileManager.default.temporaryDirectory
    .appendingPathComponent("app-package-\(ProcessInfo.processInfo.processIdentifier)")
  try FileManager.default.createDirectory(
    at: data.appendingPathComponent("library"), withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: data) }
  let plan = try ManifestLoader(registry: registry).load(url: manifest, dataDirectory: data)

  var environment = LaunchEnvironment()
  environment[AppInfo.self] = AppInfo(version: "2.3.0", build: "41")
  environment[APIClient.self] = APIClient(baseURL: "https://api.example.com")

  let session = LaunchSession()
  let report = await session.run(plan, on: LaunchEngine(), environment: environment)
  let store = session.output(of: "store", as: StoreHandle.self)
  let page = session.output(of: "firstPage", as: MusicPage.self)
  let cache = session.output(of: "cache", as: CacheHandle.self)

  print(
    "outcome: \(report.outcome.rawValue), screen: \(session.screen), progress: \(session.progress)")
  print("store: \(store?.url.path ?? "none")")
  print("first page: \(page?.items.count ?? 0) songs; cache: \(cache?.titles ?? [])")
  print("sync: \(report.step("sync")?.notes ?? [])")

  // The next launch shows this launch's first page at once and refreshes it behind; a
  // sign-out clears what the launches saved.
  let next = LaunchSession()
  let nextReport = await next.run(plan, on: LaunchEngine(), environment: environment)
  let served = nextReport.step("firstPage")
  print(
    "next launch: firstPage \(served?.state.rawValue ?? "none"), refresh \(served?.refresh?.state.rawValue ?? "none")"
  )
  // Without a session: the report hands over the outputs.
  let direct = await LaunchEngine().run(plan, environment: environment)
  let directStore = direct.output(of: "store", as: StoreHandle.self)
  print("without a session: store \(directStore?.url.lastPathComponent ?? "none")")
  let cleared = try plan.clearCache()

  var missing = LaunchEnvironment()
  missing[AppInfo.self] = AppInfo(version: "2.3.0")
  let refused = await LaunchSession().run(plan, on: LaunchEngine(), environment: missing)
  print("without the API client: \(refused.error ?? "started anyway")")

  return report.outcome == .succeeded && session.screen == .content && session.progress == 1
    && store?.url.path.hasPrefix(data.path) == true && page?.items.isEmpty == false
    && cache?.titles == page.map { Array($0.items.prefix(3).map(\.title)) }
    && refused.outcome == .failed && refused.steps.allSatisfy { $0.start == nil }
    && served?.state == .cached && served?.refresh?.state == .succeeded
    && next.output(of: "firstPage", as: MusicPage.self)?.items == page?.items && cleared == 1
    && directStore?.url == store?.url && direct.output(of: "store", as: MusicPage.self) == nil
}

/// `#require` for a plain executable.
func require<T>(_ value: T?, _ what: String) throws -> T {
  guard let value else { throw StepFailure("missing \(what)") }
  return value
}

do {
  let launched = try await launch()
  let lived = try await lifecycle()
  let contextual = try await contextLaunches()
  let ok = launched && lived && contextual
  print(ok ? "app package: ok" : "app package: FAILED")
  exit(ok ? 0 : 1)
} catch {
  print("app package: FAILED: \(error)")
  exit(1)
}
