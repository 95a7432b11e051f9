import Synchronization
import Testing

@testable import LaunchOrchestrator

/// `LaunchSession.onEvent`: the app sees each event once the session has applied it, for a
/// launch and for its retry.
@Suite("Session events")
@MainActor
struct SessionEventTests {
  @Test func theAppSeesEachEventAfterTheSessionAppliedItAndARetrysToo() async throws {
    let failures = Mutex(1)
    var registry = PluginRegistry.testKinds
    registry.register(kind: "flaky") { _ in
      let fails = failures.withLock { count in
        count -= 1
        return count >= 0
      }
      if fails { throw StepFailure("offline") }
    }
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "ready": ["a"] }, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "b", "plugin": "flaky", "dependsOn": ["a"] }
      ] }
      """, registry: registry)
    let session = LaunchSession()
    var seen: [String] = []
    session.onEvent = { event in
      switch event.kind {
      case .milestone(let name):
        // Applied before the app hears of it.
        seen.append("milestone \(name) \(session.isReached(name))")
      case .failed(let step, _): seen.append("failed \(step)")
      case .succeeded(let step, _): seen.append("succeeded \(step)")
      case .reused(let step): seen.append("reused \(step)")
      case .finished(let outcome): seen.append("finished \(outcome.rawValue) \(session.phase)")
      default: break
      }
    }

    let first = await session.run(plan, on: LaunchEngine())
    #expect(first.outcome == .failed)
    #expect(
      seen == [
        "succeeded a", "milestone ready true", "failed b",
        "finished failed \(LaunchSession.Phase.finished(.failed))",
      ])

    seen = []
    let retried = await session.retry()
    #expect(retried.outcome == .succeeded)
    #expect(seen.first == "reused a")
    #expect(seen.contains("succeeded b"))
    #expect(seen.last == "finished succeeded \(LaunchSession.Phase.finished(.succeeded))")
  }
}

extension SessionEventTests {
  @Test func runningStepsKeepTheirStartOrderThroughRetriesAndEnds() {
    let session = LaunchSession()
    session.start(stepCount: 4)
    func apply(_ kind: LaunchEvent.Kind) { session.apply(LaunchEvent(time: .zero, kind: kind)) }
    apply(.started(step: "a", attempt: 1))
    apply(.started(step: "b", attempt: 1))
    apply(.started(step: "c", attempt: 1))
    apply(.started(step: "b", attempt: 1))
    #expect(session.runningSteps == ["a", "b", "c"])
    apply(.retrying(step: "a", nextAttempt: 2, error: "offline", delay: .zero, fallback: false))
    #expect(session.runningSteps == ["b", "c"])
    apply(.started(step: "a", attempt: 2))
    apply(.progress(step: "a", fraction: 0.5, message: "Syncing"))
    apply(.succeeded(step: "b", usedFallback: false))
    apply(.skipped(step: "d", reason: "not needed"))
    #expect(session.runningSteps == ["c", "a"])
    #expect(session.currentMessage == "Syncing 50%")
    apply(.failed(step: "c", error: "offline"))
    apply(.succeeded(step: "a", usedFallback: false))
    #expect(session.runningSteps.isEmpty)
    #expect(session.currentMessage == nil)
    #expect(session.progress == 1)
  }

  @Test func aNewLaunchForgetsTheStepsThePreviousOneLeftRunning() {
    let session = LaunchSession()
    session.start(stepCount: 1)
    session.apply(LaunchEvent(time: .zero, kind: .started(step: "a", attempt: 1)))
    session.start(stepCount: 1)
    #expect(session.runningSteps.isEmpty)
    session.apply(LaunchEvent(time: .zero, kind: .started(step: "a", attempt: 1)))
    #expect(session.runningSteps == ["a"])
  }
}
