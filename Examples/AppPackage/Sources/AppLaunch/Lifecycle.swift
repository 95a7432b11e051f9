import Foundation
import LaunchOrchestrator
import LaunchPlugins
import SimulatePlugin
import Synchronization

/// Whether the device is online, as the app's network monitor sees it; the feed step reads it.
final class Connectivity: Sendable {
  private let online: Mutex<Bool>

  init(online: Bool) {
    self.online = Mutex(online)
  }

  var isOnline: Bool {
    get { online.withLock { $0 } }
    set { online.withLock { $0 = newValue } }
  }
}

/// The feed's error when the device is offline: the app branches on it (an offline screen
/// rather than a failure), and its user message is the failure screen's words.
struct OfflineError: UserFacingError {
  var userMessage: String { "You're offline. Connect to the internet and try again." }
}

/// The search screen's index, built by an on-demand step when the user first opens search.
struct SearchIndex: Sendable {
  let words: [String]
}

/// How many times the search index was built: concurrent `ensure` calls must share one build.
let searchIndexBuilds = Mutex(0)

/// The launch's life in the app: the user switches away and back, accepts the privacy prompt
/// and dismisses sign-in, opens search; the launch fails offline and is retried, or is
/// cancelled; and the same driven through a `LaunchControl` without a session. Returns
/// whether every result is the one expected.
@MainActor
func lifecycle() async throws -> Bool {
  var registry = PluginRegistry.builtIn
  registry.registerSimulate()  // stand-in work, asked for with its own product
  registry.register(
    kind: "feed.load", summary: "Loads the home feed from the server.",
    requirements: [.required(Connectivity.self)]
  ) { context in
    guard try context.environment(Connectivity.self).isOnline else { throw OfflineError() }
    try await context.sleep(for: .milliseconds(5))
  }
  registry.register(kind: "search.index", summary: "Builds the search index.") {
    context -> SearchIndex in
    searchIndexBuilds.withLock { $0 += 1 }
    try await context.sleep(for: .milliseconds(5))
    return SearchIndex(words: ["abbey", "road"])
  }
  let loader = ManifestLoader(registry: registry)
  let directory = FileManager.default.temporaryDirectory
  // The store would time out after 200ms if the time the app spends in the background
  // counted; the launch waits for consent and sign-in from the app; search runs on demand.
  let home = try loader.load(
    bytes: Array(
      """
      { "version": 1, "name": "Home", "signals": ["consent", "signedIn"],
        "milestones": { "interactive": ["feed"] },
        "splash": { "dismissOn": "interactive", "minimum": 0, "skeletonAfter": "150ms" },
        "steps": [
          { "id": "store", "plugin": "simulate", "params": { "duration": "20ms" },
            "timeout": "200ms" },
          { "id": "feed", "plugin": "feed.load", "dependsOn": ["store"] },
          { "id": "analytics", "plugin": "simulate", "dependsOn": ["store"],
            "waitFor": ["consent"] },
          { "id": "welcomeBack", "plugin": "simulate", "waitFor": ["signedIn"] },
          { "id": "search", "plugin": "search.index", "dependsOn": ["store"],
            "trigger": "onDemand" }
        ] }
      """.utf8), file: "home.json", directory: directory)
  let library = try loader.load(
    bytes: Array(
      """
      { "version": 1, "name": "Library", "steps": [
        { "id": "store", "plugin": "simulate", "params": { "duration": "5ms" } },
        { "id": "feed", "plugin": "feed.load", "dependsOn": ["store"] },
        { "id": "artwork", "plugin": "simulate", "params": { "duration": "200ms" },
          "dependsOn": ["store"] }
      ] }
      """.utf8), file: "library.json", directory: directory)
  let connectivity = Connectivity(online: true)
  var environment = LaunchEnvironment()
  environment[Connectivity.self] = connectivity

  // The user switches away during the splash and comes back 300ms later; accepts the privacy
  // prompt; dismisses sign-in (no `signedIn` will come); then opens search twice at once.
  let session = LaunchSession()
  let launch = Task { await session.run(home, on: LaunchEngine(), environment: environment) }
  try await Task.sleep(for: .milliseconds(5))
  session.pause()
  try await Task.sleep(for: .milliseconds(300))
  session.resume()
  session.signal("consent")
  session.finish()
  let report = await launch.value
  async let opened = session.ensure("search", as: SearchIndex.self)
  async let openedAgain = session.ensure("search", as: SearchIndex.self)
  let indexes = try await [opened, openedAgain]
  let welcome = report.step("welcomeBack")
  print(
    "lifecycle: \(report.outcome.rawValue), screen \(session.screen), pauses \(report.pauses.count), welcomeBack \(welcome?.state.rawValue ?? "none") (\(welcome?.error ?? "")), search built \(searchIndexBuilds.withLock { $0 })x"
  )
  let lifecycleOK =
    report.step("store")?.state == .succeeded && report.step("feed")?.state == .succeeded
    && report.step("analytics")?.state == .succeeded && session.screen == .content
    && report.pauses.count == 1 && report.pauses[0].duration >= .milliseconds(300)
    && report.signals.first { $0.name == "consent" }?.time != nil
    && welcome?.state == .skipped && welcome?.error == "signal 'signedIn' was not sent"
    && indexes.allSatisfy { $0.words == ["abbey", "road"] }
    && searchIndexBuilds.withLock { $0 } == 1
    && session.output(of: "search", as: SearchIndex.self) != nil
    && session.report?.step("search")?.state == .succeeded

  // Offline, the launch fails; back online, the retry runs only what did not succeed.
  connectivity.isOnline = false
  let retrying = LaunchSession()
  let failed = await retrying.run(library, on: LaunchEngine(), environment: environment)
  let failedScreen = retrying.screen
  let failure = retrying.failure
  connectivity.isOnline = true
  let retried = await retrying.retry()
  let again = await retrying.retry()
  print(
    "retry: \(failed.outcome.rawValue) (\(failure?.userMessage ?? "")), then \(retried.outcome.rawValue), reused \(retried.steps.filter(\.reused).map(\.id))"
  )
  let retryOK =
    failed.outcome == .failed && failure.map { failedScreen == .failed($0) } == true
    && failure?.kind == .stepFailed && failure?.step == "feed" && failure?.plugin == "feed.load"
    && failure?.underlying is OfflineError
    && failure?.userMessage == "You're offline. Connect to the internet and try again."
    && retried.outcome == .succeeded && retrying.screen == .content && retrying.failure == nil
    && retried.step("store")?.reused == true && retried.step("feed")?.reused == false
    && again == retried

  // The user leaves the app during the launch: cancelled, not failed; the next time, a retry
  // picks up where it stopped.
  let cancelling = LaunchSession()
  let cancelled = Task {
    await cancelling.run(library, on: LaunchEngine(), environment: environment)
  }
  for _ in 0..<2_000 where !cancelling.runningSteps.contains("artwork") {
    try await Task.sleep(for: .milliseconds(1))
  }
  cancelling.cancel()
  let cancelReport = await cancelled.value
  let cancelScreen = cancelling.screen
  let resumed = await cancelling.retry()
  print(
    "cancel: \(cancelReport.outcome.rawValue) (\(cancelScreen), error \(cancelling.failure?.message ?? "none")), retry \(resumed.outcome.rawValue)"
  )
  let cancelOK =
    cancelReport.outcome == .cancelled && cancelScreen == .cancelled
    && cancelReport.step("artwork")?.state == .cancelled && resumed.outcome == .succeeded
    && resumed.step("store")?.reused == true && resumed.step("artwork")?.reused == false

  // Without a session: the app's own handle on the launch.
  let control = LaunchControl()
  control.signal("consent")  // given before the launch: remembered
  async let direct = LaunchEngine().run(home, environment: environment, control: control)
  control.pause()
  try await Task.sleep(for: .milliseconds(20))
  control.resume()
  control.finish()
  let index = try await control.ensure("search", as: SearchIndex.self)
  let directReport = await direct
  print(
    "control: \(directReport.outcome.rawValue), pauses \(directReport.pauses.count), search \(index.words)"
  )
  let controlOK =
    directReport.step("analytics")?.state == .succeeded
    && directReport.step("welcomeBack")?.error == "signal 'signedIn' was not sent"
    && directReport.pauses.count == 1 && index.words == ["abbey", "road"]
    && searchIndexBuilds.withLock { $0 } == 2

  return lifecycleOK && retryOK && cancelOK && controlOK
}
