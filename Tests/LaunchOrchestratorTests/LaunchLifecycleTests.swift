import Foundation
import LaunchJSON
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// Pause, cancel, signals and on-demand steps through a ``LaunchControl``, on a manual clock.
@Suite("Launch lifecycle", .timeLimit(.minutes(10)))
struct LaunchLifecycleTests {
  @Test func pausedTimeCountsForNoTimeoutAndLeavesTheReportsTimes() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["work"] }, "steps": [
        { "id": "work", "plugin": "wait", "params": { "duration": "1s" }, "timeout": "3s" }
      ] }
      """)
    let control = LaunchControl()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await clock.settle()
    // The step's sleep and the timeout's timer.
    #expect(clock.sleeperDeadlines == [.seconds(1), .seconds(3)])
    await clock.advance(to: .milliseconds(400))
    control.pause()
    #expect(control.isPaused)
    // Far past both the step's end and its timeout, in real time.
    await clock.advance(to: .seconds(10))
    await recorder.waitFor("paused")
    #expect(clock.sleeperDeadlines.isEmpty)
    control.resume()
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(10_600), .milliseconds(12_600)])
    await clock.advance(to: .milliseconds(10_600))
    let report = await launch.value
    await recorder.drained()
    #expect(report.outcome == .succeeded)
    #expect(report.step("work")?.end == .seconds(1))
    #expect(report.time(ofMilestone: "interactive") == .some(.seconds(1)))
    #expect(report.duration == .seconds(1))
    #expect(report.wallDuration == .milliseconds(10_600))
    #expect(report.pauses == [.init(at: .milliseconds(400), duration: .milliseconds(9_600))])
    #expect(
      recorder.lines == [
        "start work", "paused", "resumed after 9.6s", "done work", "milestone interactive",
        "finish succeeded",
      ])
    // The trace marks the pause where it began, its real length in args.
    let events = try #require(report.chromeTrace["traceEvents"]?.elements)
    let pauses = events.filter { $0["cat"] == "pause" }
    #expect(pauses.count == 1)
    #expect(pauses.first?["ts"] == JSONValue(integer: 400_000))
    #expect(pauses.first?["args"]?["duration"] == JSONValue(.number(9.6)))
  }

  @Test func noStepStartsWhilePausedAndTheLaunchBeginsPausedWhenPausedBefore() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "b", "plugin": "wait", "params": { "duration": "1s" }, "dependsOn": ["a"] }
      ] }
      """)
    let control = LaunchControl()
    control.pause()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await recorder.waitFor("paused")
    await clock.advance(to: .seconds(5))
    // Nothing has started: a's start would come before any sleeper.
    #expect(recorder.lines == ["paused"])
    control.resume()
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(6)])
    await clock.advance(to: .seconds(6))
    let report = await launch.value
    await recorder.drained()
    #expect(
      recorder.lines == [
        "paused", "resumed after 5s", "start a", "done a", "start b", "done b",
        "finish succeeded",
      ])
    #expect(report.step("a")?.start == .zero)
    #expect(report.step("b")?.end == .seconds(1))
    #expect(report.pauses == [.init(at: .zero, duration: .seconds(5))])
  }

  @Test func aBackoffAndADelayWaitOnlyForActiveTime() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "flaky", "plugin": "count", "params": { "key": "backoff-pause", "failRuns": 1 },
          "retry": { "attempts": 2, "backoff": "2s" } },
        { "id": "later", "plugin": "noop", "delay": "3s" }
      ] }
      """)
    let control = LaunchControl()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await recorder.waitFor("retry flaky#2 in 2s after: run 1 fails")
    await clock.settle()
    // The timer, set for the backoff's end.
    #expect(clock.sleeperDeadlines == [.seconds(2)])
    await clock.advance(to: .seconds(1))
    control.pause()
    await clock.advance(to: .seconds(11))
    control.resume()
    await clock.settle()
    // Backoff due at 2s active = 12s real; the delay at 3s active = 13s real.
    #expect(clock.sleeperDeadlines == [.seconds(12)])
    await clock.advance(to: .seconds(12))
    await recorder.waitFor("done flaky")
    #expect(clock.sleeperDeadlines == [.seconds(13)])
    await clock.advance(to: .seconds(13))
    let report = await launch.value
    #expect(report.step("flaky")?.end == .seconds(2))
    #expect(report.step("later")?.start == .seconds(3))
    #expect(report.outcome == .succeeded)
  }

  @Test func cancellingThroughTheControlCancelsRunningStepsAndSkipsTheRest() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "wait", "params": { "duration": "5s" } },
        { "id": "b", "plugin": "noop", "dependsOn": ["a"] }
      ] }
      """)
    let control = LaunchControl()
    let launch = EventRecorder().start(plan, on: LaunchEngine(clock: clock), control: control)
    await clock.advance(to: .seconds(1))
    #expect(clock.sleeperDeadlines == [.seconds(5)])
    control.cancel()
    let report = await launch.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("a")?.state == .cancelled)
    #expect(report.step("b")?.state == .skipped)
    #expect(report.step("b")?.error == "the launch was cancelled")
  }

  @Test func aStepWaitingForASignalStartsOnlyOnceItComesAndRemembersOneSentEarly() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent", "signedIn"],
        "milestones": { "interactive": ["analytics"] }, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "analytics", "plugin": "noop", "dependsOn": ["store"], "waitFor": ["consent"] },
        { "id": "sync", "plugin": "noop", "waitFor": ["signedIn"] }
      ] }
      """)
    let control = LaunchControl()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(1)])
    // Sent before 'sync' could start: it starts at once.
    control.signal("signedIn")
    await recorder.waitFor("done sync")
    await clock.advance(to: .seconds(2))
    await recorder.waitFor("done store")
    #expect(!recorder.lines.contains("start analytics"))
    await clock.advance(to: .seconds(3))
    control.signal("consent")
    let report = await launch.value
    await recorder.drained()
    #expect(
      recorder.lines.firstIndex(of: "signal consent")! < recorder.lines.firstIndex(
        of: "start analytics")!)
    #expect(report.step("analytics")?.start == .seconds(3))
    #expect(report.time(ofMilestone: "interactive") == .some(.seconds(3)))
    #expect(
      report.signals == [
        .init(name: "consent", time: .seconds(3)), .init(name: "signedIn", time: .zero),
      ])
  }

  @Test func finishSkipsStepsWaitingForASignalThatNeverCame() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "analytics", "plugin": "noop", "dependsOn": ["store"], "waitFor": ["consent"] },
        { "id": "upload", "plugin": "noop", "dependsOn": ["analytics"] }
      ] }
      """)
    let control = LaunchControl()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await recorder.waitFor("done store")
    // The launch stays open for the signal.
    await clock.advance(to: .seconds(30))
    #expect(!recorder.lines.contains("finish succeeded"))
    control.finish()
    let report = await launch.value
    #expect(report.step("analytics")?.state == .skipped)
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.step("upload")?.error == "dependency 'analytics' was skipped")
    #expect(report.signals == [.init(name: "consent", time: nil)])
    // What the app chose (consent declined), as a `when` condition is: not a degraded launch.
    #expect(report.outcome == .succeeded)
  }

  @Test func anOnDemandStepRunsOnlyWhenEnsuredAndOnceForManyCallers() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "ondemand-store" } },
        { "id": "index", "plugin": "count", "params": { "key": "ondemand-index" },
          "dependsOn": ["store"], "trigger": "onDemand" },
        { "id": "search", "plugin": "count", "params": { "key": "ondemand-search" },
          "dependsOn": ["index"], "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    let report = await LaunchEngine().run(plan, control: control)
    #expect(report.outcome == .succeeded)
    #expect(report.step("search")?.state == .skipped)
    #expect(report.step("search")?.error == "on demand, and not ensured")
    #expect(stepRuns.withLock { $0["ondemand-index"] } == nil)
    // After the launch: three callers at once, one run of each step.
    async let first = control.ensure("search", as: Tally.self)
    async let second = control.ensure("search", as: Tally.self)
    async let third = control.ensure("search", as: Tally.self)
    let tokens = try await [first, second, third]
    #expect(tokens == Array(repeating: Tally(value: "ondemand-search#1"), count: 3))
    let again = try await control.ensure("search", as: Tally.self)
    #expect(again == tokens[0])
    #expect(stepRuns.withLock { $0["ondemand-index"] } == 1)
    #expect(stepRuns.withLock { $0["ondemand-store"] } == 1)
    let later = try #require(control.report)
    #expect(later.step("search")?.state == .succeeded)
    #expect(later.step("index")?.state == .succeeded)
  }

  @Test func anOnDemandStepThatFailsThrowsAndMayBeEnsuredAgain() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "index", "plugin": "count", "params": { "key": "ondemand-flaky", "failRuns": 1 },
          "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    _ = await LaunchEngine().run(plan, control: control)
    do {
      _ = try await control.ensure("index", as: Tally.self)
      Issue.record("the first run fails")
    } catch let failure as LaunchFailure {
      #expect(failure.kind == .stepFailed)
      #expect(failure.step == "index")
      #expect(failure.message == "'index' failed: run 1 fails")
    }
    let tally = try await control.ensure("index", as: Tally.self)
    #expect(tally == Tally(value: "ondemand-flaky#2"))
    await #expect(throws: LaunchFailure.self) { try await control.ensure("index", as: Int.self) }
    await #expect(throws: LaunchFailure.self) { try await control.ensure("nothing", as: Int.self) }
  }

  /// A step ensured again after it failed runs afresh, and an on-demand step that must come
  /// `after` it waits for that run's end, as for the first's: the first's end counts no more.
  @Test(arguments: [true, false])
  func aStepEnsuredAgainAfterItFailedIsWaitedForByTheStepsAfterIt(ensuresItFirst: Bool)
    async throws
  {
    let key = "after-rerun-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "index", "plugin": "count", "trigger": "onDemand",
          "params": { "key": "\(key)", "failRuns": 1, "duration": "50ms" } },
        { "id": "later", "plugin": "count", "trigger": "onDemand", "after": ["index"],
          "params": { "key": "\(key)-later" } }
      ] }
      """)
    let control = LaunchControl()
    _ = await LaunchEngine().run(plan, control: control)
    await #expect(throws: LaunchFailure.self) { try await control.ensure("index", as: Tally.self) }
    if ensuresItFirst {
      #expect(try await control.ensure("index", as: Tally.self) == Tally(value: "\(key)#2"))
    }
    // Before, with the step ensured first, this waited for ever; without, `later` ran beside
    // the second run of `index` it ensured.
    #expect(try await control.ensure("later", as: Tally.self) == Tally(value: "\(key)-later#1"))
    let report = try #require(control.report)
    #expect(report.step("index")?.state == .succeeded)
    let indexEnd = try #require(report.step("index")?.end)
    let laterStart = try #require(report.step("later")?.start)
    #expect(laterStart >= indexEnd)
    #expect(stepRuns.withLock { $0[key] } == 2)
  }

  /// A launch refused for a value the app did not provide never runs a step: an ensure asked
  /// for before it (a view's second `.task`), or after it, throws why instead of waiting.
  @MainActor @Test func anEnsureOfALaunchRefusedForAMissingValueThrowsWhy() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "needs.app", requirements: [.required(AppInfo.self)]) { _ in }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "user", "plugin": "needs.app" },
        { "id": "index", "plugin": "noop", "trigger": "onDemand" }
      ] }
      """, registry: registry)
    let control = LaunchControl()
    let early = Task { try await control.ensure("index", as: Void.self) }
    // The early caller is waiting when the launch is refused; or, had its task not begun
    // yet, it asks after the refusal: it throws the same either way.
    let report = await LaunchEngine().run(plan, control: control)
    #expect(report.outcome == .failed)
    let reason = try #require(report.error)
    let expected = LaunchFailure(
      kind: .missingEnvironment, step: "user", plugin: "needs.app", message: reason)
    await #expect(throws: expected) { try await early.value }
    await #expect(throws: expected) { try await control.ensure("index", as: Void.self) }

    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine())
    await #expect(throws: expected) { try await session.ensure("index", as: Void.self) }
  }

  /// Cancelled before the launch began, by its control or by its task, no step's code runs:
  /// every step is skipped, none is started only to be cancelled.
  @Test(arguments: [true, false])
  func aLaunchCancelledBeforeItBeginsStartsNoStep(byItsControl: Bool) async throws {
    let key = "cancelled-before-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "boot", "plugin": "count", "params": { "key": "\(key)" } },
        { "id": "page", "plugin": "count", "params": { "key": "\(key)" }, "dependsOn": ["boot"] }
      ] }
      """)
    let control = LaunchControl()
    let report: LaunchReport
    if byItsControl {
      control.cancel()
      report = await LaunchEngine().run(plan, control: control)
    } else {
      report = await Task {
        withUnsafeCurrentTask { $0?.cancel() }
        return await LaunchEngine().run(plan, control: control)
      }.value
    }
    #expect(report.outcome == .cancelled)
    #expect(stepRuns.withLock { $0[key] } == nil)
    for step in ["boot", "page"] {
      #expect(report.step(step)?.state == .skipped)
      #expect(report.step(step)?.error == "the launch was cancelled")
      #expect(report.step(step)?.attempts == 0)
    }
  }

  /// A retry cancelled before it began keeps what it reused: the steps that succeeded stay
  /// succeeded, so a later retry does not run them again.
  @MainActor @Test func aRetryCancelledBeforeItBeginsKeepsWhatItReused() async throws {
    let key = "cancelled-retry-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "\(key)-store" } },
        { "id": "feed", "plugin": "count", "params": { "key": "\(key)-feed", "failRuns": 1 },
          "dependsOn": ["store"] }
      ] }
      """)
    let session = LaunchSession()
    let first = await session.run(plan, on: LaunchEngine())
    #expect(first.outcome == .failed)
    let cancelled = await Task { @MainActor in
      withUnsafeCurrentTask { $0?.cancel() }
      return await session.retry()
    }.value
    #expect(cancelled.outcome == .cancelled)
    #expect(cancelled.step("store")?.state == .succeeded)
    #expect(cancelled.step("store")?.reused == true)
    #expect(cancelled.step("feed")?.state == .skipped)
    #expect(cancelled.step("feed")?.error == "the launch was cancelled")
    let retried = await session.retry()
    #expect(retried.outcome == .succeeded)
    #expect(stepRuns.withLock { $0["\(key)-store"] } == 1)
    #expect(stepRuns.withLock { $0["\(key)-feed"] } == 2)
  }

  @Test func anOnDemandStepThatFailsDuringTheLaunchIsItsCallersFailureNotTheLaunchs()
    async throws
  {
    // A key of its own: the step's runs are counted by key, across the tests' repetitions.
    let key = "ondemand-during-\(UUID().uuidString)"
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "page", "plugin": "noop", "waitFor": ["consent"] },
        { "id": "index", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "trigger": "onDemand", "onFailure": "abort" }
      ] }
      """)
    let control = LaunchControl()
    async let launched = LaunchEngine().run(plan, control: control)
    await #expect(throws: LaunchFailure.self) {
      try await control.ensure("index", as: Tally.self)
    }
    control.signal("consent")
    let report = await launched
    #expect(report.outcome == .succeeded)
    #expect(report.step("page")?.state == .succeeded)
    #expect(report.step("index")?.state == .failed)
  }

  @Test func noStepEnsuredAfterTheLaunchStartsWhilePaused() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "index", "plugin": "count", "params": { "key": "paused-ondemand" },
          "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    let report = await clock.start { await LaunchEngine(clock: clock).run(plan, control: control) }
      .value
    #expect(report.outcome == .succeeded)
    // The app went to the background after the launch, then asked for the step: as during
    // the launch, it waits for the app to come back.
    control.pause()
    control.request("index")
    await clock.settle()
    #expect(stepRuns.withLock { $0["paused-ondemand"] } == nil)
    control.resume()
    let tally = try await control.ensure("index", as: Tally.self)
    #expect(tally == Tally(value: "paused-ondemand#1"))
  }

  /// The report of the run so far lists an on-demand step ensured after the launch from its
  /// start, with no end while it runs; the launch's own event stream ended with `finished`
  /// and hears none of it.
  @Test func aStepEnsuredAfterTheLaunchIsInTheReportFromItsStart() async throws {
    let clock = ManualClock()
    let key = "report-running-\(UUID())"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "index", "plugin": "count", "params": { "key": "\(key)", "duration": "10s" },
          "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
    let report = await clock.start {
      await LaunchEngine(clock: clock).run(plan, control: control, events: continuation)
    }.value
    var kinds: [LaunchEvent.Kind] = []
    for await event in events { kinds.append(event.kind) }
    #expect(kinds.last == .finished(outcome: .succeeded))
    #expect(report.step("index")?.start == nil)
    await clock.advance(to: .seconds(2))
    control.request("index")
    await clock.settle()
    let running = try #require(control.report?.step("index"))
    #expect(running.start == .seconds(2))
    #expect(running.end == nil)
    #expect(running.error == nil)
    #expect(running.attempts == 1)
    await clock.advance(to: .seconds(12))
    _ = try await control.ensure("index", as: Tally.self)
    let ended = try #require(control.report?.step("index"))
    #expect(ended.state == .succeeded)
    #expect(ended.start == .seconds(2))
    #expect(ended.end == .seconds(12))
  }

  @Test func anOnDemandStepEnsuredDuringTheLaunchIsPartOfIt() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "2s" } },
        { "id": "index", "plugin": "token.make", "params": { "value": "idx" },
          "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock), control: control)
    await clock.advance(to: .seconds(1))
    let token = try await control.ensure("index", as: Token.self)
    #expect(token == Token(value: "idx"))
    await clock.advance(to: .seconds(2))
    let report = await launch.value
    await recorder.drained()
    #expect(report.step("index")?.state == .succeeded)
    #expect(report.step("index")?.start == .seconds(1))
    #expect(recorder.lines.contains("start index"))
  }

  @Test func validationRefusesUndeclaredSignalsAndLaunchStepsThatWaitForOnDemandOnes() {
    let problems = diagnostics(
      of: """
        { "version": 1, "signals": ["consent"], "milestones": { "ready": ["search"] },
          "steps": [
          { "id": "search", "plugin": "noop", "trigger": "onDemand" },
          { "id": "feed", "plugin": "noop", "dependsOn": ["search"], "waitFor": ["consnt"] },
          { "id": "x", "plugin": "noop", "trigger": "sometimes" }
        ] }
        """)
    #expect(
      problems.contains {
        $0.contains("steps[1].waitFor[0]")
          && $0.contains("'waitFor' names an undeclared signal 'consnt'; did you mean 'consent'?")
      })
    #expect(
      problems.contains {
        $0.contains("steps[1].dependsOn[0]") && $0.contains("'search' runs only on demand")
      })
    #expect(
      problems.contains {
        $0.contains("milestones.ready[0]")
          && $0.contains("milestone 'ready' lists 'search', which runs only on demand")
      })
    #expect(
      problems.contains {
        $0.contains("steps[2].trigger") && $0.contains("unknown trigger 'sometimes'")
      })
  }
}
