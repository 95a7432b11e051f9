import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// The lifecycle of a ``LaunchSession`` as an app drives it: cancel, retry, a second `run`
/// joining the first, the splash's timing while paused, signals and on-demand steps; on a
/// manual clock. Each test counts its `count` steps under keys of its own.
@MainActor
@Suite("Launch session lifecycle", .timeLimit(.minutes(10)))
struct LaunchSessionLifecycleTests {
  /// Asks `session` for a retry of the failed launch `first`, then, once it was asked for,
  /// lets `first` end with `letEnd`: the retry waits for that end and retries 'fetch', which
  /// succeeds on its second attempt.
  private func expectRetried(
    _ session: LaunchSession, after first: Task<LaunchReport, Never>, attempts: Locked<Int>,
    letEnd: () -> Void
  ) async {
    var asked = false
    let retried = Task {
      asked = true
      return await session.retry()
    }
    await until({ asked }, "the retry was asked for")
    letEnd()
    #expect(await first.value.outcome == .failed)
    let report = await retried.value
    #expect(report.outcome == .succeeded)
    #expect(report.step("fetch")?.state == .succeeded)
    #expect(attempts.withLock { $0 } == 2)
  }

  /// Test kinds: `fetch` fails its first attempt, `stubborn` ignores its first cancellation
  /// until `release` yields; with the count of `fetch`'s attempts.
  private func fetchAndStubbornKinds(release: AsyncStream<Void>) -> (
    PluginRegistry, attempts: Locked<Int>
  ) {
    let attempts = Locked(0)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "fetch") { _ in
      let attempt = increment(attempts)
      if attempt == 1 { throw StepFailure("the server said no") }
    }
    let stubbornRuns = Locked(0)
    registry.register(kind: "stubborn") { _ in
      // The first time, it ignores its cancellation until released.
      guard increment(stubbornRuns) == 1 else { return }
      await Task { for await _ in release { break } }.value
    }
    return (registry, attempts)
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

  private func runs(_ key: String) -> Int? {
    stepRuns.withLock { $0[key] }
  }

  // MARK: Cancel

  @Test func cancelShowsTheCancelledScreenWithNoError() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["page"] }, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "5s" } },
        { "id": "page", "plugin": "noop", "dependsOn": ["store"] }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .seconds(1))
    #expect(session.phase == .running)
    #expect(clock.sleeperDeadlines == [.seconds(5)])
    session.cancel()
    // At once, before the launch heard it.
    #expect(session.screen == .cancelled)
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("store")?.state == .cancelled)
    #expect(report.step("page")?.state == .skipped)
    #expect(session.screen == .cancelled)
    #expect(session.phase == .finished(.cancelled))
    #expect(session.failure == nil)
    #expect(session.report == report)
  }

  @Test func cancellingTheTaskThatRunsTheLaunchCancelsItAsCancelDoes() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "5s" } }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(5)])
    run.cancel()
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(session.screen == .cancelled)
    #expect(session.phase == .finished(.cancelled))
    #expect(session.failure == nil)
  }

  @Test(arguments: [true, false])
  func cancelDuringTheSplashMinimumShowsTheCancelledScreenAtOnce(paused: Bool) async throws {
    let plan = try Self.splashPlan(pageTakes: "2s")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    // The splash's minimum (1s) and the page's sleep.
    #expect(clock.sleeperDeadlines == [.seconds(1), .seconds(2)])
    await clock.advance(to: .milliseconds(500))
    if paused { session.pause() }
    session.cancel()
    #expect(session.screen == .cancelled)
    // No time passes: neither the minimum nor a resume is waited for.
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("page")?.state == .cancelled)
    #expect(session.screen == .cancelled)
    #expect(session.phase == .finished(.cancelled))
    #expect(session.failure == nil)
    await clock.settle()
    // No splash timer outlived the launch.
    #expect(clock.sleeperDeadlines.isEmpty)
    #expect(clock.now.offset == .milliseconds(500))
  }

  /// Kinds that ignore their cancellation: `deaf` sleeps on the launch clock until 1.2s
  /// whatever happens, as a plugin that never checks would.
  private static var deafKinds: PluginRegistry {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "deaf") { context in
      // An unstructured task does not inherit the step's cancellation.
      await Task { try? await context.sleep(until: .milliseconds(1_200)) }.value
    }
    return registry
  }

  /// A step that ignores its cancellation keeps the launch going for the grace period (1s):
  /// the screen is `.cancelled` from the call on, and neither the splash's minimum (1s), its
  /// skeleton deadline (1.15s) nor the step's end, which reaches the dismiss milestone,
  /// brings back the splash, a skeleton or the content meanwhile.
  @Test func cancelShowsTheCancelledScreenAtOnceWhileAStepThatIgnoresItStops() async throws {
    let plan = try loadPlan(
      """
      { "version": 1,
        "splash": { "dismissOn": "interactive", "minimum": "1s", "skeletonAfter": "150ms" },
        "milestones": { "interactive": ["sync"] },
        "steps": [ { "id": "sync", "plugin": "deaf" } ] }
      """, registry: Self.deafKinds)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .milliseconds(500))
    var screens: [LaunchScreen] = []
    var heard: [LaunchEvent.Kind] = []
    session.onEvent = {
      heard.append($0.kind)
      screens.append(session.screen)
    }
    session.cancel()
    #expect(session.screen == .cancelled)
    #expect(session.phase == .running)
    await clock.settle()
    // The splash's timer stopped with the cancel: the step's sleep and the grace are left.
    #expect(clock.sleeperDeadlines == [.milliseconds(1_200), .milliseconds(1_500)])
    await clock.advance(to: .milliseconds(1_499))
    #expect(session.screen == .cancelled)
    await clock.advance(to: .milliseconds(1_500))
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(session.phase == .finished(.cancelled))
    #expect(session.screen == .cancelled)
    #expect(session.failure == nil)
    // Every event after the cancel found the screen cancelled.
    #expect(heard == [.cancelled(step: "sync"), .finished(outcome: .cancelled)])
    #expect(screens == [.cancelled, .cancelled])
  }

  /// A cancel once the content shows stops what still runs (deferred work) and leaves the
  /// content: only a route replaces a screen that left the splash.
  @Test func cancelOnceTheContentShowsKeepsTheContent() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "splash": {}, "milestones": { "interactive": ["page"] }, "steps": [
        { "id": "page", "plugin": "noop" },
        { "id": "cleanup", "plugin": "wait", "deferUntil": "interactive",
          "priority": "background", "params": { "duration": "5s" } }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.advance(to: .seconds(1))
    #expect(session.screen == .content)
    session.cancel()
    #expect(session.screen == .content)
    let report = await run.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("cleanup")?.state == .cancelled)
    #expect(session.phase == .finished(.cancelled))
    #expect(session.screen == .content)
  }

  @Test func cancelWithNoLaunchRunningDoesNothing() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "session-cancel-before" } }
      ] }
      """)
    let session = LaunchSession()
    session.cancel()
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .succeeded)
    #expect(runs("session-cancel-before") == 1)
    #expect(session.screen == .content)
  }

  // MARK: Retry

  /// The app hears a launch's end (its failure screen shows) while the launch still writes
  /// its record and its report is not the session's yet: a retry asked for then waits for
  /// that report and retries the launch. Here the record's last write waits until the retry
  /// was asked for.
  @Test func aRetryAskedForBeforeTheReportIsInRetriesThatLaunch() async throws {
    let kept = try KeptRecord()
    let (retryAsked, askingRetry) = AsyncStream.makeStream(of: Void.self)
    let attempts = Locked(0)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "held") { _ in
      let attempt = increment(attempts)
      guard attempt == 1 else { return }
      // The record's next write, the launch's last, waits for the retry to be asked for.
      kept.holdNextWrite(until: retryAsked)
      throw StepFailure("the server said no")
    }
    let plan = try kept.plan(#"{ "id": "fetch", "plugin": "held" }"#, registry: registry)
    let session = LaunchSession()
    let first = Task { await session.run(plan, on: kept.engine) }
    await until({ session.phase == .finished(.failed) }, "the failure was heard")
    #expect(session.report == nil, "the report is not the session's yet")

    await expectRetried(session, after: first, attempts: attempts) { askingRetry.yield() }
  }

  /// A `run` that joins a launch gets that launch's report, not the one of a launch that was
  /// still ending when the newer one started.
  @Test func aRunJoiningANewerLaunchGetsItsReportNotTheOneStillEnding() async throws {
    let kept = try KeptRecord()
    let (endFirst, endingFirst) = AsyncStream.makeStream(of: Void.self)
    let (endSecond, endingSecond) = AsyncStream.makeStream(of: Void.self)
    let attempts = Locked(0)
    let firstEnding = Locked(false)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "fetch") { _ in
      guard increment(attempts) == 1 else {
        for await _ in endSecond { break }
        return
      }
      // The first launch's last record write waits for the test.
      kept.holdNextWrite(until: endFirst) { firstEnding.withLock { $0 = true } }
      throw StepFailure("the server said no")
    }
    let plan = try kept.plan(#"{ "id": "fetch", "plugin": "fetch" }"#, registry: registry)
    let engine = kept.engine
    let session = LaunchSession()
    let first = Task { await session.run(plan, on: engine) }
    await until({ session.phase == .finished(.failed) }, "the first launch's end was heard")
    // Its last record write is held, so the next launch's first write is not.
    await until({ firstEnding.withLock { $0 } }, "the first launch writes its record")
    let second = Task { await session.run(plan, on: engine) }
    await until({ attempts.withLock { $0 } == 2 }, "the second launch runs")
    var joined = false
    let third = Task {
      joined = true
      return await session.run(plan, on: engine)
    }
    await until({ joined }, "a third caller joined the second launch")

    endingFirst.yield()
    #expect(await first.value.outcome == .failed)
    endingSecond.yield()
    #expect(await second.value.outcome == .succeeded)
    #expect(await third.value.outcome == .succeeded, "the launch it joined")
    #expect(attempts.withLock { $0 } == 2)
  }

  /// A failing step that aborts the launch shows the failure screen at once, while another
  /// step is still stopping: a retry asked for there waits for the launch's end and retries
  /// it, rather than returning the failed launch's report.
  @Test func aRetryFromTheFailureScreenWhileAStepStillStopsRetriesOnceItHas() async throws {
    let (release, releasing) = AsyncStream.makeStream(of: Void.self)
    let (registry, attempts) = fetchAndStubbornKinds(release: release)
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "sync", "plugin": "stubborn" },
        { "id": "fetch", "plugin": "fetch" }
      ] }
      """, registry: registry)
    let session = LaunchSession()
    // 'sync' stops only when released, however long that takes.
    let engine = LaunchEngine(options: LaunchOptions(cancellationGracePeriod: .seconds(3600)))
    let first = Task { await session.run(plan, on: engine) }
    await until({ session.failure != nil }, "the failure shows")
    #expect(session.phase == .running, "'sync' is still stopping")

    await expectRetried(session, after: first, attempts: attempts) { releasing.yield() }
  }

  @Test func aRetryAskedForWhileTheSplashStillHidesAKnownFailureRetriesThatLaunch() async throws {
    let (release, releasing) = AsyncStream.makeStream(of: Void.self)
    let (registry, attempts) = fetchAndStubbornKinds(release: release)
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["fetch"] },
        "splash": { "dismissOn": "interactive", "minimum": "2s" }, "steps": [
        { "id": "sync", "plugin": "stubborn" },
        { "id": "fetch", "plugin": "fetch" }
      ] }
      """, registry: registry)
    let clock = ManualClock()
    let session = LaunchSession()
    let engine = LaunchEngine(
      clock: clock, options: LaunchOptions(cancellationGracePeriod: .seconds(3600)))
    let first = clock.start { await session.run(plan, on: engine) }
    await until({ session.failure != nil }, "the failure is known")
    // The failure is the session's, the splash still has its minimum: an app that retries on
    // `failure` asks now.
    #expect(session.screen == .splash)
    #expect(session.phase == .running, "'sync' is still stopping")
    var asked = false
    let retried = Task {
      asked = true
      return await session.retry()
    }
    await until({ asked }, "the retry was asked for")
    releasing.yield()
    await clock.advance(to: .seconds(2))
    #expect(await first.value.outcome == .failed)
    // The retry's splash has its minimum again, from the retry's start.
    await clock.advance(to: .seconds(4))
    let report = await retried.value
    #expect(report.outcome == .succeeded)
    #expect(report.step("fetch")?.state == .succeeded)
    #expect(attempts.withLock { $0 } == 2)
  }

  /// The cancelled screen shows at the cancel, while a step that ignores it still stops: a
  /// retry asked for there waits for the launch's end and retries it, as one asked for on the
  /// failure screen does, rather than returning the cancelled launch's report.
  @Test func aRetryFromTheCancelledScreenWhileAStepStillStopsRetriesOnceItHas() async throws {
    let (release, releasing) = AsyncStream.makeStream(of: Void.self)
    let (registry, _) = fetchAndStubbornKinds(release: release)
    let key = "session-retry-cancelled-\(UUID())"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "sync", "plugin": "stubborn" },
        { "id": "page", "plugin": "count", "dependsOn": ["sync"], "params": { "key": "\(key)" } }
      ] }
      """, registry: registry)
    let session = LaunchSession()
    let engine = LaunchEngine(options: LaunchOptions(cancellationGracePeriod: .seconds(3600)))
    let first = Task { await session.run(plan, on: engine) }
    await until({ session.runningSteps == ["sync"] }, "'sync' runs")
    session.cancel()
    #expect(session.screen == .cancelled)
    #expect(session.phase == .running, "'sync' is still stopping")
    var asked = false
    let retried = Task {
      asked = true
      return await session.retry()
    }
    await until({ asked }, "the retry was asked for")
    releasing.yield()
    #expect(await first.value.outcome == .cancelled)
    let report = await retried.value
    #expect(report.outcome == .succeeded)
    #expect(report.step("sync")?.state == .succeeded)
    #expect(report.step("page")?.state == .succeeded)
    #expect(runs(key) == 1)
  }

  /// An app may call `retry()` from a screen of a session that never launched: nothing
  /// launches, and the report says why.
  @Test func retryBeforeAnyRunLaunchesNothingAndSaysWhy() async throws {
    let key = "session-retry-before-run-\(UUID())"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "\(key)" } }
      ] }
      """)
    let session = LaunchSession()
    let report = await session.retry()
    #expect(report.outcome == .failed)
    #expect(
      report.error
        == "retry() found no launch to retry: the session never ran one. Call run(_:on:environment:) first."
    )
    #expect(report.steps.isEmpty)
    #expect(session.phase == .idle)
    #expect(session.screen == .splash)
    #expect(session.report == nil)
    #expect(runs(key) == nil)
    // The session launches as if the retry had not been asked for.
    let launched = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(launched.outcome == .succeeded)
    #expect(runs(key) == 1)
  }

  @Test func retryAfterAFailureRunsNoSucceededStepAgain() async throws {
    // 'feed' fails a second after 'store' succeeded, without depending on it; 'page' needs
    // 'feed'.
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["page"] }, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "session-retry-store" } },
        { "id": "feed", "plugin": "count", "delay": "1s", "onFailure": "abort",
          "params": { "key": "session-retry-feed", "failRuns": 1 } },
        { "id": "page", "plugin": "count", "params": { "key": "session-retry-page" },
          "dependsOn": ["feed"] }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let first = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(session.output(of: "store", as: Tally.self) != nil)
    #expect(clock.sleeperDeadlines == [.seconds(1)])
    await clock.advance(to: .seconds(1))
    let failed = await first.value
    #expect(failed.outcome == .failed)
    #expect(failed.step("store")?.state == .succeeded)
    #expect(failed.step("feed")?.state == .failed)
    #expect(failed.step("page")?.state == .skipped)
    #expect(session.screen.failureMessage == "'feed' failed: run 1 fails")
    #expect(session.failure?.message == "'feed' failed: run 1 fails")
    #expect(runs("session-retry-store") == 1)
    #expect(runs("session-retry-feed") == 1)
    #expect(runs("session-retry-page") == nil)

    let retry = clock.start { await session.retry() }
    await clock.settle()
    // The retry's 'feed' waits its delay again, from the retry's start.
    #expect(clock.sleeperDeadlines == [.seconds(2)])
    #expect(session.phase == .running)
    #expect(session.screen == .splash)
    await clock.advance(to: .seconds(2))
    let retried = await retry.value
    #expect(retried.outcome == .succeeded)
    #expect(runs("session-retry-store") == 1)
    #expect(runs("session-retry-feed") == 2)
    #expect(runs("session-retry-page") == 1)
    #expect(retried.step("store")?.reused == true)
    #expect(retried.step("store")?.state == .succeeded)
    #expect(retried.step("feed")?.reused == false)
    #expect(retried.step("feed")?.state == .succeeded)
    #expect(retried.step("page")?.reused == false)
    #expect(retried.output(of: "store", as: Tally.self) == Tally(value: "session-retry-store#1"))
    #expect(session.output(of: "store", as: Tally.self) == Tally(value: "session-retry-store#1"))
    #expect(session.output(of: "page", as: Tally.self) == Tally(value: "session-retry-page#1"))
    #expect(session.phase == .finished(.succeeded))
    #expect(session.screen == .content)
    #expect(session.failure == nil)
    #expect(session.report == retried)

    // Nothing to retry after a success: the same report, and nothing runs.
    let again = await session.retry()
    #expect(again == retried)
    #expect(again.step("feed")?.end == retried.step("feed")?.end)
    #expect(runs("session-retry-store") == 1)
    #expect(runs("session-retry-feed") == 2)
    #expect(runs("session-retry-page") == 1)
    #expect(session.phase == .finished(.succeeded))
  }

  // MARK: Join

  @Test func aSecondRunWhileTheLaunchRunsJoinsIt() async throws {
    // The counted steps come after the slow one, so they run after the second call came.
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "slow", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "a", "plugin": "count", "params": { "key": "session-join-a" },
          "dependsOn": ["slow"] },
        { "id": "b", "plugin": "count", "params": { "key": "session-join-b" },
          "dependsOn": ["a"] }
      ] }
      """)
    let clock = ManualClock()
    let engine = LaunchEngine(clock: clock)
    let session = LaunchSession()
    let first = clock.start { await session.run(plan, on: engine) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(1)])
    let called = Locked(false)
    let second = Task {
      called.withLock { $0 = true }
      return await session.run(plan, on: engine)
    }
    // Both on the main actor: once the second task has run its first line, it has reached
    // `run` and joined, without letting the main actor go in between.
    await until({ called.withLock { $0 } }, "the second run was never called")
    #expect(session.phase == .running)
    await clock.advance(to: .seconds(1))
    let firstReport = await first.value
    let secondReport = await second.value
    #expect(firstReport.outcome == .succeeded)
    #expect(firstReport == secondReport)
    #expect(firstReport.step("a")?.start == secondReport.step("a")?.start)
    #expect(
      secondReport.output(of: "b", as: Tally.self) == Tally(value: "session-join-b#1"))
    #expect(runs("session-join-a") == 1)
    #expect(runs("session-join-b") == 1)
    #expect(session.report == firstReport)
    #expect(session.phase == .finished(.succeeded))
  }

  // MARK: Pause

  /// A splash whose content is `page`, a `wait` step taking `page`.
  private static func splashPlan(pageTakes page: String) throws -> LaunchPlan {
    try loadPlan(
      """
      { "version": 1,
        "splash": { "dismissOn": "interactive", "minimum": "1s", "skeletonAfter": "150ms" },
        "milestones": { "interactive": ["page"] },
        "steps": [ { "id": "page", "plugin": "wait", "params": { "duration": "\(page)" } } ] }
      """)
  }

  @Test func theSplashMinimumDoesNotAdvanceWhilePaused() async throws {
    let plan = try Self.splashPlan(pageTakes: "300ms")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    // The page's sleep and the splash's minimum.
    #expect(clock.sleeperDeadlines == [.milliseconds(300), .seconds(1)])
    await clock.advance(to: .milliseconds(300))
    #expect(session.isReached("interactive"))
    await clock.advance(to: .milliseconds(500))
    session.pause()
    #expect(session.isPaused)
    // Far past the minimum in real time; none of it counts.
    await clock.advance(to: .milliseconds(10_500))
    #expect(session.screen == .splash)
    session.resume()
    #expect(!session.isPaused)
    await clock.settle()
    // 0.5s of the minimum remain: it ends at 1s of active time, 11s of real time.
    #expect(clock.sleeperDeadlines == [.seconds(11)])
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(10_999))
    #expect(session.screen == .splash)
    await clock.advance(to: .seconds(11))
    let report = await run.value
    #expect(session.screen == .content)
    #expect(report.outcome == .succeeded)
    #expect(report.splash == SplashTiming(contentAt: .seconds(1), skeletonFrom: nil))
  }

  @Test func theSkeletonDeadlineDoesNotAdvanceWhilePaused() async throws {
    let plan = try Self.splashPlan(pageTakes: "2s")
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.seconds(1), .seconds(2)])
    await clock.advance(to: .milliseconds(500))
    session.pause()
    // Far past the minimum and the skeleton's deadline (1.15s) in real time.
    await clock.advance(to: .milliseconds(10_500))
    #expect(session.screen == .splash)
    session.resume()
    await clock.settle()
    // Everything moved by the 10s pause: the minimum to 11s, the page's end to 12s.
    #expect(clock.sleeperDeadlines == [.seconds(11), .seconds(12)])
    #expect(session.screen == .splash)
    await clock.advance(to: .seconds(11))
    let skeletonAt = Duration.milliseconds(11_150) + .nanoseconds(1)
    #expect(clock.sleeperDeadlines == [skeletonAt, .seconds(12)])
    #expect(session.screen == .splash)
    await clock.advance(to: .milliseconds(11_150))
    #expect(session.screen == .splash)
    await clock.advance(to: skeletonAt)
    #expect(session.screen == .skeleton)
    await clock.advance(to: .seconds(12))
    let report = await run.value
    #expect(session.screen == .content)
    #expect(report.outcome == .succeeded)
    #expect(report.duration == .seconds(2))
    #expect(report.wallDuration == .seconds(12))
    #expect(report.pauses == [.init(at: .milliseconds(500), duration: .seconds(10))])
    #expect(
      report.splash == SplashTiming(contentAt: .seconds(2), skeletonFrom: .milliseconds(1_150)))
  }

  // MARK: Signals

  @Test func aSignalSentBeforeRunIsRemembered() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "analytics", "plugin": "count", "params": { "key": "session-early-signal" },
          "waitFor": ["consent"] }
      ] }
      """)
    let session = LaunchSession()
    session.signal("consent")
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .succeeded)
    #expect(report.step("analytics")?.state == .succeeded)
    #expect(report.step("analytics")?.start == .zero)
    #expect(report.signals == [.init(name: "consent", time: .zero)])
    #expect(runs("session-early-signal") == 1)
    #expect(session.phase == .finished(.succeeded))
  }

  @Test func finishSkipsAStepWaitingForASignalThatNeverCame() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "session-finish-store" } },
        { "id": "analytics", "plugin": "count", "params": { "key": "session-finish-analytics" },
          "dependsOn": ["store"], "waitFor": ["consent"] }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    #expect(session.output(of: "store", as: Tally.self) != nil)
    // The launch stays open for the signal, however long it takes.
    await clock.advance(to: .seconds(60))
    #expect(session.phase == .running)
    session.finish()
    let report = await run.value
    #expect(report.step("analytics")?.state == .skipped)
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.signals == [.init(name: "consent", time: nil)])
    #expect(runs("session-finish-analytics") == nil)
    #expect(session.phase == .finished(report.outcome))
    #expect(report.outcome != .failed)
    #expect(session.failure == nil)
  }

  @Test func finishBeforeRunAppliesFromTheStartAndToARetry() async throws {
    // 'feed' fails its first run and aborts; 'analytics' waits for a signal that never comes.
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "feed", "plugin": "count", "onFailure": "abort",
          "params": { "key": "session-finish-early-feed", "failRuns": 1 } },
        { "id": "analytics", "plugin": "count", "dependsOn": ["feed"],
          "params": { "key": "session-finish-early-analytics" }, "waitFor": ["consent"] }
      ] }
      """)
    let session = LaunchSession()
    session.finish()
    let failed = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(failed.outcome == .failed)
    // Without the early finish, the retry would wait for 'consent' for ever.
    let retried = await session.retry()
    #expect(retried.step("feed")?.state == .succeeded)
    #expect(retried.step("analytics")?.state == .skipped)
    #expect(retried.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(runs("session-finish-early-analytics") == nil)
    #expect(session.phase == .finished(retried.outcome))
  }

  /// A signal the manifest does not declare starts nothing: the step waiting for the one the
  /// app meant says so in the report, and in a log event, once (sent early, or twice).
  @Test func aSignalTheManifestDoesNotDeclareIsNotedOnTheStepWaitingForTheOneMeant()
    async throws
  {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent", "signedIn"], "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "analytics", "plugin": "noop", "dependsOn": ["store"], "waitFor": ["consent"] },
        { "id": "sync", "plugin": "noop", "waitFor": ["signedIn"] }
      ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    var logs: [LaunchEvent.Kind] = []
    session.onEvent = { if case .log = $0.kind { logs.append($0.kind) } }
    session.signal("consnet")
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    session.signal("consnet")
    session.signal("signedIn")
    await clock.advance(to: .seconds(60))
    // 'analytics' still waits for 'consent', which never came.
    #expect(session.phase == .running)
    session.finish()
    let report = await run.value
    let note =
      "the app sent the signal 'consnet', which the manifest does not declare, so it was ignored. Did you mean 'consent'?"
    #expect(report.step("analytics")?.notes == [note])
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.step("sync")?.notes == [])
    #expect(report.step("sync")?.state == .succeeded)
    #expect(logs == [.log(step: "analytics", message: note)])
    #expect(
      report.signals == [.init(name: "consent", time: nil), .init(name: "signedIn", time: .zero)])
  }

  @Test func aSignalFarFromEveryDeclaredNameIsNotedOnEveryStepWaitingForOne() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent", "sceneActive"], "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "analytics", "plugin": "noop", "waitFor": ["consent"] },
        { "id": "prefetch", "plugin": "noop", "waitFor": ["sceneActive"] }
      ] }
      """)
    let session = LaunchSession()
    session.signal("pushToken")
    session.finish()
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let note =
      "the app sent the signal 'pushToken', which the manifest does not declare (its signals: 'consent', 'sceneActive'), so it was ignored"
    #expect(report.step("analytics")?.notes == [note])
    #expect(report.step("prefetch")?.notes == [note])
    #expect(report.step("store")?.notes == [])
  }

  /// With no step waiting for a signal, nothing was held back: no step is told.
  @Test func aSignalToAManifestWithNoStepWaitingForOneIsNotedNowhere() async throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "noop" } ] }"#)
    let session = LaunchSession()
    session.signal("consent")
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.notes == [])
  }

  // MARK: On demand

  @Test func ensureAskedForBeforeTheFirstLaunchStartsWaitsForIt() async throws {
    let key = "session-early-\(UUID())"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "search", "plugin": "count", "params": { "key": "\(key)" },
          "dependsOn": ["store"], "trigger": "onDemand" }
      ] }
      """)
    let session = LaunchSession()
    // Two `.task`s of one view: which starts first is not the app's to choose.
    var asked = false
    let ensured = Task {
      asked = true
      return try await session.ensure("search", as: Tally.self)
    }
    await until({ asked }, "the step was asked for")
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .succeeded)
    #expect(try await ensured.value == Tally(value: "\(key)#1"))
    #expect(session.report?.step("search")?.state == .succeeded)
    #expect(runs(key) == 1)
  }

  @Test func ensureAfterTheLaunchUpdatesOutputsAndReportAndRunsOnceForManyCallers()
    async throws
  {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "count", "params": { "key": "session-ensure-store" } },
        { "id": "search", "plugin": "count", "params": { "key": "session-ensure-search" },
          "dependsOn": ["store"], "trigger": "onDemand" }
      ] }
      """)
    let session = LaunchSession()
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .succeeded)
    #expect(report.step("search")?.state == .skipped)
    #expect(session.output(of: "search", as: Tally.self) == nil)
    #expect(runs("session-ensure-search") == nil)

    async let first = session.ensure("search", as: Tally.self)
    async let second = session.ensure("search", as: Tally.self)
    async let third = session.ensure("search", as: Tally.self)
    let tallies = try await [first, second, third]
    let expected = Tally(value: "session-ensure-search#1")
    #expect(tallies == [expected, expected, expected])
    #expect(runs("session-ensure-search") == 1)
    #expect(runs("session-ensure-store") == 1)
    #expect(session.output(of: "search", as: Tally.self) == expected)
    #expect(session.outputs.output(of: "search", as: Tally.self) == expected)
    let updated = try #require(session.report)
    #expect(updated.step("search")?.state == .succeeded)
    #expect(updated.output(of: "search", as: Tally.self) == expected)
    #expect(updated.step("store")?.state == .succeeded)

    // Later calls return the output at once.
    let later = try await session.ensure("search", as: Tally.self)
    #expect(later == expected)
    #expect(runs("session-ensure-search") == 1)
    // A launch step is not on demand, before its output is in and after alike.
    #expect(session.output(of: "store", as: Tally.self) != nil)
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("store", as: Tally.self)
    }
    #expect(failure?.kind == .notOnDemand)
  }

  /// After the launch, a failed ensure lists the step as failed in the session's report, as
  /// a successful one lists it as succeeded; the launch's outcome and screen stay.
  @Test func aFailedEnsureAfterTheLaunchListsTheStepAsFailedInTheReport() async throws {
    let key = "session-ensure-fails-\(UUID())"
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "search", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "trigger": "onDemand" }
      ] }
      """)
    let session = LaunchSession()
    var heard: [LaunchEvent.Kind] = []
    session.onEvent = { heard.append($0.kind) }
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.step("search")?.state == .skipped)
    let launchEvents = heard.count
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("search", as: Tally.self)
    }
    #expect(failure?.message == "'search' failed: run 1 fails")
    let failed = try #require(session.report)
    #expect(failed.step("search")?.state == .failed)
    #expect(failed.step("search")?.error == "run 1 fails")
    #expect(failed.outcome == .succeeded)
    #expect(session.screen == .content)
    #expect(session.failure == nil)
    #expect(session.output(of: "search", as: Tally.self) == nil)
    // The launch's events ended with `finished`; those of a step ensured after it follow.
    await until({ heard.count == launchEvents + 2 }, "onEvent heard 'search'")
    #expect(heard[launchEvents - 1] == .finished(outcome: .succeeded))
    #expect(
      Array(heard[launchEvents...]) == [
        .started(step: "search", attempt: 1), .failed(step: "search", error: "run 1 fails"),
      ])

    // Ensured again, it runs again, and the report follows.
    #expect(try await session.ensure("search", as: Tally.self) == Tally(value: "\(key)#2"))
    #expect(session.report?.step("search")?.state == .succeeded)
    #expect(session.report?.step("search")?.error == nil)
  }

  /// An on-demand step ensured after the launch shows in the report from its start, with no
  /// end while it runs; `runningSteps` lists it, and `onEvent` hears its events.
  @Test func anOnDemandStepEnsuredAfterTheLaunchShowsRunningFromItsStart() async throws {
    let key = "session-ensure-running-\(UUID())"
    let plan = try Self.slowOnDemandPlan(key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    var heard: [LaunchEvent.Kind] = []
    session.onEvent = { heard.append($0.kind) }
    let launch = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    #expect(launch.step("slow")?.start == nil)
    #expect(launch.step("slow")?.error == "on demand, and not ensured")
    let launchEvents = heard.count
    await clock.advance(to: .seconds(5))
    let ensured = Task { try await session.ensure("slow", as: Tally.self) }
    await until({ session.report?.step("slow")?.start != nil }, "the report shows 'slow'")
    let running = try #require(session.report?.step("slow"))
    #expect(running.start == .seconds(5))
    #expect(running.end == nil)
    #expect(running.error == nil)
    #expect(running.attempts == 1)
    #expect(session.runningSteps == ["slow"])
    #expect(Array(heard[launchEvents...]) == [.started(step: "slow", attempt: 1)])
    await until({ clock.sleeperDeadlines == [.seconds(35)] }, "'slow' sleeps")
    await clock.advance(to: .seconds(35))
    #expect(try await ensured.value == Tally(value: "\(key)#1"))
    await until({ session.runningSteps.isEmpty }, "'slow' ended")
    let ended = try #require(session.report?.step("slow"))
    #expect(ended.state == .succeeded)
    #expect(ended.start == .seconds(5))
    #expect(ended.end == .seconds(35))
    #expect(
      Array(heard[launchEvents...]) == [
        .started(step: "slow", attempt: 1), .succeeded(step: "slow", usedFallback: false),
      ])
  }

  /// Whether `task` ends within about five seconds, without the test moving its clock: its
  /// result, or `nil` (and an issue) when it is still waiting.
  private func result<T: Sendable>(of task: Task<T, any Error>, _ comment: Comment) async
    -> Result<T, any Error>?
  {
    var result: Result<T, any Error>?
    Task { result = await task.result }
    await until({ result != nil }, comment)
    return result
  }

  private static func slowOnDemandPlan(key: String) throws -> LaunchPlan {
    try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "slow", "plugin": "count", "params": { "key": "\(key)", "duration": "30s" },
          "trigger": "onDemand" }
      ] }
      """)
  }

  /// A caller whose task is cancelled stops waiting at once with `CancellationError`; the
  /// step's run goes on for the callers that share it, and ends once.
  @Test func aCancelledEnsureCallerStopsWaitingAndTheRunGoesOnForTheOthers() async throws {
    let key = "session-ensure-leaves-\(UUID())"
    let plan = try Self.slowOnDemandPlan(key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    let leaving = Task { try await session.ensure("slow", as: Tally.self) }
    let staying = Task { try await session.ensure("slow", as: Tally.self) }
    await until({ clock.sleeperDeadlines == [.seconds(30)] }, "'slow' runs")
    leaving.cancel()
    let left = await result(of: leaving, "the cancelled caller stopped waiting")
    #expect(throws: CancellationError.self) { try left?.get() }
    // No time passed, and the run goes on.
    #expect(clock.now.offset == .zero)
    #expect(clock.sleeperDeadlines == [.seconds(30)])
    await clock.advance(to: .seconds(30))
    #expect(try await staying.value == Tally(value: "\(key)#1"))
    #expect(runs(key) == 1)
    #expect(session.report?.step("slow")?.state == .succeeded)
  }

  /// A run every caller stopped waiting for still ends, and hands its output to the session:
  /// a view reading it updates, and the next call returns it at once.
  @Test func aRunEveryCallerLeftStillHandsItsOutputToTheSession() async throws {
    let key = "session-ensure-all-leave-\(UUID())"
    let plan = try Self.slowOnDemandPlan(key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    let only = Task { try await session.ensure("slow", as: Tally.self) }
    await until({ clock.sleeperDeadlines == [.seconds(30)] }, "'slow' runs")
    only.cancel()
    let left = await result(of: only, "the cancelled caller stopped waiting")
    #expect(throws: CancellationError.self) { try left?.get() }
    await clock.advance(to: .seconds(30))
    let expected = Tally(value: "\(key)#1")
    await until(
      { session.output(of: "slow", as: Tally.self) == expected }, "the output is the session's")
    #expect(session.report?.step("slow")?.state == .succeeded)
    #expect(try await session.ensure("slow", as: Tally.self) == expected)
    #expect(runs(key) == 1)
  }

  /// A caller cancelled before it asks starts nothing: the step runs when a caller that waits
  /// asks for it.
  @Test func anEnsureAskedForByACancelledTaskStartsNothing() async throws {
    let key = "session-ensure-cancelled-first-\(UUID())"
    let plan = try Self.slowOnDemandPlan(key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await clock.run { await session.run(plan, on: LaunchEngine(clock: clock)) }
    // Cancelled before its body runs: the test holds the main actor until then.
    let cancelled = Task { try await session.ensure("slow", as: Tally.self) }
    cancelled.cancel()
    let left = await result(of: cancelled, "the cancelled caller returned")
    #expect(throws: CancellationError.self) { try left?.get() }
    await clock.settle()
    #expect(clock.sleeperDeadlines.isEmpty)
    let asked = clock.start { @MainActor in try? await session.ensure("slow", as: Tally.self) }
    await clock.advance(to: .seconds(30))
    #expect(await asked.value == Tally(value: "\(key)#1"))
    #expect(runs(key) == 1)
  }
}

/// Adds one to `count` and returns it: the how-manieth run of a step this is.
private func increment(_ count: Locked<Int>) -> Int {
  count.withLock { value -> Int in
    value += 1
    return value
  }
}

/// A data folder of a test's own whose launches keep their launch record (removed with the
/// value, and with it any hook left on the record's writes).
private final class KeptRecord: Sendable {
  let data = FileManager.default.temporaryDirectory.appendingPathComponent(
    "kept-record-\(UUID().uuidString)")
  /// The record's path, for ``SharedFile/beforeLocking``.
  let record: String

  init() throws {
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    record = LaunchRecordFile(dataDirectory: data, manifestName: "kept").url.path
  }

  deinit {
    SharedFile.beforeLocking.withLock { [record] in $0[record] = nil }
    try? FileManager.default.removeItem(at: data)
  }

  /// The plan of the manifest `kept` with `steps`, its data in the folder.
  func plan(_ steps: String, registry: PluginRegistry) throws -> LaunchPlan {
    try ManifestLoader(registry: registry).load(
      bytes: Array(#"{ "version": 1, "name": "kept", "steps": [ \#(steps) ] }"#.utf8),
      file: "kept.json", directory: data, dataDirectory: data)
  }

  /// Holds the record's next write (a launch's last, when a step of it asks) until `released`
  /// yields; `held` runs once the write is held.
  func holdNextWrite(
    until released: AsyncStream<Void>, held: @escaping @Sendable () -> Void = {}
  ) {
    let record = record
    let goes = DispatchSemaphore(value: 0)
    Task {
      for await _ in released { break }
      goes.signal()
    }
    SharedFile.beforeLocking.withLock {
      $0[record] = {
        SharedFile.beforeLocking.withLock { $0[record] = nil }
        held()
        goes.wait()
      }
    }
  }

  /// An engine whose launches keep their record.
  var engine: LaunchEngine<ContinuousClock> {
    var options = LaunchOptions()
    options.launchRecord = .kept
    return LaunchEngine(options: options)
  }
}
