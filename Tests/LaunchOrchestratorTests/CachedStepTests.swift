import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// What a cached step hands on: last session's results, say.
private struct Snapshot: Codable, Sendable, Equatable {
  var value: String
}

/// Outputs a ``Snapshot`` of its `value` after `takes` on the launch clock; fails when `fails`.
private struct FetchStep: StepPlugin {
  static let kind = "snapshot.fetch"
  struct Parameters: StepParameters {
    @Parameter("What the snapshot says.") var value: String
    @Parameter("How long fetching takes on the launch clock.") var takes: Duration?
    @Parameter("Whether the fetch fails.") var fails = false
    @Parameter("Goes on after its timeout, to end with a success nobody takes any more.")
    var ignoresCancellation = false
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> Snapshot {
    if let takes = parameters.takes {
      let deadline = context.attemptStart + takes
      if parameters.ignoresCancellation {
        // Not cancelled with the attempt: an unstructured task. Not detached, so the manual
        // clock sees it asleep, and the attempt waiting for it.
        try await Task { try await context.sleep(until: deadline) }.value
      } else {
        try await context.sleep(until: deadline)
      }
    }
    if parameters.fails { throw StepFailure("the server said no") }
    return Snapshot(value: parameters.value)
  }
}

/// Shows the snapshot it was given: the first screen.
private struct ShowStep: StepPlugin {
  static let kind = "snapshot.show"
  static let inputs: [StepInput] = [.required(Snapshot.self)]
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> String {
    "showing " + (try context.input(Snapshot.self).value)
  }
}

/// A snapshot whose decoding waits, up to 60 seconds, for another one's decoding to begin:
/// two entries decoded at once meet at once; decoded one after the other, the first waits in
/// vain. Only `severalEntriesAreReadTogetherAndEachServedAsIfAlone` decodes it. (Ten seconds
/// were once too few under the thread sanitizer, with every test's blocking work sharing the
/// pool's threads on two cores.)
private struct MeetingSnapshot: Codable, Sendable {
  var value: String

  /// How many decodings began, and whether one waited in vain.
  static let meeting = Locked((arrived: 0, waitedInVain: false))

  init(value: String) { self.value = value }

  init(from decoder: any Decoder) throws {
    value = try decoder.singleValueContainer().decode(String.self)
    Self.meeting.withLock { $0.arrived += 1 }
    let deadline = ContinuousClock.now + .seconds(60)
    while Self.meeting.withLock({ $0.arrived }) < 2 {
      guard ContinuousClock.now < deadline else {
        Self.meeting.withLock { $0.waitedInVain = true }
        return
      }
      usleep(1_000)
    }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(value)
  }
}

/// Outputs a ``MeetingSnapshot`` of its `value`.
private struct MeetStep: StepPlugin {
  static let kind = "snapshot.meet"
  struct Parameters: StepParameters {
    @Parameter("What the snapshot says.") var value: String
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> MeetingSnapshot {
    MeetingSnapshot(value: parameters.value)
  }
}

/// A class: not Codable, so it cannot be cached.
private final class Connection: Sendable {}

private struct ConnectStep: StepPlugin {
  static let kind = "connect"
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> Connection { Connection() }
}

@Suite("Cached steps", .timeLimit(.minutes(10)))
struct CachedStepTests {
  private static let registry: PluginRegistry = {
    var registry = PluginRegistry.testKinds
    registry.register([FetchStep.self, ShowStep.self, ConnectStep.self, MeetStep.self])
    return registry
  }()

  /// A data folder of its own per test, removed with the value.
  private final class Folder: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "cached-steps-\(UUID().uuidString)")
    init() throws {
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
  }

  private static let saved = Date(timeIntervalSince1970: 1_800_000_000)

  /// store (100ms) -> results (cached, 200ms) -> page; `interactive` waits for the page.
  /// With `quick`, nothing takes any time: for tests of what is served, not when.
  private static func manifest(
    value: String = "new", fails: Bool = false, quick: Bool = false, extra: String = "",
    splash: String? = nil
  ) -> String {
    """
    { "version": 1, "name": "Shots", "milestones": { "interactive": ["page"] },
      \(splash.map { #""splash": \#($0),"# } ?? "")
      "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "\(quick ? "0s" : "100ms")" } },
        { "id": "results", "plugin": "snapshot.fetch", "dependsOn": ["store"],
          "params": { "value": "\(value)", "takes": "\(quick ? "0s" : "200ms")", "fails": \(fails) },
          "cache": { "maxAge": "7d" }\(extra) },
        { "id": "page", "plugin": "snapshot.show", "dependsOn": ["results"] }
      ] }
    """
  }

  private static func plan(_ json: String, in folder: Folder) throws -> LaunchPlan {
    try ManifestLoader(registry: registry).load(
      bytes: Array(json.utf8), file: "shots.json", directory: folder.url,
      dataDirectory: folder.url)
  }

  /// Saves `value` as the entry of `results`, as a launch at `date` would have.
  private static func prime(
    _ plan: LaunchPlan, with value: String, at date: Date = saved
  ) throws {
    let step = try #require(plan.step("results"))
    try OutputCache(dataDirectory: plan.dataDirectory, manifestName: plan.name).save(
      Snapshot(value: value), step: step.id, kind: step.plugin, key: try #require(step.cacheKey),
      now: date)
  }

  private static func entry(of plan: LaunchPlan) throws -> String {
    try String(
      contentsOf: plan.cacheDirectory.appendingPathComponent("results.json"), encoding: .utf8)
  }

  private static func options(hoursAfterSaving hours: Double = 1) -> LaunchOptions {
    LaunchOptions(currentDate: { saved.addingTimeInterval(hours * 3600) })
  }

  @Test func aHitServesDependentsAndTheMilestoneAtTimeZeroWhileTheRefreshRunsBehind() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(), in: folder)
    try Self.prime(plan, with: "old")
    let clock = ManualClock()
    let (events, continuation) = LaunchEvents.makeStream()
    let run = clock.start {
      await LaunchEngine(clock: clock, options: Self.options()).run(plan, events: continuation)
    }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(100)])
    await clock.advance(to: .milliseconds(100))
    // The refresh started when its dependency ended, not before.
    #expect(clock.sleeperDeadlines == [.milliseconds(300)])
    await clock.advance(to: .milliseconds(300))
    let report = await run.value
    var seen: [LaunchEvent] = []
    for await event in events { seen.append(event) }

    #expect(report.outcome == .succeeded)
    #expect(report.time(ofMilestone: "interactive") == .some(.zero))
    let page = try #require(report.step("page"))
    #expect(page.start == .zero)
    #expect(report.output(of: "page", as: String.self) == "showing old")
    let results = try #require(report.step("results"))
    #expect(results.state == .cached)
    #expect(results.start == .zero && results.end == .zero)
    #expect(results.notes.first == "served from the cache (saved 1h ago); refreshing behind")
    #expect(
      results.refresh
        == LaunchReport.Refresh(
          state: .succeeded, start: .milliseconds(100), end: .milliseconds(300), attempts: 1,
          error: nil, ready: .milliseconds(100),
          work: [.init(attempt: 1, start: .milliseconds(100), end: .milliseconds(300))]))
    // The app's copy and the entry both hold the refreshed output.
    #expect(report.output(of: "results", as: Snapshot.self) == Snapshot(value: "new"))
    #expect(try Self.entry(of: plan).hasSuffix(#"{"value":"new"}"#))
    #expect(seen.contains(LaunchEvent(time: .zero, kind: .cached(step: "results"))))
    #expect(seen.contains(LaunchEvent(time: .milliseconds(300), kind: .refreshed(step: "results"))))
    #expect(!seen.contains { $0.kind == .succeeded(step: "results", usedFallback: false) })
    // The launch ended with the refresh, which waited for the store; the first screen
    // waited for nothing.
    #expect(report.criticalPath == ["store", "results"])
    #expect(
      report.criticalChains.first { $0.milestone == "interactive" }?.links.map(\.step)
        == ["results", "page"])
  }

  /// A launch whose context keeps a cached step's hard dependency out (a `when` of another
  /// reason) skips the step and what depends on it, as `orchestrate plan` says: a cached
  /// output does not bring back work the context leaves out (a `backgroundTask` launch showed
  /// the page).
  @Test func aStepWhoseDependencyTheContextKeepsOutIsNotServed() async throws {
    let folder = try Folder()
    let json = Self.manifest(quick: true).replacingOccurrences(
      of: #""params": { "duration": "0s" } }"#,
      with: #""params": { "duration": "0s" }, "when": { "reason": ["userTap"] } }"#)
    let plan = try Self.plan(json, in: folder)
    try Self.prime(plan, with: "cached")
    var environment = LaunchEnvironment()
    environment[LaunchContext.self] = LaunchContext(reason: .backgroundTask)

    let report = await LaunchEngine(options: Self.options()).run(plan, environment: environment)

    #expect(report.step("store")?.error == "condition: reason is backgroundTask")
    #expect(report.step("results")?.state == .skipped)
    #expect(report.step("results")?.error == "dependency 'store' was skipped")
    #expect(report.step("results")?.notes == [])
    #expect(report.step("page")?.state == .skipped)
    // A launch the condition lets in is served as before.
    environment[LaunchContext.self] = LaunchContext(reason: .userTap)
    let tapped = await LaunchEngine(options: Self.options()).run(plan, environment: environment)
    #expect(tapped.step("results")?.state == .cached)
    #expect(tapped.step("page")?.state == .succeeded)
  }

  /// A run-once dependency done before is skipped, but its dependents run: a cached step
  /// after it is served on the launches after the first, as without the `once`.
  @Test func aStepAfterARunOnceStepDoneBeforeIsServed() async throws {
    let folder = try Folder()
    let json = Self.manifest(quick: true).replacingOccurrences(
      of: #""params": { "duration": "0s" } }"#,
      with: #""params": { "duration": "0s" }, "once": "perInstall" }"#)
    let plan = try Self.plan(json, in: folder)
    let first = await LaunchEngine(options: Self.options()).run(plan)
    #expect(first.step("store")?.state == .succeeded)
    #expect(first.step("results")?.state == .succeeded)

    let second = await LaunchEngine(options: Self.options()).run(plan)
    #expect(second.step("store")?.state == .skipped)
    #expect(second.step("results")?.state == .cached, "\(second.step("results")?.notes ?? [])")
    #expect(second.step("page")?.state == .succeeded)
  }

  /// A retry serves a cached step whose refresh the failed launch skipped (its dependency
  /// failed) and refreshes it once that dependency runs again: reused as a success, it kept
  /// the old output for good, noted both "refreshing behind" and "reused".
  @MainActor @Test func aRetryRefreshesACachedStepWhoseRefreshTheFailedLaunchSkipped()
    async throws
  {
    let folder = try Folder()
    let key = "cached-retry-\(UUID().uuidString)"
    let plan = try Self.plan(
      """
      { "version": 1, "name": "Shots", "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 } },
        { "id": "results", "plugin": "snapshot.fetch", "dependsOn": ["store"],
          "params": { "value": "new" }, "cache": {} },
        { "id": "page", "plugin": "snapshot.show", "dependsOn": ["results"] }
      ] }
      """, in: folder)
    try Self.prime(plan, with: "old")
    let session = LaunchSession()
    let failed = await session.run(plan, on: LaunchEngine(options: Self.options()))
    #expect(failed.outcome == .failed)
    #expect(failed.step("results")?.state == .cached)
    #expect(failed.step("results")?.refresh?.state == .skipped)

    let retried = await session.retry()

    #expect(retried.outcome == .succeeded)
    #expect(retried.step("results")?.refresh?.state == .succeeded)
    #expect(session.output(of: "results", as: Snapshot.self) == Snapshot(value: "new"))
    #expect(try Self.entry(of: plan).contains("new"))
  }

  @Test func aRefreshIsTheLastToGetASlotAfterBackgroundWork() async throws {
    let folder = try Folder()
    let plan = try Self.plan(
      """
      { "version": 1, "name": "Shots", "maxConcurrency": 1, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "100ms" } },
        { "id": "results", "plugin": "snapshot.fetch", "dependsOn": ["store"],
          "params": { "value": "new", "takes": "200ms" }, "cache": {} },
        { "id": "page", "plugin": "snapshot.show", "dependsOn": ["results"] },
        { "id": "sync", "plugin": "wait", "priority": "background",
          "params": { "duration": "50ms" } }
      ] }
      """, in: folder)
    try Self.prime(plan, with: "old")
    let clock = ManualClock()
    let run = clock.start {
      await LaunchEngine(clock: clock, options: Self.options()).run(plan)
    }
    for time in [100, 150, 350] {
      await clock.settle()
      await clock.advance(to: .milliseconds(time))
    }
    let report = await run.value
    // 'sync', background and ready from the start, goes before the refresh that became ready
    // with it when 'store' ended.
    #expect(report.step("sync")?.start == .milliseconds(100))
    #expect(report.step("results")?.refresh?.start == .milliseconds(150))
    #expect(report.outcome == .succeeded)
  }

  @Test func anOutputTheLaunchDidNotTakeIsNeverSaved() async throws {
    let folder = try Folder()
    let plan = try Self.plan(
      Self.manifest(extra: #", "timeout": "100ms""#).replacingOccurrences(
        of: #""fails": false"#, with: #""fails": false, "ignoresCancellation": true"#),
      in: folder)
    let clock = ManualClock()
    let run = clock.start { await LaunchEngine(clock: clock, options: Self.options()).run(plan) }
    await clock.advance(to: .milliseconds(100))
    // The fetch's sleep and its timeout.
    #expect(clock.sleeperDeadlines == [.milliseconds(200), .milliseconds(300)])
    await clock.advance(to: .milliseconds(200))
    // Timed out, the fetch goes on to end with an output nobody takes; its grace period.
    #expect(clock.sleeperDeadlines == [.milliseconds(300), .milliseconds(1_200)])
    await clock.advance(to: .milliseconds(300))
    let report = await run.value
    #expect(report.step("results")?.state == .timedOut)
    #expect(
      !FileManager.default.fileExists(
        atPath: plan.cacheDirectory.appendingPathComponent("results.json").path))
  }

  @Test func aServedStepsRefreshWaitsForTheRefreshOfAServedDependency() async throws {
    let folder = try Folder()
    let json = """
      { "version": 1, "name": "Shots", "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "100ms" } },
        { "id": "results", "plugin": "snapshot.fetch", "dependsOn": ["store"],
          "params": { "value": "new", "takes": "200ms", "fails": false }, "cache": {} },
        { "id": "summary", "plugin": "snapshot.fetch", "dependsOn": ["results"],
          "params": { "value": "sum", "takes": "50ms" }, "cache": {} }
      ] }
      """
    let plan = try Self.plan(json, in: folder)
    let cache = OutputCache(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    for id in ["results", "summary"] {
      let step = try #require(plan.step(id))
      try cache.save(
        Snapshot(value: "old"), step: id, kind: step.plugin, key: try #require(step.cacheKey),
        now: Self.saved)
    }
    let clock = ManualClock()
    let run = clock.start { await LaunchEngine(clock: clock, options: Self.options()).run(plan) }
    for deadline in [100, 300, 350] {
      await clock.settle()
      #expect(clock.sleeperDeadlines == [.milliseconds(deadline)])
      await clock.advance(to: .milliseconds(deadline))
    }
    let report = await run.value
    #expect(report.step("summary")?.state == .cached)
    #expect(report.step("summary")?.refresh?.start == .milliseconds(300))
    #expect(report.step("summary")?.refresh?.state == .succeeded)
  }

  /// Several entries are read together before the first step starts: two that meet while
  /// they are decoded show it. Each is served, or not, as if read alone, and the steps' notes
  /// and `cached` events keep the plan's order.
  @Test func severalEntriesAreReadTogetherAndEachServedAsIfAlone() async throws {
    let folder = try Folder()
    let ids = (1...6).map { "part\($0)" }
    let steps = ids.map {
      #"{ "id": "\#($0)", "plugin": "snapshot.fetch", "params": { "value": "new \#($0)" }, "cache": {} }"#
    }
    let meeting = ["meet1", "meet2"].map {
      #"{ "id": "\#($0)", "plugin": "snapshot.meet", "params": { "value": "new" }, "cache": {} }"#
    }
    let plan = try Self.plan(
      #"{ "version": 1, "name": "Shots", "steps": [ \#((steps + meeting).joined(separator: ", ")) ] }"#,
      in: folder)
    let cache = OutputCache(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    // Entries for parts 1, 3, 5 and 6, the fifth's cut short; none for 2 and 4.
    for id in ids where id != "part2" && id != "part4" {
      let step = try #require(plan.step(id))
      try cache.save(
        Snapshot(value: "old \(id)"), step: id, kind: step.plugin,
        key: try #require(step.cacheKey), now: Self.saved)
    }
    let fifth = plan.cacheDirectory.appendingPathComponent("part5.json")
    try Data(try Data(contentsOf: fifth).dropLast(3)).write(to: fifth)
    for id in ["meet1", "meet2"] {
      let step = try #require(plan.step(id))
      try cache.save(
        MeetingSnapshot(value: "old"), step: id, kind: step.plugin,
        key: try #require(step.cacheKey), now: Self.saved)
    }

    MeetingSnapshot.meeting.withLock { $0 = (0, false) }
    let recorder = EventRecorder()
    let report = await recorder.start(
      plan, on: LaunchEngine(clock: ContinuousClock(), options: Self.options())
    ).value
    await recorder.drained()

    #expect(MeetingSnapshot.meeting.withLock { $0 } == (2, false), "decoded at the same time")
    let served = "served from the cache (saved 1h ago); refreshing behind"
    #expect(
      (ids + ["meet1", "meet2"]).map { report.step($0)?.notes.first } == [
        served, "cache not used: no entry yet", served, "cache not used: no entry yet",
        "cache not used: the entry does not decode as LaunchOrchestratorTests.Snapshot (The given data was not valid JSON.)",
        served, served, served,
      ])
    #expect(
      recorder.lines.filter { $0.hasPrefix("cached") } == [
        "cached part1", "cached part3", "cached part6", "cached meet1", "cached meet2",
      ])
    #expect(report.outcome == .succeeded)
  }

  @Test func aFailedRefreshKeepsTheCachedOutputAndWarnsWithoutFailingTheLaunch() async throws {
    let folder = try Folder()
    let plan = try Self.plan(
      Self.manifest(fails: true, extra: #", "retry": { "attempts": 2 }, "fallback": {}"#),
      in: folder)
    try Self.prime(plan, with: "old")
    let before = try Self.entry(of: plan)
    let clock = ManualClock()
    let run = clock.start { await LaunchEngine(clock: clock, options: Self.options()).run(plan) }
    for deadline in [100, 300, 500] {
      await clock.settle()
      #expect(clock.sleeperDeadlines == [.milliseconds(deadline)])
      await clock.advance(to: .milliseconds(deadline))
    }
    let report = await run.value
    #expect(report.outcome == .succeeded)
    let results = try #require(report.step("results"))
    #expect(results.state == .cached)
    // Two attempts and no fallback: a fallback's output is no better than the cached one.
    #expect(results.refresh?.state == .failed)
    #expect(results.refresh?.attempts == 2)
    #expect(results.refresh?.error == "the server said no")
    #expect(
      results.notes.last == "refresh failed: the server said no; the cached output stays")
    #expect(report.output(of: "results", as: Snapshot.self) == Snapshot(value: "old"))
    #expect(try Self.entry(of: plan) == before)
  }

  @Test func anAbortingRefreshFailureDoesNotAbortAndALaunchEndingEarlySkipsTheRefresh()
    async throws
  {
    let folder = try Folder()
    let json = """
      { "version": 1, "name": "Shots", "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "100ms" }, "onFailure": "abort",
          "timeout": "50ms" },
        { "id": "results", "plugin": "snapshot.fetch", "dependsOn": ["store"],
          "params": { "value": "new", "fails": false }, "cache": {} }
      ] }
      """
    let plan = try Self.plan(json, in: folder)
    try Self.prime(plan, with: "old")
    let clock = ManualClock()
    let run = clock.start { await LaunchEngine(clock: clock, options: Self.options()).run(plan) }
    await clock.settle()
    // The store's timeout and its sleep.
    #expect(clock.sleeperDeadlines == [.milliseconds(50), .milliseconds(100)])
    await clock.advance(to: .milliseconds(50))
    let report = await run.value
    #expect(report.outcome == .failed)
    let results = try #require(report.step("results"))
    #expect(results.state == .cached)
    #expect(results.refresh?.state == .skipped)
    #expect(results.notes.last?.hasPrefix("refresh skipped: ") == true)
    #expect(report.output(of: "results", as: Snapshot.self) == Snapshot(value: "old"))
  }

  @Test(arguments: [
    (
      "expired", 8 * 24.0,
      "cache not used: the entry is 8d old, older than 'maxAge' 7d"
    ),
    (
      "dated in the future", -2.0,
      "cache not used: the entry is dated in the future (was the clock changed?)"
    ),
  ])
  func anEntryOutsideItsAgeIsNotServed(case _: String, hours: Double, note: String) async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try Self.prime(plan, with: "old")
    let report = await LaunchEngine(options: Self.options(hoursAfterSaving: hours)).run(plan)
    let results = try #require(report.step("results"))
    #expect(results.state == .succeeded)
    #expect(results.notes == [note])
    #expect(report.output(of: "results", as: Snapshot.self) == Snapshot(value: "new"))
    #expect(try Self.entry(of: plan).hasSuffix(#"{"value":"new"}"#))
  }

  @Test func aBrokenOrForeignEntryIsNotServedAndSaysWhy() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try Self.prime(plan, with: "old")
    let file = plan.cacheDirectory.appendingPathComponent("results.json")
    let good = try Self.entry(of: plan)
    let header = String(good.prefix { $0 != "\n" })
    let cases: [(String, String)] = [
      (String(good.dropLast(5)), "cache not used: the entry does not decode as "),
      ("", "cache not used: the entry is damaged (its header is unreadable)"),
      (
        header.replacingOccurrences(of: "Snapshot", with: "Other") + "\n{}",
        "cache not used: the entry holds a "
      ),
      (
        header.replacingOccurrences(of: "snapshot.fetch", with: "other.kind") + "\n{}",
        "cache not used: the entry was written by 'other.kind', not 'snapshot.fetch'"
      ),
      (
        header.replacingOccurrences(of: #"\"value\": \"new\""#, with: #"\"value\": \"older\""#)
          + "\n{\"value\":\"x\"}",
        "cache not used: the params of the step or of its dependencies changed since the entry was written"
      ),
      (
        header.replacingOccurrences(of: #""format":1"#, with: #""format":9"#) + "\n{}",
        "cache not used: the entry has another layout (format 9, this build reads 1)"
      ),
    ]
    for (contents, note) in cases {
      try Data(contents.utf8).write(to: file)
      let report = await LaunchEngine(options: Self.options()).run(plan)
      let results = try #require(report.step("results"))
      #expect(results.state == .succeeded, "\(note): \(results.notes)")
      #expect(results.notes.first?.hasPrefix(note) == true, "\(results.notes) for \(note)")
      #expect(try Self.entry(of: plan).hasSuffix(#"{"value":"new"}"#))
    }
  }

  /// Params equal only in Swift's eyes (`café` composed, and decomposed: two stores where a
  /// file system keeps names as bytes) are other params: the entry is not served.
  @Test func paramsThatDifferOnlyInTheirUnicodeFormAreOtherParams() async throws {
    let folder = try Folder()
    let composed = try Self.plan(Self.manifest(value: "caf\u{E9}", quick: true), in: folder)
    try Self.prime(composed, with: "the composed store's")
    let decomposed = try Self.plan(Self.manifest(value: "cafe\u{301}", quick: true), in: folder)
    let report = await LaunchEngine(options: Self.options()).run(decomposed)
    let results = try #require(report.step("results"))
    #expect(results.state == .succeeded)
    #expect(
      results.notes == [
        "cache not used: the params of the step or of its dependencies changed since the entry was written"
      ])
    #expect(
      report.output(of: "results", as: Snapshot.self) != Snapshot(value: "the composed store's"))
  }

  @Test func aLinkOrAFolderWhereTheEntryBelongsIsNeitherFollowedNorReplaced() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try FileManager.default.createDirectory(
      at: plan.cacheDirectory, withIntermediateDirectories: true)
    let elsewhere = folder.url.appendingPathComponent("notes.txt")
    try Data("my notes".utf8).write(to: elsewhere)
    let entry = plan.cacheDirectory.appendingPathComponent("results.json")
    try FileManager.default.createSymbolicLink(at: entry, withDestinationURL: elsewhere)
    let report = await LaunchEngine(options: Self.options()).run(plan)
    let results = try #require(report.step("results"))
    #expect(results.state == .succeeded)
    #expect(results.notes.first?.contains("is a symbolic link") == true)
    #expect(results.notes.last?.hasPrefix("the output was not saved to the cache: ") == true)
    #expect(try String(contentsOf: elsewhere, encoding: .utf8) == "my notes")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: entry.path) == elsewhere.path)
  }

  @Test func turnedOffForALaunchItRunsTheStepAndStillSavesTheNewOutput() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try Self.prime(plan, with: "old")
    var options = Self.options()
    options.servesCachedOutputs = false
    let report = await LaunchEngine(options: options).run(plan)
    let results = try #require(report.step("results"))
    #expect(results.state == .succeeded)
    #expect(results.notes == ["cache not used: cached outputs are off for this launch"])
    #expect(try Self.entry(of: plan).hasSuffix(#"{"value":"new"}"#))
  }

  @Test func concurrentLaunchesNeverLeaveATornEntry() async throws {
    let folder = try Folder()
    let big = String(repeating: "x", count: 200_000)
    let plans = try (0..<2).map { writer in
      try Self.plan(Self.manifest(value: "\(writer)\(big)", quick: true), in: folder)
    }
    let cache = OutputCache(dataDirectory: folder.url, manifestName: "Shots")
    let options = LaunchOptions(
      servesCachedOutputs: false, currentDate: { Self.saved.addingTimeInterval(60) })
    let readerKey = try #require(plans[0].step("results")?.cacheKey)
    await withTaskGroup(of: Void.self) { group in
      for round in 0..<20 {
        let plan = plans[round % 2]
        group.addTask { _ = await LaunchEngine(options: options).run(plan) }
      }
      group.addTask {
        for _ in 0..<200 {
          // Params differ between the two writers, so a whole entry is a hit or a params miss;
          // a torn one would fail to decode.
          switch cache.lookup(
            step: "results", kind: "snapshot.fetch", key: readerKey, maxAge: nil,
            now: Self.saved.addingTimeInterval(60))
          {
          case .hit(let output, _):
            #expect((output as? Snapshot)?.value.hasPrefix("0xxx") == true)
          case .miss(let reason):
            #expect(
              reason == "no entry yet"
                || reason
                  == "the params of the step or of its dependencies changed since the entry was written",
              "\(reason)")
          }
          await Task.yield()
        }
      }
    }
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache.folder.path)
    #expect(leftovers == ["results.json"])
  }

  @Test func aLinkedCacheFolderIsNeitherReadNorWrittenNorClearedThrough() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    let elsewhere = folder.url.appendingPathComponent("elsewhere")
    try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
    let mine = elsewhere.appendingPathComponent("results.json")
    try Data("mine".utf8).write(to: mine)
    try FileManager.default.createSymbolicLink(
      at: folder.url.appendingPathComponent(".orchestrate-cache"), withDestinationURL: elsewhere)
    try FileManager.default.createSymbolicLink(
      at: elsewhere.appendingPathComponent("Shots"), withDestinationURL: elsewhere)
    let report = await LaunchEngine(options: Self.options()).run(plan)
    let notes = try #require(report.step("results")?.notes)
    #expect(
      notes.first?.hasSuffix(
        "is not a folder (a symbolic link?), and the cache only uses its own folders; remove it if it is not needed"
      ) == true)
    #expect(notes.last?.hasPrefix("the output was not saved to the cache: ") == true)
    #expect(try String(contentsOf: mine, encoding: .utf8) == "mine")
    #expect(throws: StepFailure.self) { try plan.clearCache() }
    #expect(try String(contentsOf: mine, encoding: .utf8) == "mine")
  }

  @Test func clearingRemovesWhateverTookAnEntrysPlaceButNotWhatItLeadsToNorAFolder() throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try FileManager.default.createDirectory(
      at: plan.cacheDirectory, withIntermediateDirectories: true)
    let target = folder.url.appendingPathComponent("target.txt")
    try Data("keep".utf8).write(to: target)
    try FileManager.default.createSymbolicLink(
      at: plan.cacheDirectory.appendingPathComponent("results.json"), withDestinationURL: target)
    #expect(mkfifo(plan.cacheDirectory.appendingPathComponent("page.json").path, 0o644) == 0)
    #expect(try plan.clearCache() == 2)
    #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
    try FileManager.default.createDirectory(
      at: plan.cacheDirectory.appendingPathComponent("photos"), withIntermediateDirectories: true)
    #expect {
      try plan.clearCache()
    } throws: {
      "\($0)".hasSuffix(
        "but left the folder 'photos' in it: the cache never makes one; remove it yourself if it is not needed"
      )
    }
  }

  @Test func anOutputTooLargeForAnEntryIsNotSavedAndSaysWhy() async throws {
    let folder = try Folder()
    let big = String(repeating: "x", count: OutputCache.maximumEntrySize)
    let plan = try Self.plan(Self.manifest(value: big, quick: true), in: folder)
    let report = await LaunchEngine(options: Self.options()).run(plan)
    let note = try #require(report.step("results")?.notes.last)
    #expect(note.hasPrefix("the output was not saved to the cache: it would be "))
    #expect(note.hasSuffix("cache a first screen's worth (a page), not the whole library"))
  }

  @Test func anAppClearsTheCacheOfAManifestThatNoLongerLoadsByItsName() throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try Self.prime(plan, with: "old")
    #expect(try LaunchPlan.clearCache(manifestName: "Shots", dataDirectory: folder.url) == 1)
    #expect(!FileManager.default.fileExists(atPath: plan.cacheDirectory.path))
  }

  @Test func clearingRemovesTheEntriesOnly() async throws {
    let folder = try Folder()
    let plan = try Self.plan(Self.manifest(quick: true), in: folder)
    try Self.prime(plan, with: "old")
    let other = folder.url.appendingPathComponent("keep.txt")
    try Data("mine".utf8).write(to: other)
    #expect(try plan.clearCache() == 1)
    #expect(!FileManager.default.fileExists(atPath: plan.cacheDirectory.path))
    #expect(FileManager.default.fileExists(atPath: other.path))
    #expect(try plan.clearCache() == 0)
  }

  @Test func aCacheOnAKindWhoseOutputIsNotCodableIsAValidationError() throws {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "db", "plugin": "connect", "cache": {} },
          { "id": "nap", "plugin": "wait", "params": { "duration": "1s" }, "cache": { "maxAge": "soon" } }
        ] }
        """, registry: Self.registry)
    #expect(
      problems == [
        "2:47: error: step 'db' (steps[0].cache): 'connect' outputs a Connection, which is not Codable; a cached output is saved to a file between launches, so make Connection Codable or remove 'cache'.",
        "3:77: error: step 'nap' (steps[1].cache): 'wait' outputs nothing, so there is nothing to cache; remove 'cache'.",
        "3:89: error: step 'nap' (steps[1].cache.maxAge): 'soon' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
      ])
  }

  @MainActor
  @Test func theSessionHandsTheAppTheCachedOutputAtOnceThenTheRefreshedOne() async throws {
    let folder = try Folder()
    let plan = try Self.plan(
      Self.manifest(splash: #"{ "skeletonAfter": "150ms" }"#), in: folder)
    try Self.prime(plan, with: "old")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start {
      await session.run(plan, on: LaunchEngine(clock: clock, options: Self.options()))
    }
    await clock.settle()
    #expect(session.isReached("interactive"))
    #expect(session.output(of: "results", as: Snapshot.self) == Snapshot(value: "old"))
    #expect(session.screen == .content)
    // The store's sleep. The splash's timer for the skeleton, which will not show, sleeps too
    // when it looked before the session applied the cached content, and is done when after:
    // the session reads its events on the main actor, where the timer looks, and the two
    // may come in either order at the same instant.
    let skeletonTimer = Duration.milliseconds(150) + .nanoseconds(1)
    #expect(clock.sleeperDeadlines.filter { $0 != skeletonTimer } == [.milliseconds(100)])
    await clock.advance(to: .milliseconds(100))
    #expect(clock.sleeperDeadlines.filter { $0 != skeletonTimer } == [.milliseconds(300)])
    await clock.advance(to: .milliseconds(300))
    let report = await run.value
    #expect(session.output(of: "results", as: Snapshot.self) == Snapshot(value: "new"))
    // The content came from the cache: no skeleton while the query ran past 150ms.
    #expect(report.splash == SplashTiming(contentAt: .zero, skeletonFrom: nil))
    #expect(session.screen == .content)
    #expect(session.progress == 1)
  }

  @Test func aMaxAgeOfZeroIsAValidationError() {
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "steps": [ { "id": "p", "plugin": "snapshot.fetch", "params": { "value": "x" }, "cache": { "maxAge": "0s" } } ] }"#,
        registry: Self.registry
      ) == [
        "1:118: error: step 'p' (steps[0].cache.maxAge): a 'maxAge' of 0 never serves the entry; give how old it may be (\"7d\"), or remove 'cache'."
      ])
  }

  @Test func entryNamesStayInTheirFolder() {
    #expect(OutputCache.fileName("") == "%")
    // A private type's name holds an address that changes between launches; the entry's doesn't.
    #expect(OutputCoder.stableName(of: Snapshot.self) == "LaunchOrchestratorTests.Snapshot")
    #expect(OutputCache.fileName("results") == "results")
    #expect(OutputCache.fileName("../up") == "%2E.%2Fup")
    #expect(OutputCache.fileName(".hidden") == "%2Ehidden")
    #expect(OutputCache.fileName("a b/c") == "a%20b%2Fc")
    let long = String(repeating: "é", count: 200)
    #expect(OutputCache.fileName(long).utf8.count < 250)
    #expect(OutputCache.fileName(long) != OutputCache.fileName(long + "x"))
  }
}
