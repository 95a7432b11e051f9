import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// A step whose code ignores its cancellation is let go of (abandoned) once its grace period
/// has passed, its code still running. Its step never runs again beside it: not in a retry of
/// the session's launch, not in a new run of the session, not in its next attempt. On a manual
/// clock, with plugin code that blocks on a gate the test opens; orders, never wall time.
@MainActor
@Suite("Abandoned attempts", .timeLimit(.minutes(10)))
struct AbandonedAttemptTests {
  /// What the `migrate` steps did, in order: `run 1 starts`, `run 1 ends`, ...
  private final class Journal: Sendable {
    let lines = Locked<[String]>([])
    var read: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
  }

  /// `migrate` writes to the journal as each of its runs starts and ends; its first run holds
  /// its thread until `gate` opens, whatever its cancellation, as a migration stuck in SQLite
  /// would. `count` is the core tests' counting kind.
  private static func kinds(gate: ManualGate, journal: Journal) -> PluginRegistry {
    var registry = PluginRegistry.testKinds
    let runs = Locked(0)
    registry.register(kind: "migrate", isBlocking: true) { _ in
      let run = runs.withLock { runs in
        runs += 1
        return runs
      }
      journal.add("run \(run) starts")
      if run == 1 { gate.wait() }
      journal.add("run \(run) ends")
    }
    return registry
  }

  /// A launch whose `store` migrates (timeout 10s), beside `config`, which succeeds at once,
  /// and `feed`, which needs a second.
  private static func plan(gate: ManualGate, journal: Journal, key: String) throws -> LaunchPlan {
    try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "config", "plugin": "noop" },
        { "id": "store", "plugin": "migrate", "timeout": "10s" },
        { "id": "feed", "plugin": "count", "params": { "key": "\(key)", "duration": "1s" } }
      ] }
      """, registry: kinds(gate: gate, journal: journal))
  }

  /// Runs the launch on `session` and cancels it while `store` runs: `store` ignores it, and
  /// is abandoned when the grace period (1s) has passed, still running.
  private func cancelledLaunch(
    of plan: LaunchPlan, on session: LaunchSession, clock: ManualClock, journal: Journal
  ) async -> LaunchReport {
    let engine = LaunchEngine(clock: clock)
    let first = clock.start { await session.run(plan, on: engine) }
    await clock.settle()
    #expect(journal.read == ["run 1 starts"])
    session.cancel()
    await clock.advance(by: .seconds(1))
    let report = await first.value
    #expect(report.outcome == .cancelled)
    #expect(report.step("config")?.state == .succeeded)
    #expect(report.step("store")?.state == .cancelled)
    #expect(
      report.step("store")?.notes == [
        "attempt 1 did not stop within 1s of the launch's end and was abandoned"
      ])
    return report
  }

  /// The log events of the session's launches, as `step: message`.
  private func logLines(of session: LaunchSession) -> () -> [String] {
    var lines: [String] = []
    session.onEvent = { event in
      if case .log(let step, let message) = event.kind { lines.append("\(step): \(message)") }
    }
    return { lines }
  }

  private static let waiting =
    "store: waiting for its attempt 1 of an earlier launch, abandoned when that launch was cancelled, to end: two attempts of a step never run at once"

  /// The retry (or a new run of the session) holds `store` back until its abandoned attempt
  /// has ended, and says so; the other steps go on meanwhile, and the reused one runs not at
  /// all.
  @Test(arguments: [true, false])
  func aRetryStartsNoStepBesideItsAbandonedAttempt(retries: Bool) async throws {
    let gate = ManualGate()
    let journal = Journal()
    let key = "abandoned-retry-\(UUID())"
    let plan = try Self.plan(gate: gate, journal: journal, key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await cancelledLaunch(of: plan, on: session, clock: clock, journal: journal)
    let heard = logLines(of: session)
    let engine = LaunchEngine(clock: clock)
    let again = clock.start {
      retries ? await session.retry() : await session.run(plan, on: engine)
    }
    await clock.advance(by: .seconds(1))
    // A second into the launch, 'feed' has run; 'store' waits, its first run still going.
    #expect(stepRuns.withLock { $0[key] } == 1)
    #expect(journal.read == ["run 1 starts"])
    #expect(session.phase == .running)
    #expect(session.runningSteps == [])
    #expect(heard() == [Self.waiting])
    await clock.advance(by: .seconds(1))
    gate.open()
    let report = await again.value
    #expect(journal.read == ["run 1 starts", "run 1 ends", "run 2 starts", "run 2 ends"])
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.state == .succeeded)
    #expect(report.step("store")?.attempts == 1)
    #expect(report.step("store")?.start == .seconds(2))
    #expect(report.step("store")?.notes == [String(Self.waiting.dropFirst("store: ".count))])
    // Its wait is the time between its previous attempt and this one.
    #expect(
      report.step("store")?.waits == [
        LaunchReport.Wait(reason: .backoff, start: .zero, end: .seconds(2))
      ])
    #expect(report.step("config")?.reused == retries)
    #expect(report.step("config")?.notes.contains { $0.hasPrefix("waiting") } == false)
    #expect(session.screen == .content)
  }

  /// The step's timeout bounds the wait: an abandoned attempt that is still running then
  /// fails the step, which never ran beside it, with the reason.
  @Test func aRetryWaitsForAnAbandonedAttemptNoLongerThanTheStepsTimeout() async throws {
    let gate = ManualGate()
    defer { gate.open() }
    let journal = Journal()
    let plan = try Self.plan(gate: gate, journal: journal, key: "abandoned-timeout-\(UUID())")
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await cancelledLaunch(of: plan, on: session, clock: clock, journal: journal)
    let retry = clock.start { await session.retry() }
    await clock.advance(by: .milliseconds(9_999))
    #expect(session.phase == .running)
    await clock.advance(by: .milliseconds(1))
    let report = await retry.value
    let reason =
      "its attempt 1 of an earlier launch, abandoned when that launch was cancelled, was still running after 10s (the step's timeout): the step did not run again beside it"
    #expect(journal.read == ["run 1 starts"])
    #expect(report.outcome == .failed)
    #expect(report.step("store")?.state == .failed)
    #expect(report.step("store")?.attempts == 0)
    #expect(report.step("store")?.start == nil)
    #expect(report.step("store")?.error == reason)
    #expect(session.failure?.message == "'store' failed: \(reason)")
    #expect(session.screen.failureMessage == "'store' failed: \(reason)")
  }

  /// The app cancels the retry while its step waits, and retries again: the step is skipped by
  /// the cancel, the second retry waits in turn, and only it runs the step, once the
  /// abandoned attempt has ended.
  @Test func aSecondRetryAfterTheAppCancelledAWaitingOneWaitsToo() async throws {
    let gate = ManualGate()
    let journal = Journal()
    let key = "abandoned-second-retry-\(UUID())"
    let plan = try Self.plan(gate: gate, journal: journal, key: key)
    let clock = ManualClock()
    let session = LaunchSession()
    _ = await cancelledLaunch(of: plan, on: session, clock: clock, journal: journal)
    let heard = logLines(of: session)
    let firstRetry = clock.start { await session.retry() }
    await clock.advance(by: .milliseconds(500))
    session.cancel()
    let cancelled = await firstRetry.value
    #expect(cancelled.outcome == .cancelled)
    #expect(cancelled.step("store")?.state == .skipped)
    #expect(cancelled.step("store")?.error == "the launch was cancelled")
    #expect(journal.read == ["run 1 starts"])
    let secondRetry = clock.start { await session.retry() }
    await clock.advance(by: .seconds(5))
    #expect(journal.read == ["run 1 starts"])
    #expect(session.phase == .running)
    gate.open()
    let report = await secondRetry.value
    #expect(journal.read == ["run 1 starts", "run 1 ends", "run 2 starts", "run 2 ends"])
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.start == .seconds(5))
    #expect(heard() == [Self.waiting, Self.waiting])
  }

  /// Within one launch, a step's next attempt waits for the previous one, abandoned after its
  /// timeout and the grace period, to end: it does not start at its backoff beside it.
  @Test func aStepsNextAttemptWaitsForItsAbandonedAttempt() async throws {
    let gate = ManualGate()
    let journal = Journal()
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "migrate", "timeout": "5s",
          "retry": { "attempts": 2, "backoff": "100ms" } }
      ] }
      """, registry: Self.kinds(gate: gate, journal: journal))
    let clock = ManualClock()
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    // The timeout (5s), then the grace period (1s): attempt 1 is abandoned, still running.
    await clock.advance(to: .seconds(8))
    #expect(journal.read == ["run 1 starts"])
    gate.open()
    let report = await launch.value
    #expect(journal.read == ["run 1 starts", "run 1 ends", "run 2 starts", "run 2 ends"])
    #expect(report.outcome == .succeeded)
    #expect(report.step("store")?.attempts == 2)
    #expect(
      report.step("store")?.notes == [
        "attempt 1 did not stop within 1s of its timeout and was abandoned",
        "waiting for attempt 1, abandoned after it timed out, to end: two attempts of a step never run at once",
      ])
    #expect(report.step("store")?.work.map(\.start) == [.zero, .seconds(8)])
  }
}
