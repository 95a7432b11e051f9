import Foundation
import LaunchTesting
import Observation
import Testing

@testable import LaunchOrchestrator

/// The splash rule, step outputs and progress as an app's first screens see them, timed on a
/// manual clock.
@MainActor
@Suite("Launch session: splash, outputs, progress", .timeLimit(.minutes(10)))
struct LaunchSessionSplashTests {
  private static func plan(splash: String, pageTakes page: String, extraSteps: String = "")
    throws -> LaunchPlan
  {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "route.late") { context in
      try await context.sleep(until: .milliseconds(50))
      throw LaunchRoute.maintenance
    }
    return try loadPlan(
      """
      { "version": 1, "splash": \(splash),
        "milestones": { "interactive": ["page"] },
        "steps": [
          { "id": "token", "plugin": "token.make", "params": { "value": "first page" } },
          { "id": "page", "plugin": "wait", "dependsOn": ["token"],
            "params": { "duration": "\(page)" } }\(extraSteps)
        ] }
      """, registry: registry)
  }

  /// Waits for the session to catch up with the clock, failing after about five seconds.
  private func until(_ condition: () -> Bool, _ comment: Comment) async {
    for _ in 0..<5_000 {
      if condition() { return }
      await Task.yield()
      try? await Task.sleep(for: .milliseconds(1))
    }
    Issue.record(comment)
  }

  @Test func holdsTheSplashForItsMinimumWhenContentIsEarly() async throws {
    let plan = try Self.plan(
      splash: #"{ "minimum": "800ms", "skeletonAfter": "150ms" }"#, pageTakes: "100ms")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(100), .milliseconds(800)])
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(100))
    #expect(session.isReached("interactive"))
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(800))
    let report = await run.value
    #expect(session.screen == .content)
    #expect(report.splash == SplashTiming(contentAt: .milliseconds(800), skeletonFrom: nil))
  }

  @Test func showsTheSkeletonOnlyPastTheThreshold() async throws {
    let plan = try Self.plan(
      splash: #"{ "minimum": "200ms", "skeletonAfter": "150ms" }"#, pageTakes: "1s")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(200), .seconds(1)])
    await clock.advance(to: .milliseconds(200))
    let pastTheDeadline = Duration.milliseconds(350) + .nanoseconds(1)
    #expect(clock.sleeperDeadlines == [pastTheDeadline, .seconds(1)])
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(350))
    #expect(session.screen == .splash)
    await clock.advance(to: pastTheDeadline)
    #expect(session.screen == .skeleton)
    await clock.advance(to: .seconds(1))
    let report = await run.value
    #expect(session.screen == .content)
    #expect(
      report.splash
        == SplashTiming(contentAt: .seconds(1), skeletonFrom: .milliseconds(350)))
  }

  @Test func contentReadyExactlyAtTheSkeletonDeadlineShowsNoSkeleton() async throws {
    let plan = try Self.plan(
      splash: #"{ "minimum": "200ms", "skeletonAfter": "150ms" }"#, pageTakes: "350ms")
    let clock = ManualClock()
    let session = LaunchSession()
    let screens = ScreenRecorder(session: session)
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .milliseconds(200))
    // Both the page and the splash's timer wake at the deadline: the content wins.
    #expect(
      clock.sleeperDeadlines == [.milliseconds(350), .milliseconds(350) + .nanoseconds(1)])
    await clock.advance(to: .milliseconds(350))
    let report = await run.value
    await until({ screens.screens.last == .content }, "content never showed")
    #expect(screens.screens == [.splash, .content])
    #expect(report.splash == SplashTiming(contentAt: .milliseconds(350), skeletonFrom: nil))
  }

  @Test func dismissesOnTheMilestoneWithNoMinimumAndNoFlicker() async throws {
    let plan = try Self.plan(
      splash: #"{ "dismissOn": "interactive", "minimum": 0, "skeletonAfter": "150ms" }"#,
      pageTakes: "100ms")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(
      clock.sleeperDeadlines == [.milliseconds(100), .milliseconds(150) + .nanoseconds(1)])
    await clock.advance(to: .milliseconds(100))
    let report = await run.value
    #expect(session.screen == .content)
    #expect(report.splash == SplashTiming(contentAt: .milliseconds(100), skeletonFrom: nil))
  }

  @Test func progressReadsOneAtDismissalWhileDeferredWorkRuns() async throws {
    let plan = try Self.plan(
      splash: #"{ "skeletonAfter": "1s" }"#, pageTakes: "100ms",
      extraSteps: """
        ,
          { "id": "cleanup", "plugin": "wait", "deferUntil": "interactive",
            "priority": "background", "params": { "duration": "5s" } }
        """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    // The token step's end is counted.
    #expect(session.progress == 0.5)
    await clock.advance(to: .milliseconds(100))
    #expect(session.screen == .content)
    #expect(session.progress == 1)
    // The deferred step started.
    #expect(session.runningSteps == ["cleanup"])
    #expect(session.phase == .running)
    await clock.advance(to: .seconds(6))
    _ = await run.value
    #expect(session.phase == .finished(.succeeded))
  }

  /// Without a `splash` object, the content shows the moment `interactive` is reached (the
  /// milestone `dismissOn` defaults to), with no minimum and no skeleton: neither deferred
  /// background work nor a step waiting for the app's consent holds it back.
  @Test func withoutASplashTheContentShowsAtInteractive() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"],
        "milestones": { "firstFrame": ["store"], "interactive": ["store", "page"] },
        "steps": [
          { "id": "store", "plugin": "wait", "params": { "duration": "100ms" } },
          { "id": "page", "plugin": "wait", "dependsOn": ["store"],
            "params": { "duration": "100ms" } },
          { "id": "images", "plugin": "wait", "dependsOn": ["store"],
            "deferUntil": "interactive", "priority": "background",
            "params": { "duration": "5s" } },
          { "id": "analytics", "plugin": "noop", "waitFor": ["consent"] }
        ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    // No splash timer: the store's sleep alone.
    #expect(clock.sleeperDeadlines == [.milliseconds(100)])
    await clock.advance(to: .milliseconds(199))
    #expect(session.screen == .splash)
    #expect(session.progress == 0.5)
    await clock.advance(to: .milliseconds(200))
    #expect(session.screen == .content)
    #expect(session.progress == 1)
    #expect(session.runningSteps == ["images"])
    await clock.advance(to: .seconds(6))
    #expect(session.phase == .running, "'analytics' waits for consent")
    #expect(session.screen == .content)
    session.finish()
    let report = await run.value
    #expect(report.outcome == .succeeded)
    #expect(session.screen == .content)
    // The report's `splash` is for a manifest that has one.
    #expect(report.splash == nil)
  }

  /// Without a `splash` object or an `interactive` milestone, nothing says when the content
  /// is ready but the launch's end: the splash shows until then.
  @Test func withoutASplashOrAnInteractiveMilestoneTheContentShowsAtTheEnd() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "firstFrame": ["store"] }, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "100ms" } },
        { "id": "images", "plugin": "wait", "deferUntil": "firstFrame",
          "priority": "background", "params": { "duration": "1s" } }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .milliseconds(100))
    #expect(session.isReached("firstFrame"))
    #expect(session.screen == .splash)
    #expect(session.progress == 0.5)
    await clock.advance(to: .milliseconds(1_100))
    _ = await run.value
    #expect(session.screen == .content)
    #expect(session.progress == 1)
  }

  @Test func leavesTheSplashForARouteAfterTheMinimum() async throws {
    let plan = try Self.plan(
      splash: #"{ "minimum": "300ms" }"#, pageTakes: "1s",
      extraSteps: """
        ,
          { "id": "gate", "plugin": "route.late" }
        """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines.count == 3)
    await clock.advance(to: .milliseconds(50))
    #expect(session.route == .maintenance)
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(300))
    let report = await run.value
    #expect(session.screen == .routed(.maintenance))
    #expect(report.splash == SplashTiming(contentAt: nil, skeletonFrom: nil))
  }

  @Test func handsEachOutputToTheAppTheMomentItsStepSucceeds() async throws {
    let plan = try Self.plan(splash: "{}", pageTakes: "1s")
    let clock = ManualClock()
    let session = LaunchSession()
    let changed = Locked(false)
    withObservationTracking {
      _ = session.output(of: "token", as: Token.self)
    } onChange: {
      changed.withLock { $0 = true }
    }
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(session.output(of: "token", as: Token.self) != nil)
    #expect(changed.withLock { $0 })
    #expect(session.output(of: "token", as: Token.self) == Token(value: "first page"))
    #expect(session.output(of: "token", as: Int.self) == nil)
    #expect(session.output(of: "page", as: Token.self) == nil)
    // The page step started.
    #expect(session.runningSteps == ["page"])
    #expect(session.output(of: "page", as: Token.self) == nil)
    await clock.advance(to: .seconds(1))
    let report = await run.value
    #expect(report.output(of: "token", as: Token.self) == Token(value: "first page"))
  }

  @Test func aStepServedByItsFallbackHandsOverTheFallbacksOutput() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "token.broken") { _ -> Token in throw StepFailure("offline") }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "token", "plugin": "token.broken",
          "fallback": { "plugin": "token.make", "params": { "value": "cached" } } }
      ] }
      """, registry: registry)
    let session = LaunchSession()
    let report = await session.run(plan, on: LaunchEngine())
    #expect(report.step("token")?.usedFallback == true)
    #expect(session.output(of: "token", as: Token.self) == Token(value: "cached"))
    #expect(report.output(of: "token", as: Token.self) == Token(value: "cached"))
  }

  @Test func showsTheAbortingStepsFailureAtOnceNotTheFirstFailure() async throws {
    let hold = ManualGate()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "broken") { context in
      try await context.sleep(until: .milliseconds(10))
      throw StepFailure("no disk")
    }
    registry.register(kind: "optional.broken") { _ in throw StepFailure("no network") }
    // Ignores its cancellation until the test lets it go, as a plugin stuck in I/O would.
    registry.register(kind: "stuck", isBlocking: true) { _ in hold.wait() }
    let plan = try loadPlan(
      """
      { "version": 1, "splash": { "minimum": 0, "skeletonAfter": "1s" },
        "milestones": { "interactive": ["critical"] },
        "steps": [
          { "id": "optional", "plugin": "optional.broken", "onFailure": "continue" },
          { "id": "critical", "plugin": "broken" },
          { "id": "stuck", "plugin": "stuck" }
        ] }
      """, registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(10), .seconds(1) + .nanoseconds(1)])
    await clock.advance(to: .milliseconds(10))
    #expect(session.screen.isSettled)
    #expect(session.screen.failureMessage == "'critical' failed: no disk")
    #expect(session.failure?.message == "'critical' failed: no disk")
    // 'stuck' holds the launch until it stops or its grace period ends.
    #expect(session.phase == .running)
    hold.open()
    let report = await run.value
    #expect(report.outcome == .failed)
    #expect(session.screen.failureMessage == "'critical' failed: no disk")
  }

  @Test func aFailureThatSkipsTheContentLeavesTheSplashForTheFailureAfterTheMinimum()
    async throws
  {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "broken") { context in
      try await context.sleep(until: .milliseconds(300))
      throw StepFailure("no disk")
    }
    // The content's only step is skipped by the failure that ends the launch: that reaches
    // no milestone, so nothing says the content showed.
    let plan = try loadPlan(
      """
      { "version": 1, "splash": { "minimum": "500ms", "skeletonAfter": "50ms" },
        "milestones": { "interactive": ["page"] },
        "steps": [
          { "id": "store", "plugin": "broken" },
          { "id": "page", "plugin": "noop", "dependsOn": ["store"] }
        ] }
      """, registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines.count == 2)
    await clock.advance(to: .milliseconds(300))
    #expect(session.phase == .finished(.failed))
    #expect(session.screen == .splash)
    #expect(!session.isReached("interactive"))
    await clock.advance(to: .milliseconds(500))
    let report = await run.value
    #expect(session.screen.failureMessage == "'store' failed: no disk")
    #expect(report.milestones.first?.time == nil)
    #expect(report.splash == SplashTiming(contentAt: nil, skeletonFrom: nil))
  }

  @Test(arguments: [true, false])
  func aRouteOrFailureBeforeTheMinimumReplacesContentThatWasReady(routes: Bool) async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "ends.launch") { context in
      try await context.sleep(until: .milliseconds(300))
      if routes { throw LaunchRoute.maintenance }
      throw StepFailure("no disk")
    }
    // The content is ready at 100ms, but the splash holds until 800ms: by then the launch
    // has ended on the route or the failure at 300ms, which the app shows instead.
    let plan = try loadPlan(
      """
      { "version": 1, "splash": { "minimum": "800ms" },
        "milestones": { "interactive": ["page"] },
        "steps": [
          { "id": "page", "plugin": "wait", "params": { "duration": "100ms" } },
          { "id": "gate", "plugin": "ends.launch" }
        ] }
      """, registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(100), .milliseconds(300), .milliseconds(800)])
    await clock.advance(to: .milliseconds(100))
    #expect(session.isReached("interactive"))
    await clock.advance(to: .milliseconds(300))
    #expect(session.phase != .running)
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(800))
    let report = await run.value
    #expect(
      routes
        ? session.screen == .routed(.maintenance)
        : session.screen.failureMessage == "'gate' failed: no disk")
    #expect(report.splash == SplashTiming(contentAt: nil, skeletonFrom: nil))
  }

  @Test func progressCountsWhatTheDismissMilestoneWaitsForTransitively() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "splash": {},
        "milestones": { "early": ["gate"], "interactive": ["page"], "late": ["cleanup"] },
        "steps": [
          { "id": "gate", "plugin": "noop" },
          { "id": "store", "plugin": "noop" },
          { "id": "flags", "plugin": "noop" },
          { "id": "page", "plugin": "noop", "dependsOn": ["store"], "after": ["flags"],
            "deferUntil": "early" },
          { "id": "analytics", "plugin": "noop" },
          { "id": "cleanup", "plugin": "noop", "deferUntil": "interactive" }
        ] }
      """)
    let session = LaunchSession()
    session.start(plan: plan)
    var fractions: [Double] = []
    for step in ["analytics", "gate", "store", "flags", "page", "cleanup"] {
      session.apply(LaunchEvent(time: .zero, kind: .succeeded(step: step, usedFallback: false)))
      fractions.append(session.progress)
    }
    // gate (through the deferral), store (dependsOn), flags (after) and page itself.
    #expect(fractions == [0, 0.25, 0.5, 0.75, 1, 1])
  }

  @Test func anAppApplyingEventsItselfSeesTheContentOnTheMilestone() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "splash": { "minimum": "800ms", "skeletonAfter": "150ms" },
        "milestones": { "interactive": ["page"] },
        "steps": [ { "id": "page", "plugin": "noop" } ] }
      """)
    let session = LaunchSession()
    session.start(plan: plan)
    session.apply(LaunchEvent(time: .zero, kind: .started(step: "page", attempt: 1)))
    #expect(session.screen == .splash)
    session.apply(
      LaunchEvent(time: .milliseconds(20), kind: .succeeded(step: "page", usedFallback: false)))
    session.apply(LaunchEvent(time: .milliseconds(20), kind: .milestone(name: "interactive")))
    #expect(session.screen == .content)
    #expect(session.progress == 1)
  }

  @Test func aRefusedLaunchShowsWhatTheAppDidNotProvide() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "needs.app", requirements: [.required(AppInfo.self)]) { _ in }
    let plan = try loadPlan(
      """
      { "version": 1, "splash": {}, "milestones": { "interactive": ["v"] },
        "steps": [ { "id": "v", "plugin": "needs.app" } ] }
      """, registry: registry)
    let session = LaunchSession()
    let report = await session.run(plan, on: LaunchEngine())
    let reason = try #require(report.error)
    #expect(reason.contains("step 'v' (needs.app) requires AppInfo"))
    #expect(session.failure?.message == reason)
    #expect(session.failure?.kind == .missingEnvironment)
    // The step that needs the value, as for any step's failure: an app branches on it.
    #expect(session.failure?.step == "v")
    #expect(session.failure?.plugin == "needs.app")
    #expect(session.screen.failureMessage == reason)
  }

  @Test func aRouteFromTheDismissStepNeverShowsTheContent() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "gate.closed") { _ in throw LaunchRoute.maintenance }
    let plan = try loadPlan(
      """
      { "version": 1, "splash": {}, "milestones": { "interactive": ["gate"] },
        "steps": [ { "id": "gate", "plugin": "gate.closed" } ] }
      """, registry: registry)
    let session = LaunchSession()
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(session.screen == .routed(.maintenance))
    #expect(!session.isReached("interactive"))
    #expect(report.splash == SplashTiming(contentAt: nil, skeletonFrom: nil))
  }

  @Test func rejectsAnAppDefaultThatIsNoVersion() {
    #expect(
      diagnostics(
        of: #"{ "version": 1, "app": { "version": "banana", "build": "" }, "steps": [] }"#)
        == [
          "1:37: error: app.version: 'banana' is not a version; write it like \"1.10.0\".",
          "1:56: error: app.build: 'build' cannot be empty; leave it out or write it like \"41\".",
        ])
  }

  @Test func aDismissOnThatIsNoStringIsOneErrorNotAnUnknownDefault() {
    #expect(
      diagnostics(of: #"{ "version": 1, "splash": { "dismissOn": 3 }, "steps": [] }"#)
        == ["1:42: error: splash.dismissOn: expected a string, found a number."])
  }

  @Test func rejectsASplashNamingAnUnknownMilestoneOrABadDuration() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "milestones": { "interactive": [] },
            "splash": { "dismissOn": "interactiv", "minimum": "-1s", "skeleton": 1 },
            "steps": [] }
          """)
        == [
          "1:48: warning: milestones.interactive: milestone 'interactive' lists no steps, so it is reached as soon as the launch starts.",
          "2:28: error: splash.dismissOn: unknown milestone 'interactiv'. Did you mean 'interactive'?",
          "2:53: error: splash.minimum: '-1s' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
          "2:60: error: splash.skeleton: unknown key 'skeleton'. Allowed keys: dismissOn, minimum, skeletonAfter.",
        ])
  }
}

/// Every screen a session shows, in order, as an app's view would see them.
@MainActor
private final class ScreenRecorder {
  private let session: LaunchSession
  private(set) var screens: [LaunchScreen] = []

  init(session: LaunchSession) {
    self.session = session
    record()
  }

  private func record() {
    withObservationTracking {
      let screen = session.screen
      if screens.last != screen { screens.append(screen) }
    } onChange: {
      // Called before the change lands: read the screen once the session has moved on.
      Task { @MainActor in self.record() }
    }
  }
}
