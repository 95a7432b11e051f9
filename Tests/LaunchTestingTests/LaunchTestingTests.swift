import Foundation
import LaunchOrchestrator
import LaunchTesting
import Testing

/// Takes its set time, asleep on the launch's clock.
private struct Wait: StepPlugin {
  static let kind = "wait"
  struct Parameters: StepParameters {
    @Parameter("How long.") var duration: Duration
  }
  let duration: Duration
  init(parameters: Parameters) { duration = parameters.duration }
  func run(_ context: StepContext) async throws { try await context.sleep(for: duration) }
}

/// The greeting an app hands its launch.
private struct Greeting: Sendable { var word: String }

/// What the store step hands its dependents.
private struct Store: Sendable { var name: String }

/// Reads its input and the environment, or throws the app's own error.
private struct Greet: StepPlugin {
  static let kind = "greet"
  static let inputs: [StepInput] = [.required(Store.self)]
  static let requirements: [StepRequirement] = [.required(Greeting.self)]
  struct Offline: Error, Equatable {}
  struct Parameters: StepParameters {
    @Parameter("Whom to greet.") var name: String
    @Parameter("Fail as offline.") var offline = false
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> String {
    if parameters.offline { throw Offline() }
    try await context.sleep(for: .seconds(2))
    let store = try context.input(Store.self)
    return "\(try context.environment(Greeting.self).word), \(parameters.name), from \(store.name)"
  }
}

@MainActor
@Suite("LaunchTesting: the manual clock and test runs")
struct LaunchTestingTests {
  private static var registry: PluginRegistry {
    var registry = PluginRegistry()
    registry.register(Wait.self)
    return registry
  }

  @Test func aManifestWithAFiveSecondStepRunsOnTheManualClock() async throws {
    let report = try await LaunchTest.run(
      manifest: """
        { "version": 1, "milestones": { "interactive": ["page"] }, "steps": [
          { "id": "store", "plugin": "wait", "params": { "duration": "5s" } },
          { "id": "page", "plugin": "wait", "params": { "duration": "1s" },
            "dependsOn": ["store"], "delay": "500ms" } ] }
        """, registry: Self.registry)
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.end == .seconds(5))
    #expect(report.step("page")?.start == .milliseconds(5_500))
    #expect(report.time(ofMilestone: "interactive") == .some(.milliseconds(6_500)))
  }

  /// A test run has no control to send signals with: a step that waits for one is skipped
  /// as after `finish()`, and the run returns (it waited for ever).
  @Test(.timeLimit(.minutes(10))) func aStepWaitingForASignalNoOneCanSendIsSkipped() async throws {
    let report = try await LaunchTest.run(
      manifest: """
        { "version": 1, "signals": ["consent"], "steps": [
          { "id": "store", "plugin": "wait", "params": { "duration": "1s" } },
          { "id": "analytics", "plugin": "wait", "params": { "duration": "1s" },
            "dependsOn": ["store"], "waitFor": ["consent"] } ] }
        """, registry: Self.registry)
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.state == .succeeded)
    #expect(report.step("analytics")?.state == .skipped)
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.duration == .seconds(1))
  }

  @Test func timeoutsAndBackoffsFallExactlyOnTheirDeadlines() async throws {
    let report = try await LaunchTest.run(
      manifest: """
        { "version": 1, "steps": [
          { "id": "slow", "plugin": "wait", "params": { "duration": "5s" }, "timeout": "1s",
            "retry": { "attempts": 2, "backoff": "500ms" } } ] }
        """, registry: Self.registry)
    #expect(report.step("slow")?.state == .timedOut)
    #expect(report.step("slow")?.attempts == 2)
    #expect(report.step("slow")?.end == .milliseconds(2_500))
  }

  @Test func advanceReturnsOnceEverythingDueHasRunAndNothingLater() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(
        """
        { "version": 1, "splash": { "dismissOn": "interactive", "minimum": "2s" },
          "milestones": { "interactive": ["page"] },
          "steps": [ { "id": "page", "plugin": "wait", "params": { "duration": "1s" } } ] }
        """.utf8), file: "splash.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let session = LaunchSession()
    let launch = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(by: .milliseconds(999))
    #expect(!session.isReached("interactive"))
    await clock.advance(by: .milliseconds(1))
    #expect(session.isReached("interactive"))
    #expect(session.screen == .splash)
    await clock.advance(to: .seconds(2))
    #expect(session.screen == .content)
    let report = await launch.value
    #expect(report.outcome == .succeeded)
  }

  @Test func settleReturnsOnceTheSessionShowsWhatTheLaunchDidAtOnce() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(
        """
        { "version": 1, "splash": { "dismissOn": "interactive" },
          "milestones": { "interactive": ["now"] }, "steps": [
          { "id": "now", "plugin": "wait", "params": { "duration": 0 } },
          { "id": "later", "plugin": "wait", "params": { "duration": "1s" } } ] }
        """.utf8), file: "now.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let session = LaunchSession()
    let launch = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(session.isReached("interactive"))
    #expect(session.screen == .content)
    #expect(session.runningSteps == ["later"])
    await clock.advance(by: .seconds(1))
    #expect(await launch.value.outcome == .succeeded)
  }

  @Test func aPausedLaunchHoldsNoDeadlineUntilItResumes() async throws {
    let plan = try ManifestLoader(registry: Self.registry).load(
      bytes: Array(
        #"{ "version": 1, "steps": [ { "id": "work", "plugin": "wait", "params": { "duration": "1s" }, "timeout": "2s" } ] }"#
          .utf8), file: "pause.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let control = LaunchControl()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan, control: control) }
    await clock.advance(by: .milliseconds(400))
    control.pause()
    await clock.advance(by: .seconds(10))
    control.resume()
    await clock.advance(by: .milliseconds(600))
    let report = await launch.value
    #expect(report.outcome == .succeeded)
    #expect(report.step("work")?.end == .seconds(1))
    #expect(report.pauses.map(\.duration) == [.seconds(10)])
  }

  @Test func onePluginRunsWithItsParamsInputsAndEnvironment() async throws {
    var environment = LaunchEnvironment()
    environment[Greeting.self] = Greeting(word: "Hello")
    let greeting = try await LaunchTest.run(
      Greet.self, params: #"{ "name": "Ada" }"#, inputs: [Store(name: "library")],
      environment: environment)
    #expect(greeting == "Hello, Ada, from library")
  }

  @Test func aFailingPluginThrowsItsOwnErrorThroughTheFailure() async throws {
    var environment = LaunchEnvironment()
    environment[Greeting.self] = Greeting(word: "Hello")
    let failure = await #expect(throws: LaunchFailure.self) {
      try await LaunchTest.run(
        Greet.self, params: #"{ "name": "Ada", "offline": true }"#,
        inputs: [Store(name: "library")], environment: environment)
    }
    #expect(failure?.kind == .stepFailed)
    #expect(failure?.underlying as? Greet.Offline == Greet.Offline())
    let invalid = await #expect(throws: LaunchFailure.self) {
      try await LaunchTest.run(Greet.self, params: #"{ "nam": "Ada" }"#)
    }
    #expect(invalid?.kind == .invalidPlan)
    #expect(invalid?.message.contains("unknown parameter 'nam'") == true)
  }
}

/// Sleeps in child tasks: each of `milliseconds` in a task group's child, then `then` in an
/// `async let`, recording when each ends.
private struct Fan: StepPlugin {
  static let kind = "fan"
  struct Parameters: StepParameters {
    @Parameter("How long each child of the group sleeps, in milliseconds.") var milliseconds: [Int]
    @Parameter("How long the `async let` child sleeps after the group.") var then: Duration?
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> [Duration] {
    var ends = try await withThrowingTaskGroup(of: Duration.self) { group in
      for milliseconds in parameters.milliseconds {
        group.addTask {
          try await context.sleep(for: .milliseconds(milliseconds))
          return context.now
        }
      }
      var ends: [Duration] = []
      for try await end in group { ends.append(end) }
      return ends
    }
    if let then = parameters.then {
      async let end = { try await context.sleep(for: then) }()
      try await end
      ends.append(context.now)
    }
    return ends
  }
}

/// Waits for something the manual clock cannot see (a real hour), until cancelled.
private struct Offline: StepPlugin {
  static let kind = "offline"
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws {
    try await Task.sleep(for: .seconds(3600))
  }
}

/// The report of `launch`, cancelling it when the test is cancelled (at its time limit): a
/// launch the clock cannot move fails the test instead of hanging it.
private func finished(_ launch: Task<LaunchReport, Never>) async -> LaunchReport {
  await withTaskCancellationHandler {
    await launch.value
  } onCancel: {
    launch.cancel()
  }
}

// Ten minutes, as the other suites: under the thread sanitizer with the whole suite running, a
// minute was not always enough, and a hang fails the run rather than blocking it either way.
@Suite("LaunchTesting: child tasks, gates and cancellation", .timeLimit(.minutes(10)))
struct ManualClockChildTaskTests {
  private static func plan(_ steps: String) throws -> LaunchPlan {
    var registry = PluginRegistry()
    registry.register([Fan.self, Offline.self, Wait.self])
    return try ManifestLoader(registry: registry).load(
      bytes: Array(#"{ "version": 1, "steps": [\#(steps)] }"#.utf8), file: "fan.json",
      directory: FileManager.default.temporaryDirectory)
  }

  @Test func aStepSleepingInChildTasksLetsTheClockMoveDeadlineByDeadline() async throws {
    let plan = try Self.plan(
      #"{ "id": "fan", "plugin": "fan", "params": { "milliseconds": [1000, 2000], "then": "500ms" } }, { "id": "after", "plugin": "wait", "params": { "duration": "1s" }, "dependsOn": ["fan"] }"#
    )
    let clock = ManualClock()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    await clock.advance(by: .seconds(1))
    // One child done, the other asleep: the step is waiting for it, not running.
    #expect(clock.sleeperDeadlines == [.seconds(2)])
    await clock.advance(by: .seconds(1))
    #expect(clock.sleeperDeadlines == [.milliseconds(2_500)])
    await clock.advance(by: .milliseconds(500))
    #expect(clock.sleeperDeadlines == [.milliseconds(3_500)])
    await clock.advance(by: .seconds(1))
    let report = await finished(launch)
    #expect(report.outcome == .succeeded)
    #expect(
      report.output(of: "fan", as: [Duration].self)
        == [.seconds(1), .seconds(2), .milliseconds(2_500)])
    #expect(report.step("fan")?.end == .milliseconds(2_500))
    #expect(report.step("after")?.end == .milliseconds(3_500))
  }

  @Test func aStepSleepingInChildTasksRunsToItsEndOnRunWithinItsTimeout() async throws {
    let plan = try Self.plan(
      #"{ "id": "fan", "plugin": "fan", "params": { "milliseconds": [3000, 1000, 2000] }, "timeout": "5s" }"#
    )
    let clock = ManualClock()
    let report = await clock.run { await LaunchEngine(clock: clock).run(plan) }
    #expect(report.outcome == .succeeded)
    #expect(
      report.output(of: "fan", as: [Duration].self) == [.seconds(1), .seconds(2), .seconds(3)])
    #expect(report.step("fan")?.end == .seconds(3))
    #expect(clock.now.offset == .seconds(3))
  }

  @Test func aStepStuckAtAGateLetsTheClockReachItsTimeout() async throws {
    let gate = ManualGate()
    var registry = PluginRegistry()
    registry.register(kind: "stuck") { _ in gate.wait() }
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        #"{ "version": 1, "steps": [ { "id": "stuck", "plugin": "stuck", "timeout": "5s", "onFailure": "continue" } ] }"#
          .utf8), file: "stuck.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    // However the test ends (its time limit cancels it), the step is let go: a thread stuck at
    // a closed gate would keep the test process alive after the last test.
    defer { gate.open() }
    let report = await withTaskCancellationHandler {
      let launch = clock.start {
        await LaunchEngine(
          clock: clock, options: LaunchOptions(cancellationGracePeriod: .seconds(1))
        ).run(plan)
      }
      await clock.advance(by: .seconds(5))
      // Timed out, still stuck: the launch waits out the grace period.
      #expect(clock.sleeperDeadlines == [.seconds(6)])
      await clock.advance(by: .seconds(1))
      return await finished(launch)
    } onCancel: {
      gate.open()
    }
    #expect(report.step("stuck")?.state == .timedOut)
    #expect(report.step("stuck")?.end == .seconds(5))
    #expect(report.duration == .seconds(6))
  }

  @Test func jumpMovesTimeAndWakesSleepersWithoutWaitingForTheLaunch() async throws {
    let (naps, napped) = AsyncStream.makeStream(of: Duration.self)
    var registry = PluginRegistry()
    registry.register(Offline.self)
    registry.register(kind: "nap") { context in
      try await context.sleep(for: .seconds(1))
      napped.yield(context.now)
    }
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        #"{ "version": 1, "steps": [ { "id": "offline", "plugin": "offline" }, { "id": "nap", "plugin": "nap" } ] }"#
          .utf8), file: "jump.json", directory: FileManager.default.temporaryDirectory)
    let clock = ManualClock()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    // 'offline' holds the clock, so `advance` would wait; `jump` does not.
    while clock.sleeperDeadlines != [.seconds(1)] { await Task.yield() }
    clock.jump(to: .seconds(2))
    #expect(clock.now.offset == .seconds(2))
    #expect(clock.sleeperDeadlines.isEmpty)
    // Woken, the nap goes on while 'offline' still runs.
    var woke = naps.makeAsyncIterator()
    #expect(await woke.next() == .seconds(2))
    launch.cancel()
    let report = await finished(launch)
    #expect(report.step("offline")?.state == .cancelled)
  }

  @Test func aGateOpenedBeforeTheWaitLetsItThrough() {
    let gate = ManualGate()
    gate.open(2)
    gate.wait()
    gate.wait()
  }

  @Test func aCancelledSettleOrAdvanceReturnsThoughALaunchHoldsTheClock() async throws {
    let plan = try Self.plan(#"{ "id": "offline", "plugin": "offline" }"#)
    let clock = ManualClock()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    let settling = Task { await clock.settle() }
    settling.cancel()
    await settling.value
    let advancing = Task { await clock.advance(by: .seconds(1)) }
    advancing.cancel()
    await advancing.value
    #expect(clock.now.offset == .zero)
    launch.cancel()
    #expect(await launch.value.outcome == .cancelled)
  }

  @Test func aCancelledRunCancelsItsLaunchAndReturnsItsReport() async throws {
    let plan = try Self.plan(
      #"{ "id": "offline", "plugin": "offline" }, { "id": "later", "plugin": "wait", "params": { "duration": "1s" }, "dependsOn": ["offline"] }"#
    )
    let clock = ManualClock()
    let running = Task { await clock.run { await LaunchEngine(clock: clock).run(plan) } }
    running.cancel()
    let report = await running.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("later")?.state == .skipped)
  }
}
