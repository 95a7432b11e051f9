import Foundation
import LaunchOrchestrator
import LaunchTesting
import SQLiteStore
import StoreInitPlugin
import Testing

/// The app's home feed, as its first screen shows it.
struct Feed: Sendable, Equatable {
  var items: [String]
}

/// The app's error when the device is offline: its failure screen branches on it.
struct OfflineError: UserFacingError, Equatable {
  var userMessage: String { "You're offline." }
}

/// Loads the feed, taking its time, or fails offline.
struct FeedStep: StepPlugin {
  static let kind = "feed.load"
  struct Parameters: StepParameters {
    @Parameter("How long loading takes.") var duration: Duration
    @Parameter("Whether the device is offline.") var offline = false
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> Feed {
    try await context.sleep(for: parameters.duration)
    if parameters.offline { throw OfflineError() }
    return Feed(items: ["welcome"])
  }
}

/// Sets up the app's window: main-actor code, so the plugin says so and the manifest need not.
struct WindowStep: StepPlugin {
  static let kind = "ui.window"
  static let isolation = StepIsolation.main
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> String { makeWindow() }
  private func makeWindow() -> String {
    MainActor.assumeIsolated { "main window" }
  }
}

/// Shows the terms on a first launch: reads its shipped file only then, and checks it whole
/// only when asked to, as `orchestrate validate` asks.
struct TermsStep: StepPlugin {
  static let kind = "terms.show"
  struct Parameters: StepParameters {
    @Parameter("The terms, shipped with the manifest.", isPath: true) var file: String
    @ManifestDirectory var manifestDirectory: URL?
  }
  let file: URL?
  init(parameters: Parameters) {
    file = parameters.manifestDirectory.map {
      StepContext.resolve(parameters.file, against: $0)
    }
  }
  func checkShippedFiles() throws {
    guard let file, FileManager.default.isReadableFile(atPath: file.path) else {
      throw ParameterError("file", "the terms file is missing; ship it beside the manifest.")
    }
  }
  func run(_ context: StepContext) async throws {}
}

/// Prunes the app's saved drafts of songs the store no longer has: judges the app's data by
/// the store's silence, so it asks the store first whether it can.
struct DraftsPruneStep: StepPlugin {
  static let kind = "drafts.prune"
  static let inputs: [StepInput] = [.required(StoreHandle.self)]
  struct Parameters: StepParameters {
    @Parameter("The drafts file.", isPath: true) var file: String
  }
  let file: String
  init(parameters: Parameters) {
    file = parameters.file
  }
  func run(_ context: StepContext) async throws -> String {
    let store = try context.input(StoreHandle.self)
    let url = context.resolve(file)
    let modified =
      try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
    if let reason = store.reasonToKeep("the drafts file", modifiedAt: modified ?? .distantPast) {
      return "kept: \(reason)"
    }
    return "judged"
  }
}

/// Opens the app's notes database, which SQLite keeps files beside: the plugin says which,
/// so that no other step is given one.
struct NotesOpenStep: StepPlugin {
  static let kind = "notes.open"
  struct Parameters: StepParameters {
    @Parameter(
      "The notes database.", isPath: true, rewritesFile: true, companions: ["-wal", "-shm"])
    var file: String
  }
  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

/// Builds the search index, when the user first searches.
struct SearchIndexStep: StepPlugin {
  static let kind = "search.index"
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> [String] { ["welcome"] }
}

extension OutputKey where Value == Feed {
  /// The first screen's feed.
  static let feed = OutputKey("feed")
}

@MainActor
@Suite("The app's launch, tested with LaunchTesting")
struct AppLaunchTests {
  private static var registry: PluginRegistry {
    var registry = PluginRegistry()
    registry.register(FeedStep.self)
    registry.register(WindowStep.self)
    return registry
  }

  private static func manifest(offline: Bool) -> String {
    """
    { "version": 1, "milestones": { "interactive": ["feed", "window"] }, "steps": [
      { "id": "window", "plugin": "ui.window" },
      { "id": "feed", "plugin": "feed.load", "params": { "duration": "5s", "offline": \(offline) } } ] }
    """
  }

  @Test func aFiveSecondFeedOnTheManualClock() async throws {
    let started = ContinuousClock.now
    let report = try await LaunchTest.run(
      manifest: Self.manifest(offline: false), registry: Self.registry)
    print("a 5 s launch took \(ContinuousClock.now - started) of real time")
    #expect(report.outcome == .succeeded)
    #expect(report.time(ofMilestone: "interactive") == .some(.seconds(5)))
    #expect(report.output(of: "window", as: String.self) == "main window")
  }

  @Test func theFailureScreenBranchesOnThePluginsError() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(Self.manifest(offline: true).utf8), file: "app.json",
      directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    guard case .failed(let failure) = session.screen else {
      Issue.record("the launch did not fail: \(session.screen)")
      return
    }
    #expect(failure.underlying as? OfflineError == OfflineError())
    #expect(failure.userMessage == "You're offline.")
    #expect(failure.step == "feed")
    #expect(failure.plugin == "feed.load")
  }

  @Test func outputKeysAreCheckedOnceAndReadWithoutACast() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(Self.manifest(offline: false).utf8), file: "app.json",
      directory: FileManager.default.temporaryDirectory)
    try plan.check(.feed)
    #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<Feed>("fed")) }
    #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<String>("feed")) }
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    #expect(session[.feed] == Feed(items: ["welcome"]))
  }

  @Test func aViewsTwoTasksMayAskForAnOnDemandStepBeforeTheLaunchStarts() async throws {
    var registry = Self.registry
    registry.register(SearchIndexStep.self)
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        """
        { "version": 1, "steps": [
          { "id": "window", "plugin": "ui.window" },
          { "id": "search", "plugin": "search.index", "trigger": "onDemand" } ] }
        """.utf8), file: "app.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let session = LaunchSession()
    // `.task { try await launch.ensure("search", ...) }` beside `.task { await launch.run(...) }`:
    // SwiftUI starts them in no set order.
    let search = Task { try await session.ensure("search", as: [String].self) }
    let report = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    #expect(report.outcome == .succeeded)
    #expect(try await search.value == ["welcome"])
  }

  @Test func theAppHearsEachEventOnceTheSessionAppliedIt() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(Self.manifest(offline: false).utf8), file: "app.json",
      directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let session = LaunchSession()
    // What a signpost or MetricKit hook sees: the milestone at its time, the session there too.
    var heard: [String] = []
    session.onEvent = { event in
      if case .milestone(let name) = event.kind {
        heard.append("\(name) at \(event.time), reached \(session.isReached(name))")
      }
    }
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    #expect(heard == ["interactive at \(Duration.seconds(5)), reached true"])
  }

  @Test func theSessionKeepsItsLaunchesInABoundedStoreForUpload() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(Self.manifest(offline: false).utf8), file: "app.json",
      directory: FileManager.default.temporaryDirectory)
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("app-reports-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = LaunchReportStore(folder: folder, maxReports: 2)
    var labelled = LaunchEnvironment()
    labelled[LaunchLabels.self] = LaunchLabels(arm: "b", device: "phone")
    let environment = labelled
    for _ in 0..<3 {
      let clock = ManualClock()
      let session = LaunchSession(reportStore: store)
      _ = await clock.run {
        await session.run(plan, on: LaunchEngine(clock: clock), environment: environment)
      }
    }
    let kept = try store.reports()
    #expect(kept.count == 2)
    #expect(kept.allSatisfy { $0.outcome == .succeeded && $0.labels?.arm == "b" })
    // The upload flow of docs/field.md: remove what was read, and only that.
    try store.removeAll(where: kept.contains)
    #expect(try store.reports().isEmpty)
  }

  @Test func aShippedFileReadOnlyWhenNeededIsCheckedWhenAskedFor() throws {
    var registry = PluginRegistry()
    registry.register(TermsStep.self)
    let manifest = Array(
      #"{ "version": 1, "steps": [ { "id": "terms", "plugin": "terms.show", "params": { "file": "terms-\#(UUID().uuidString).txt" } } ] }"#
        .utf8)
    let folder = FileManager.default.temporaryDirectory
    // A launch loads without reading the file; the app's test reads it, as validate does.
    _ = try ManifestLoader(registry: registry).load(
      bytes: manifest, file: "app.json", directory: folder)
    #expect {
      try ManifestLoader(registry: registry, checksShippedFiles: true).load(
        bytes: manifest, file: "app.json", directory: folder)
    } throws: { error in
      (error as? ManifestError)?.diagnostics.map(\.message) == [
        "the terms file is missing; ship it beside the manifest."
      ]
    }
  }

  @Test func theFilesTheAppsPluginKeepsBesideItsDatabaseAreNoOtherStepsToRewrite() throws {
    var registry = PluginRegistry()
    registry.registerStore()
    registry.register(NotesOpenStep.self)
    let manifest = Array(
      #"""
      { "version": 1, "steps": [
        { "id": "notes", "plugin": "notes.open", "params": { "file": "notes.db" } },
        { "id": "store", "plugin": "store.init", "params": { "path": "notes.db-wal" } } ] }
      """#.utf8)
    let folder = FileManager.default.temporaryDirectory
    // A launch loads it; the app's test refuses it, as `orchestrate validate` does.
    _ = try ManifestLoader(registry: registry).load(
      bytes: manifest, file: "app.json", directory: folder)
    #expect {
      try ManifestLoader(registry: registry, checksShippedFiles: true).load(
        bytes: manifest, file: "app.json", directory: folder)
    } throws: { error in
      (error as? ManifestError)?.diagnostics.map(\.message) == [
        "notes.open rewrites 'notes.db' and the files it keeps beside it, or moves them aside when it cannot read it, but 'notes.db-wal' is also 'notes.db-wal' (the 'path' of step 'store'); give it a file of its own.",
        "store.init rewrites 'notes.db-wal', or moves it aside when it cannot read it, but it is also 'notes.db-wal' (kept beside 'notes.db', the 'file' of step 'notes'); give it a file of its own.",
      ]
    }
  }

  @Test func aStepThatJudgesTheAppsDataLeavesAloneWhatIsOlderThanTheStore() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "app-drafts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let drafts = folder.appendingPathComponent("drafts.json")
    try Data("[]".utf8).write(to: drafts)
    var registry = PluginRegistry()
    registry.registerStore()
    registry.register(DraftsPruneStep.self)
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        #"""
        { "version": 1, "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
          { "id": "prune", "plugin": "drafts.prune", "dependsOn": ["store"], "params": { "file": "drafts.json" } } ] }
        """#.utf8),
      file: "app.json", directory: folder, dataDirectory: folder)
    func prune() async -> String? {
      await LaunchEngine().run(plan).output(of: "prune", as: String.self)
    }
    // Created in the first launch, the store judges nothing then, nor the older drafts later.
    #expect(await prune()?.hasPrefix("kept: the store was created or given its tables") == true)
    #expect(await prune()?.hasPrefix("kept: the drafts file was last changed at ") == true)
    try Data("[1]".utf8).write(to: drafts)
    #expect(await prune() == "judged")
  }

  @Test func onePluginAlone() async throws {
    let feed = try await LaunchTest.run(FeedStep.self, params: #"{ "duration": "2s" }"#)
    #expect(feed == Feed(items: ["welcome"]))
  }
}
