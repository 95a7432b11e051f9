import Foundation
import LaunchJSON
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

@Suite("Launch engine", .timeLimit(.minutes(10)))
struct LaunchEngineTests {
  @Test func deliversEventsInOrderAndReportsTimesFromTheClock() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["b"] }, "steps": [
        { "id": "a", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "b", "plugin": "wait", "params": { "duration": "2s" }, "dependsOn": ["a"] }
      ] }
      """)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    await clock.advance(to: .seconds(1))
    // 'a' is done and 'b' asleep.
    #expect(clock.sleeperDeadlines == [.seconds(3)])
    await clock.advance(to: .seconds(3))
    let report = await launch.value
    await recorder.drained()
    #expect(
      recorder.lines == [
        "start a", "done a", "start b", "done b", "milestone interactive", "finish succeeded",
      ])
    #expect(
      recorder.all.map(\.time) == [
        .zero, .seconds(1), .seconds(1), .seconds(3), .seconds(3), .seconds(3),
      ])
    #expect(report.outcome == .succeeded)
    #expect(report.duration == .seconds(3))
    #expect(report.step("b")?.start == .seconds(1))
    #expect(report.step("b")?.end == .seconds(3))
    #expect(report.milestones == [.init(name: "interactive", time: .seconds(3))])
    #expect(report.criticalPath == ["a", "b"])
  }

  @Test func deliversTheSameEventsToAnAsyncStream() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "fail") { _ in throw StepFailure("boom") }
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "ready": ["b"] }, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "b", "plugin": "noop", "dependsOn": ["a"] },
        { "id": "c", "plugin": "fail", "dependsOn": ["b"], "onFailure": "continue" }
      ] }
      """, registry: registry)
    let (fast, fastContinuation) = LaunchEvents.makeStream()
    async let fastReport = LaunchEngine().run(plan, events: fastContinuation)
    var fastLines: [String] = []
    for await event in fast { fastLines.append(SchedulerHarness.describe(event.kind)) }
    let (stream, streamContinuation) = AsyncStream.makeStream(of: LaunchEvent.self)
    async let streamReport = LaunchEngine().run(plan, events: streamContinuation)
    var streamLines: [String] = []
    for await event in stream { streamLines.append(SchedulerHarness.describe(event.kind)) }
    #expect(
      fastLines == [
        "start a", "done a", "start b", "done b", "milestone ready", "start c", "fail c: boom",
        "finish degraded",
      ])
    #expect(streamLines == fastLines)
    #expect(await fastReport.outcome == .degraded)
    #expect(await streamReport.outcome == .degraded)
  }

  @Test func timesOutAPluginThatIgnoresCancellationAndMovesOn() async throws {
    let release = ManualGate()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "stubborn") { _ in
      // Holds its thread and never checks cancellation.
      release.wait()
    }
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "hang", "plugin": "stubborn", "timeout": "5s", "onFailure": "continue" },
        { "id": "next", "plugin": "noop", "after": ["hang"] }
      ] }
      """, registry: registry)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(5)])
    await clock.advance(to: .seconds(5))
    await recorder.waitFor("done next")
    // The launch is over only when the stubborn attempt has stopped or its grace period
    // (1s) has passed; then it is named as abandoned.
    #expect(clock.sleeperDeadlines == [.seconds(6)])
    await clock.advance(to: .seconds(6))
    let report = await launch.value
    await recorder.drained()
    release.open()
    #expect(
      recorder.lines == [
        "start hang", "timeout hang 5s", "start next", "done next", "finish degraded",
      ])
    #expect(report.step("hang")?.state == .timedOut)
    #expect(report.step("hang")?.end == .seconds(5))
    #expect(report.step("hang")?.error == "timed out after 5s")
    #expect(
      report.step("hang")?.notes == [
        "attempt 1 did not stop within 1s of its timeout and was abandoned"
      ])
    #expect(report.duration == .seconds(6))
    #expect(report.outcome == .degraded)
  }

  @Test func aTimedOutAttemptKeepsItsSlotUntilItStopsSoTheLimitHolds() async throws {
    let release = ManualGate()
    let running = Locked((now: 0, peak: 0))
    var registry = PluginRegistry.testKinds
    for kind in ["stubborn", "quick"] {
      registry.register(kind: kind, isBlocking: true) { context in
        running.withLock {
          $0.now += 1
          $0.peak = max($0.peak, $0.now)
        }
        // The first stubborn attempt ignores its cancellation until the test lets it go.
        if kind == "stubborn", context.attempt == 1 { release.wait() }
        running.withLock { $0.now -= 1 }
      }
    }
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "slow", "plugin": "stubborn", "timeout": "1s", "retry": { "attempts": 2 } },
        { "id": "other", "plugin": "quick" }
      ] }
      """, registry: registry)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    await clock.advance(to: .seconds(1))
    await recorder.waitFor("retry slow#2 in 0s after: timed out after 1s")
    // Still held by the first attempt: neither the retry nor the other step may start.
    #expect(recorder.lines == ["start slow", "retry slow#2 in 0s after: timed out after 1s"])
    release.open()
    let report = await launch.value
    await recorder.drained()
    #expect(report.outcome == .succeeded)
    #expect(running.withLock { $0.peak } == 1)
    #expect(
      recorder.lines == [
        "start slow", "retry slow#2 in 0s after: timed out after 1s", "start slow#2",
        "done slow", "start other", "done other", "finish succeeded",
      ])
  }

  @Test func blockingStepsNeitherStarveOtherStepsNorTheirOwnTimeouts() async throws {
    let release = ManualGate()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "blocker", isBlocking: true) { _ in release.wait() }
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "defaults": { "onFailure": "continue" }, "steps": [
        { "id": "b1", "plugin": "blocker", "timeout": "1s" },
        { "id": "b2", "plugin": "blocker", "timeout": "1s" },
        { "id": "b3", "plugin": "blocker", "timeout": "1s" },
        { "id": "b4", "plugin": "blocker", "timeout": "1s" },
        { "id": "async", "plugin": "wait", "params": { "duration": "100ms" } }
      ] }
      """, registry: registry)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    // The timer (1s) and the async step's sleep (100ms) must both be waiting while four
    // threads are blocked; on two cooperative threads that only works if blocking steps run
    // elsewhere.
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(100), .seconds(1)])
    await clock.advance(to: .milliseconds(100))
    await recorder.waitFor("done async")
    await clock.advance(to: .seconds(1))
    await recorder.waitFor("timeout b4 1s")
    await clock.advance(to: .seconds(2))
    let report = await launch.value
    await recorder.drained()
    release.open(4)
    #expect(report.step("async")?.state == .succeeded)
    #expect(report.step("async")?.end == .milliseconds(100))
    for id in ["b1", "b2", "b3", "b4"] {
      #expect(report.step(id)?.state == .timedOut)
      #expect(report.step(id)?.end == .seconds(1))
    }
  }

  @Test func handsTypedOutputsToDependents() async throws {
    let seen = Locked<[String]>([])
    var registry = PluginRegistry.testKinds
    registry.register(kind: "token.read", inputs: [.required(Token.self)]) { context in
      let tokens = context.inputs(Token.self).map(\.value)
      seen.withLock { $0 = tokens }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "make", "plugin": "token.make", "params": { "value": "abc" } },
        { "id": "use", "plugin": "token.use", "dependsOn": ["make"] },
        { "id": "read", "plugin": "token.read", "dependsOn": ["use"] }
      ] }
      """, registry: registry)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .succeeded)
    #expect(seen.withLock { $0 } == ["abc+used", "abc"])
  }

  @Test func anInputIsTheNearestDependencysOutputOfItsType() async throws {
    let seen = Locked<[String: String]>([:])
    var registry = PluginRegistry.testKinds
    registry.register(kind: "count") { _ in 7 }
    registry.register(kind: "token.nearest") { context in
      let token = try context.input(Token.self).value
      seen.withLock { $0[context.stepID] = token }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "root", "plugin": "token.make", "params": { "value": "root" } },
        { "id": "count", "plugin": "count", "dependsOn": ["root"] },
        { "id": "near", "plugin": "token.make", "params": { "value": "near" } },
        { "id": "both", "plugin": "token.nearest", "dependsOn": ["count", "near"] },
        { "id": "through", "plugin": "token.nearest", "dependsOn": ["count"] },
        { "id": "lone", "plugin": "count" },
        { "id": "none", "plugin": "token.nearest", "dependsOn": ["lone"], "onFailure": "continue" }
      ] }
      """, registry: registry)
    let report = await LaunchEngine().run(plan)
    // Direct dependencies first, in manifest order, skipping outputs of another type; then
    // theirs.
    #expect(seen.withLock { $0["both"] } == "near")
    #expect(seen.withLock { $0["through"] } == "root")
    #expect(report.step("none")?.state == .failed)
    #expect(
      report.step("none")?.error
        == "step 'none' needs a Token from a dependency, and none produced one")
  }

  @Test func cancellingTheRunCancelsRunningStepsAndSkipsTheRest() async throws {
    let clock = ManualClock()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "long", "plugin": "wait", "params": { "duration": "10s" } },
        { "id": "after", "plugin": "noop", "dependsOn": ["long"] }
      ] }
      """)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(10)])
    launch.cancel()
    let report = await launch.value
    await recorder.drained()
    #expect(report.outcome == .cancelled)
    #expect(report.step("long")?.state == .cancelled)
    #expect(report.step("after")?.state == .skipped)
    #expect(report.step("after")?.error == "the launch was cancelled")
    #expect(recorder.lines.last == "finish cancelled")
  }

  @Test func leavesBehindACancelledStepThatWillNotStopAfterTheGracePeriod() async throws {
    let release = ManualGate()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "stubborn", isBlocking: true) { _ in release.wait() }
    let clock = ManualClock()
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "hang", "plugin": "stubborn" } ] }"#, registry: registry)
    let engine = LaunchEngine(
      clock: clock, options: LaunchOptions(cancellationGracePeriod: .seconds(2)))
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: engine)
    await recorder.waitFor("start hang")
    launch.cancel()
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(2)])
    await clock.advance(to: .seconds(2))
    let report = await launch.value
    await recorder.drained()
    release.open()
    #expect(report.step("hang")?.state == .cancelled)
    #expect(report.step("hang")?.end == .seconds(2))
  }

  @Test func retriesWithBackoffOnTheClock() async throws {
    let attempts = Locked(0)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "flaky") { context in
      attempts.withLock { $0 += 1 }
      if context.attempt < 3 { throw StepFailure("flake \(context.attempt)") }
    }
    let clock = ManualClock()
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "f", "plugin": "flaky", "retry": { "attempts": 3, "backoff": "1s" } } ] }"#,
      registry: registry)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: clock))
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(1)])
    await clock.advance(to: .seconds(1))
    await recorder.waitFor("retry f#3 in 2s after: flake 2")
    #expect(clock.sleeperDeadlines == [.seconds(3)])
    await clock.advance(to: .seconds(3))
    let report = await launch.value
    await recorder.drained()
    #expect(report.step("f")?.attempts == 3)
    #expect(report.step("f")?.state == .succeeded)
    #expect(attempts.withLock { $0 } == 3)
  }

  @Test func aRouteEndsTheLaunch() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "gate.closed") { _ in throw LaunchRoute.maintenance }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "gate", "plugin": "gate.closed", "priority": "critical" },
        { "id": "home", "plugin": "noop", "dependsOn": ["gate"] }
      ] }
      """, registry: registry)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .routed)
    #expect(report.route == .maintenance)
    #expect(report.step("home")?.state == .skipped)
  }

  @Test func reportsProgressAndLogsAsEvents() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "migrate") { context in
      context.reportProgress(0.45, "Upgrading library...")
      context.log("migrated to v3")
    }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "m", "plugin": "migrate" } ] }"#, registry: registry)
    let recorder = EventRecorder()
    let report = await recorder.start(plan, on: LaunchEngine()).value
    await recorder.drained()
    #expect(report.step("m")?.notes == ["migrated to v3"])
    #expect(
      recorder.lines == [
        "start m", "progress m 0.45 Upgrading library...", "log m: migrated to v3", "done m",
        "finish succeeded",
      ])
  }

  @Test func runsMainIsolatedStepsOnTheMainQueue() async throws {
    // The main actor runs on the main dispatch queue; on Linux a worker thread may drain it.
    let mainQueueKey = DispatchSpecificKey<String>()
    DispatchQueue.main.setSpecific(key: mainQueueKey, value: "main")
    let onMain = Locked<Bool?>(nil)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "ui") { _ in
      let onMainQueue = DispatchQueue.getSpecific(key: mainQueueKey) == "main"
      onMain.withLock { $0 = onMainQueue }
    }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "ui", "isolation": "main" } ] }"#,
      registry: registry)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .succeeded)
    #expect(onMain.withLock { $0 } == true)
  }

  /// A plugin that must run on the main actor, as UIKit code does.
  private struct MainActorPlugin: StepPlugin {
    static let kind = "ui.main"
    static let isolation = StepIsolation.main
    init(parameters: NoParameters) {}
    func run(_ context: StepContext) async throws -> Int {
      setUpInterface()
    }
    /// Synchronous main-actor code, as UIKit set-up is: traps unless on the main actor.
    private func setUpInterface() -> Int {
      MainActor.assumeIsolated { 42 }
    }
  }

  @Test func aPluginDeclaringTheMainActorRunsThereWithTheManifestSilent() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(MainActorPlugin.self)
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "ui.main" } ] }"#, registry: registry)
    #expect(plan.steps[0].isolation == .main)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .succeeded)
    #expect(report.output(of: "ui", as: Int.self) == 42)
    #expect(registry.descriptor(for: "ui.main")?.isolation == .main)
  }

  @Test func aManifestGivingAMainActorPluginAnotherIsolationDoesNotLoad() throws {
    var registry = PluginRegistry.testKinds
    registry.register(MainActorPlugin.self)
    let error = #expect(throws: ManifestError.self) {
      try loadPlan(
        #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "ui.main", "isolation": "default" } ] }"#,
        registry: registry)
    }
    #expect(
      error?.diagnostics.map(\.message) == [
        "'ui.main' runs on the main actor, as its plugin declares; remove \"isolation\" or set it to \"main\"."
      ])
    #expect(error?.diagnostics.first?.path.description == "steps[0].isolation")
  }

  @Test func aStepWhoseFallbackDeclaresTheMainActorRunsThere() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(MainActorPlugin.self)
    registry.register(kind: "fails") { _ -> Int in throw StepFailure("no") }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "fails", "fallback": { "plugin": "ui.main" } } ] }"#,
      registry: registry)
    #expect(plan.steps[0].isolation == .main)
    let report = await LaunchEngine().run(plan)
    #expect(report.step("ui")?.usedFallback == true)
    #expect(report.output(of: "ui", as: Int.self) == 42)
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "fails", "isolation": "default", "fallback": { "plugin": "ui.main" } } ] }"#,
        registry: registry
      ).count == 1)
  }

  @Test func honoursTheConcurrencyLimitWithRealTasks() async throws {
    let clock = ManualClock()
    let running = Locked((now: 0, peak: 0))
    var registry = PluginRegistry.testKinds
    registry.register(kind: "count") { context in
      running.withLock {
        $0.now += 1
        $0.peak = max($0.peak, $0.now)
      }
      try await context.sleep(for: .milliseconds(5))
      running.withLock { $0.now -= 1 }
    }
    let steps = (0..<12).map { #"{ "id": "s\#($0)", "plugin": "count" }"# }.joined(separator: ",")
    let plan = try loadPlan(
      #"{ "version": 1, "maxConcurrency": 3, "steps": [\#(steps)] }"#, registry: registry)
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    // Each round, exactly three steps are asleep on the clock; more would break the limit.
    for round in 1...4 {
      await clock.settle()
      #expect(clock.sleeperDeadlines == Array(repeating: .milliseconds(5 * round), count: 3))
      #expect(running.withLock { $0.now } == 3)
      await clock.advance(by: .milliseconds(5))
    }
    let report = await launch.value
    #expect(report.outcome == .succeeded)
    #expect(running.withLock { $0.peak } == 3)
  }

  @Test func runsEachStepAtItsPrioritysTaskPriority() async throws {
    let seen = Locked<[String: TaskPriority]>([:])
    var registry = PluginRegistry.testKinds
    registry.register(kind: "probe") { context in
      let priority = Task.currentPriority
      seen.withLock { $0[context.stepID] = priority }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "critical", "plugin": "probe", "priority": "critical" },
        { "id": "normal", "plugin": "probe" },
        { "id": "background", "plugin": "probe", "priority": "background" }
      ] }
      """, registry: registry)
    _ = await LaunchEngine().run(plan)
    #expect(
      seen.withLock { $0 } == ["critical": .high, "normal": .medium, "background": .background])
  }

  @Test func aCancellationHandlerCanCallBackIntoTheRunAndItsControl() async throws {
    let control = LaunchControl()
    let calls = Locked<[String]>([])
    var registry = PluginRegistry.testKinds
    registry.register(kind: "callsBack") { context in
      let wait = Locked<(cancelled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
      await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
          let cancelled = wait.withLock { wait in
            if !wait.cancelled { wait.waiter = continuation }
            return wait.cancelled
          }
          if cancelled { return continuation.resume() }
          // In the handler's scope now: the cancellation runs `onCancel` on the thread that
          // cancels, which is the run's handler.
          context.log("waiting")
        }
      } onCancel: {
        let returned = returnsPromptly {
          _ = control.report
          _ = control.isPaused
          control.signal("go")
          context.log("cancelled")
        }
        calls.withLock { $0.append(returned ? "returned" : "blocked on the run's lock") }
        // On this very thread too, once it is known not to deadlock.
        if returned {
          let report = control.report
          calls.withLock { $0.append(report == nil ? "no report" : "read here") }
        }
        wait.withLock { wait in
          wait.cancelled = true
          defer { wait.waiter = nil }
          return wait.waiter
        }?.resume()
      }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["go"], "steps": [
        { "id": "work", "plugin": "callsBack" },
        { "id": "later", "plugin": "noop", "dependsOn": ["work"] }
      ] }
      """, registry: registry)
    let recorder = EventRecorder()
    let launch = recorder.start(plan, on: LaunchEngine(clock: ManualClock()), control: control)
    await recorder.waitFor("log work: waiting")
    control.cancel()
    let report = await launch.value
    await recorder.drained()
    #expect(calls.withLock { $0 } == ["returned", "read here"])
    #expect(report.outcome == .cancelled)
    #expect(report.step("work")?.state == .cancelled)
    #expect(report.step("later")?.state == .skipped)
  }

  @Test func hooksCanReadTheRunThroughItsControl() async throws {
    let control = LaunchControl()
    let calls = Locked<[String]>([])
    let hooks = RunHooks(
      onOutput: { step, _ in
        let returned = returnsPromptly { _ = control.report }
        calls.withLock { $0.append("output \(step) \(returned ? "returned" : "blocked")") }
      },
      onMilestone: { name, _ in
        let returned = returnsPromptly { _ = control.report }
        calls.withLock { $0.append("milestone \(name) \(returned ? "returned" : "blocked")") }
      })
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["a"] }, "steps": [
        { "id": "a", "plugin": "token.make", "params": { "value": "abc" } }
      ] }
      """)
    let (events, continuation) = LaunchEvents.makeStream()
    let consumer = Task { for await _ in events {} }
    let report = await LaunchEngine(clock: ManualClock()).run(
      plan, environment: LaunchEnvironment(), events: continuation, control: control,
      hooks: hooks)
    await consumer.value
    #expect(report.outcome == .succeeded)
    #expect(calls.withLock { $0 } == ["output a returned", "milestone interactive returned"])
  }
}

extension LaunchEngineTests {
  /// The app hears the launch's end (the last step's `succeeded`, the milestone it reached,
  /// `finished`) from the step that ended it, without waiting for the launch's own task to
  /// make the report: here that task cannot run again until the app has heard the end.
  @Test func theLastEventsReachTheAppBeforeTheLaunchsTaskRunsAgain() async throws {
    let executor = HoldingExecutor()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "held") { _ in
      // Ends the launch only once its task can no longer run: it waits, held, for its end.
      executor.closeWhenIdle()
      while !executor.isClosed { try await Task.sleep(for: .milliseconds(1)) }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["last"] }, "steps": [
        { "id": "last", "plugin": "held" }
      ] }
      """, registry: registry)
    let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
    let launch = Task(executorPreference: executor) {
      await LaunchEngine().run(plan, events: continuation)
    }
    var heard: [String] = []
    let watchdog = Task {
      try await Task.sleep(for: .seconds(20))
      executor.open()
    }
    for await event in events {
      heard.append(SchedulerHarness.describe(event.kind))
      if case .finished = event.kind { break }
    }
    let heardBeforeTheWatchdog = executor.open()
    watchdog.cancel()
    #expect(heardBeforeTheWatchdog, "the end was heard only once the launch's task ran again")
    #expect(heard.suffix(3) == ["done last", "milestone interactive", "finish succeeded"])
    let report = await launch.value
    #expect(report.outcome == .succeeded)
  }
}

/// Whether `body`, run on a thread of its own, returns within 30 seconds.
///
/// For code the engine calls that calls back into it: called on the engine's own thread
/// while the engine held its lock, a call that takes the lock would never return, so it is
/// made from another thread that can be waited for. It returns at once when nothing holds
/// the lock; the bound only ends the wait when something does.
private func returnsPromptly(_ body: @escaping @Sendable () -> Void) -> Bool {
  let done = DispatchSemaphore(value: 0)
  Thread {
    body()
    done.signal()
  }.start()
  return done.wait(timeout: .now() + .seconds(30)) == .success
}
