import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// The app's lifecycle at its edges: what a review that drove launches from outside found
/// (ensure after a launch, on-demand failures in a session, cancel while paused or backing
/// off, a pause said as the run starts, a route after the launch).
@Suite("Launch lifecycle edges", .timeLimit(.minutes(10)))
struct LaunchLifecycleEdgeTests {
  /// A plan without on-demand steps closes its run with the launch: an ensure after it is
  /// answered at once, not left waiting for a run that is gone.
  @Test func ensureAfterALaunchWithoutOnDemandStepsIsRefusedAtOnce() async throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "token.make", "params": { "value": "s" } } ] }"#
    )
    let control = LaunchControl()
    #expect(await LaunchEngine().run(plan, control: control).outcome == .succeeded)
    let launchStep = await #expect(throws: LaunchFailure.self) {
      try await control.ensure("store", as: Token.self)
    }
    #expect(launchStep?.kind == .notOnDemand)
    let unknown = await #expect(throws: LaunchFailure.self) {
      try await control.ensure("stor", as: Token.self)
    }
    #expect(unknown?.kind == .unknownStep)
    #expect(unknown?.message == "the manifest has no step 'stor'.")
  }

  @MainActor @Test func sessionEnsureAfterALaunchWithoutOnDemandStepsIsRefusedAtOnce()
    async throws
  {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "token.make", "params": { "value": "s" } } ] }"#
    )
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("store", as: Token.self)
    }
    #expect(failure?.kind == .notOnDemand)
  }

  /// "The failure is the caller's": an on-demand step that fails during the launch leaves the
  /// session's screen and failure as they are, whatever its `onFailure`.
  @MainActor @Test(arguments: ["abort", "continue"])
  func anOnDemandFailureDuringTheLaunchLeavesTheSessionsScreen(policy: String) async throws {
    let key = "edge-on-demand-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["page"] }, "steps": [
        { "id": "page", "plugin": "wait", "params": { "duration": "2s" } },
        { "id": "index", "plugin": "count", "params": { "key": "\(key)", "failRuns": 5 },
          "trigger": "onDemand", "onFailure": "\(policy)" }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    // What the session shows as it takes in the step's failure, and once the launch ends.
    var seenAtFailure: [(LaunchScreen, LaunchFailure?)] = []
    session.onEvent = { event in
      if case .failed("index", _) = event.kind {
        seenAtFailure.append((session.screen, session.failure))
      }
    }
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .seconds(1))
    let thrown = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("index", as: Tally.self)
    }
    #expect(thrown?.message == "'index' failed: run 1 fails")
    await clock.advance(to: .seconds(2))
    let report = await run.value
    #expect(report.outcome == .succeeded)
    #expect(seenAtFailure.count == 1)
    #expect(seenAtFailure.first?.0 == .splash)
    #expect(seenAtFailure.first?.1 == nil)
    #expect(session.screen == .content)
    #expect(session.failure == nil)
  }

  /// Cancelled while paused, a launch whose step ignores cancellation ends after the grace
  /// period, as it does unpaused: the pause ends at the cancel, or the grace would wait for
  /// the app to come back.
  @MainActor @Test(arguments: [true, false])
  func cancelWhilePausedEndsAfterTheGraceWithAStepThatIgnoresIt(paused: Bool) async throws {
    let release = ManualGate()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "stubborn", isBlocking: true) { _ in release.wait() }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "hang", "plugin": "stubborn" } ] }"#,
      registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .milliseconds(500))
    #expect(session.runningSteps == ["hang"])
    if paused { session.pause() }
    session.cancel()
    // The grace (1 s by default) from the cancel, in the launch's time.
    await clock.advance(to: .milliseconds(1_500))
    let report = await run.value
    release.open()
    #expect(report.outcome == .cancelled)
    #expect(report.step("hang")?.state == .cancelled)
    #expect(report.duration == .milliseconds(1_500))
    #expect(session.screen == .cancelled)
    #expect(session.phase == .finished(.cancelled))
  }

  /// A step waiting for its next attempt when the app cancels is failed by the launch's end,
  /// not the launch's failure: the screen is `.cancelled`, and `failure` stays `nil`.
  @MainActor @Test func cancelDuringARetrysBackoffShowsTheCancelledScreen() async throws {
    let key = "edge-backoff-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "fetch", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "retry": { "attempts": 2, "backoff": "5s" } }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    var screens: [LaunchScreen] = []
    session.onEvent = { _ in screens.append(session.screen) }
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .seconds(1))
    session.cancel()
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(
      report.step("fetch")?.error
        == "attempt 1 failed (run 1 fails) and the launch was cancelled before attempt 2")
    #expect(session.screen == .cancelled)
    #expect(session.failure == nil)
    #expect(!screens.contains { if case .failed = $0 { true } else { false } }, "\(screens)")
  }

  /// The same for a route: the route's screen, not the failure of a step it stopped.
  @MainActor @Test func aRouteDuringAnotherStepsBackoffShowsTheRoutesScreen() async throws {
    let key = "edge-route-\(UUID().uuidString)"
    var registry = PluginRegistry.testKinds
    registry.register(kind: "router") { _ in throw LaunchRoute("loginRequired") }
    let plan = try loadPlan(
      """
      { "version": 1, "splash": { "minimum": "2s" },
        "milestones": { "interactive": ["session"] }, "steps": [
        { "id": "fetch", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "retry": { "attempts": 2, "backoff": "5s" } },
        { "id": "session", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "gate", "plugin": "router", "dependsOn": ["session"] }
      ] }
      """, registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .seconds(2))
    let report = await run.value
    #expect(report.outcome == .routed)
    #expect(report.step("fetch")?.state == .failed)
    #expect(session.screen == .routed(LaunchRoute("loginRequired")))
    #expect(session.failure == nil)
  }

  /// A pause said by the first step's code as the run starts (before the run had taken its
  /// control) reached only the clock: the step's dependent started while paused. Each
  /// launch's first step pauses; its dependent must wait for the resume. (A race: a launch
  /// that lost it showed it in a few of 300; none may.)
  @Test func aPauseSaidAsTheRunStartsHoldsBackTheNextStep() async throws {
    for _ in 0..<100 {
      let control = LaunchControl()
      var registry = PluginRegistry.testKinds
      registry.register(kind: "pauser") { _ in control.pause() }
      let plan = try loadPlan(
        """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "pauser" },
          { "id": "b", "plugin": "noop", "dependsOn": ["a"] }
        ] }
        """, registry: registry)
      let launch = Task { await LaunchEngine().run(plan, control: control) }
      while control.report?.step("a")?.state != .succeeded { await Task.yield() }
      // Time for a dependent that wrongly goes on to start; paused, none may.
      try await Task.sleep(for: .milliseconds(1))
      #expect(control.report?.step("b")?.start == nil)
      control.resume()
      let report = await launch.value
      #expect(report.step("b")?.state == .succeeded)
      #expect(report.pauses.count == 1)
    }
  }

  /// An on-demand step that ends on a route hands it to the app that ensured it, during the
  /// launch or after it, as it would a failure: the launch is not routed, before or after it
  /// ended.
  @Test(arguments: [false, true])
  func anOnDemandStepsRouteIsItsCallers(afterTheLaunch: Bool) async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "router") { _ in throw LaunchRoute("loginRequired") }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "page", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "gate", "plugin": "router", "trigger": "onDemand",
          "retry": { "attempts": 3, "backoff": "0s" } }
      ] }
      """, registry: registry)
    let clock = ManualClock()
    let control = LaunchControl()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan, control: control) }
    if afterTheLaunch { await clock.advance(to: .seconds(1)) }
    let failure = await #expect(throws: LaunchFailure.self) {
      try await control.ensure("gate", as: Void.self)
    }
    #expect(failure?.kind == .stepFailed)
    #expect(
      failure?.message
        == "'gate' failed: it ended on the route 'loginRequired', which is for the app that ensured it: an on-demand step does not route the launch"
    )
    #expect(failure?.underlying as? LaunchRoute == LaunchRoute("loginRequired"))
    await clock.advance(to: .seconds(1))
    let report = await launch.value
    #expect(report.outcome == .succeeded)
    #expect(report.route == nil)
    #expect(control.report?.outcome == .succeeded)
    #expect(control.report?.route == nil)
    #expect(control.report?.step("gate")?.state == .failed)
    #expect(control.report?.step("gate")?.attempts == 1, "a route is an answer: not tried again")
  }

  /// An on-demand step is ready when it is ensured (its dependencies ended), not at the
  /// launch's start: it did not wait for a deferral it does not have.
  @Test func anOnDemandStepIsReadyWhenEnsured() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "3s" } },
        { "id": "index", "plugin": "wait", "params": { "duration": "4s" }, "trigger": "onDemand" },
        { "id": "search", "plugin": "wait", "params": { "duration": "1s" }, "trigger": "onDemand",
          "dependsOn": ["store"] }
      ] }
      """)
    let clock = ManualClock()
    let control = LaunchControl()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan, control: control) }
    await clock.advance(to: .seconds(1))
    control.request("index")
    control.request("search")
    await clock.advance(to: .seconds(5))
    _ = await launch.value
    let report = try #require(control.report)
    let index = try #require(report.step("index"))
    #expect(index.ready == .seconds(1))
    #expect(index.start == .seconds(1))
    #expect(index.waits.isEmpty, "\(index.waits)")
    // Ensured before its dependency ended: ready at that end.
    let search = try #require(report.step("search"))
    #expect(search.ready == .seconds(3))
    #expect(search.waits.isEmpty, "\(search.waits)")
  }

  /// A cancel said after the launch ended changes nothing: an on-demand step ensured while
  /// the app is away still waits for it to come back.
  @Test func aCancelAfterTheLaunchEndedLeavesPausesAlone() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "page", "plugin": "noop" },
        { "id": "index", "plugin": "token.make", "params": { "value": "i" }, "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    #expect(await LaunchEngine().run(plan, control: control).outcome == .succeeded)
    control.cancel()
    control.pause()
    #expect(control.isPaused)
    let ensured = Task { try await control.ensure("index", as: Token.self) }
    // Paused: the step waits. (Time for it to start wrongly; none may.)
    try await Task.sleep(for: .milliseconds(20))
    #expect(control.report?.step("index")?.start == nil)
    control.resume()
    #expect(try await ensured.value == Token(value: "i"))
  }
  /// An ensure said once the step's failed run has ended hears the run it asks for, not that
  /// failure: the run hands a result only to the callers whose request it heard before the
  /// step ended. (Before, a caller arriving between the end and its hand-over heard the old
  /// failure, and the step ran again for nobody.) A race: repeated, each caller asks the
  /// moment the report shows the failure.
  @Test func anEnsureAfterAFailureHearsTheRunItAskedFor() async throws {
    for round in 0..<100 {
      let key = "edge-after-failure-\(UUID().uuidString)"
      let plan = try loadPlan(
        """
        { "version": 1, "steps": [
          { "id": "page", "plugin": "noop" },
          { "id": "index", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
            "trigger": "onDemand" }
        ] }
        """)
      let control = LaunchControl()
      let launch = Task { await LaunchEngine().run(plan, control: control) }
      let first = Task { try await control.ensure("index", as: Tally.self) }
      while control.report?.step("index")?.state != .failed { await Task.yield() }
      let second = try await control.ensure("index", as: Tally.self)
      #expect(second == Tally(value: "\(key)#2"), "round \(round)")
      await #expect(throws: LaunchFailure.self) { try await first.value }
      #expect(try await control.ensure("index", as: Tally.self) == second)
      #expect(stepRuns.withLock { $0[key] } == 2, "round \(round): no run for nobody")
      #expect(await launch.value.outcome == .succeeded)
    }
  }

  /// The launch record's turn (its lock, its write) comes before the first step can start:
  /// its time is the launch's, not the first step's work (a 0 ms step showed the record's
  /// 250 ms wait as its own), nor time before the launch (`startedAt` and
  /// `sinceProcessStart`, which counted it a second time).
  @Test func theLaunchRecordsTimeIsNoStepsWorkAndNotBeforeTheLaunch() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "edge-record-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let began = Locked<Date?>(nil)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "date.now") { _ in began.withLock { $0 = Date() } }
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        #"{ "version": 1, "steps": [ { "id": "first", "plugin": "date.now" }, { "id": "seed", "plugin": "noop", "once": "perInstall" } ] }"#
          .utf8), file: "edge.json", directory: folder, dataDirectory: folder)
    // Another process's turn with the record, for all of the launch's wait for it.
    let record = LaunchRecordFile(dataDirectory: folder, manifestName: "edge")
    try FileManager.default.createDirectory(at: record.folder, withIntermediateDirectories: true)
    let lock = open(record.lockURL.path, O_RDWR | O_CREAT, 0o600)
    try #require(lock >= 0)
    defer { close(lock) }
    try #require(flock(lock, LOCK_EX) == 0)

    let report = await LaunchEngine().run(plan)

    let wait = ContextKeeper.startWait
    let first = try #require(report.step("first"))
    #expect(first.state == .succeeded)
    #expect(try #require(first.start) >= wait, "ready when the launch could start it")
    #expect(try #require(first.ready) >= wait)
    let code = try #require(began.withLock { $0 })
    let startedAt = try #require(report.startedAt)
    #expect(code.timeIntervalSince(startedAt) >= wait / .seconds(1))
  }

  /// A launch run without a control can be sent no signal: its steps that wait for one are
  /// skipped once nothing else holds them, as after `finish()`; the run used to wait for ever.
  @Test func aLaunchWithoutAControlSkipsTheStepsThatWaitForASignal()
    async throws
  {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent", "sceneActive"], "steps": [
        { "id": "page", "plugin": "noop" },
        { "id": "analytics", "plugin": "noop", "dependsOn": ["page"], "waitFor": ["consent"] },
        { "id": "upload", "plugin": "noop", "dependsOn": ["analytics"] }
      ] }
      """)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .succeeded)
    #expect(report.step("page")?.state == .succeeded)
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.step("upload")?.state == .skipped)
    #expect(report.signals.map(\.name) == ["consent", "sceneActive"])
    #expect(report.signals.allSatisfy { $0.time == nil })
  }

  /// A signal sent after `finish()` said none would come is not heard: the steps that waited
  /// for it were skipped as not sent, and the report does not say it was (it said both).
  @Test func aSignalSentAfterFinishIsNotHeard() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "page", "plugin": "wait", "params": { "duration": "2s" } },
        { "id": "analytics", "plugin": "noop", "waitFor": ["consent"] }
      ] }
      """)
    let clock = ManualClock()
    let control = LaunchControl()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan, control: control) }
    await clock.advance(to: .milliseconds(500))
    control.finish()
    await clock.advance(to: .seconds(1))
    control.signal("consent")
    await clock.advance(to: .seconds(2))
    let report = await launch.value
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.signals.first?.time == nil)
  }

  /// Once a launch that failed or was routed is over, the app's on-demand step runs, as after
  /// one that succeeded (the login screen a gate routed to asks for its step); it was refused
  /// as "the launch ended before it was ensured". The launch's outcome stays as it ended.
  @Test(arguments: ["fail", "route"])
  func anOnDemandStepEnsuredAfterALaunchThatEndedEarlyRuns(ending: String) async throws {
    let key = "edge-after-ending-\(UUID().uuidString)"
    var registry = PluginRegistry.testKinds
    registry.register(kind: "gate") { _ in
      if ending == "fail" { throw StepFailure("down") } else { throw LaunchRoute("login") }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "gate", "plugin": "gate" },
        { "id": "terms", "plugin": "count", "params": { "key": "\(key)" }, "trigger": "onDemand" }
      ] }
      """, registry: registry)
    let control = LaunchControl()
    let report = await LaunchEngine().run(plan, control: control)
    #expect(report.outcome == (ending == "fail" ? .failed : .routed))
    #expect(try await control.ensure("terms", as: Tally.self) == Tally(value: "\(key)#1"))
    #expect(control.report?.step("terms")?.state == .succeeded)
    #expect(control.report?.outcome == report.outcome)
  }

  /// A caller of `ensure` whose task is cancelled stops waiting (`CancellationError`), as
  /// Swift's own waits do; it waited for the step's end (for ever, for a step that never
  /// ends). The step's run goes on for the other callers, and runs once.
  @Test func aCancelledEnsureCallerStopsWaitingAndTheStepRunsOn()
    async throws
  {
    let (release, runs) = (ManualGate(), Locked(0))
    var registry = PluginRegistry.testKinds
    registry.register(kind: "held", isBlocking: true) { _ in
      runs.withLock { $0 += 1 }
      release.wait()
    }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "page", "plugin": "noop" },
        { "id": "search", "plugin": "held", "trigger": "onDemand" }
      ] }
      """, registry: registry)
    let control = LaunchControl()
    #expect(await LaunchEngine().run(plan, control: control).outcome == .succeeded)
    let leaving = Task { try await control.ensure("search", as: Void.self) }
    let staying = Task { try await control.ensure("search", as: Void.self) }
    while runs.withLock({ $0 }) == 0 { await Task.yield() }
    leaving.cancel()
    await #expect(throws: CancellationError.self) { try await leaving.value }
    // Cancelled before it asks: it never waits.
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await control.ensure("search", as: Void.self)
    }
    await #expect(throws: CancellationError.self) { try await early.value }
    release.open()
    try await staying.value
    #expect(control.report?.step("search")?.state == .succeeded)
    #expect(runs.withLock { $0 } == 1)
  }
}
