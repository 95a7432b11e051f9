import Observation
import Testing

@testable import LaunchOrchestrator

@MainActor
@Suite("Launch session", .timeLimit(.minutes(10)))
struct LaunchSessionTests {
  @Test func followsALaunchFromIdleToFinished() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "migrate") { context in
      context.reportProgress(0.5, "Upgrading library...")
    }
    let plan = try loadPlan(
      """
      { "version": 1, "milestones": { "interactive": ["store", "page"] }, "steps": [
        { "id": "store", "plugin": "migrate" },
        { "id": "page", "plugin": "noop", "dependsOn": ["store"] },
        { "id": "cleanup", "plugin": "noop", "deferUntil": "interactive" }
      ] }
      """, registry: registry)
    let session = LaunchSession()
    #expect(session.phase == .idle)
    let report = await session.run(plan, on: LaunchEngine())
    #expect(session.phase == .finished(.succeeded))
    #expect(session.progress == 1)
    #expect(session.isReached("interactive"))
    #expect(session.runningSteps.isEmpty)
    #expect(session.route == nil)
    #expect(session.failure == nil)
    #expect(session.report == report)
  }

  @Test func reportsProgressRoutesAndFailuresAsTheyHappen() {
    let session = LaunchSession()
    session.start(stepCount: 4)
    session.apply(LaunchEvent(time: .zero, kind: .started(step: "store", attempt: 1)))
    session.apply(
      LaunchEvent(
        time: .zero, kind: .progress(step: "store", fraction: 0.45, message: "Upgrading library...")
      ))
    #expect(session.runningSteps == ["store"])
    #expect(session.currentMessage == "Upgrading library... 45%")
    session.apply(
      LaunchEvent(time: .seconds(1), kind: .succeeded(step: "store", usedFallback: false)))
    #expect(session.progress == 0.25)
    #expect(session.currentMessage == nil)
    session.apply(LaunchEvent(time: .seconds(1), kind: .milestone(name: "firstFrame")))
    #expect(session.milestones == ["firstFrame": .seconds(1)])
    session.apply(LaunchEvent(time: .seconds(2), kind: .failed(step: "queue", error: "disk full")))
    #expect(session.failure?.message == "'queue' failed: disk full")
    session.apply(LaunchEvent(time: .seconds(2), kind: .routed(route: .maintenance, step: "gate")))
    session.apply(LaunchEvent(time: .seconds(2), kind: .finished(outcome: .routed)))
    #expect(session.route == .maintenance)
    #expect(session.phase == .finished(.routed))
  }

  @Test func notifiesObserversWhenThePhaseChanges() {
    let session = LaunchSession()
    let changed = Locked(false)
    withObservationTracking {
      _ = session.phase
    } onChange: {
      changed.withLock { $0 = true }
    }
    session.start(stepCount: 1)
    #expect(changed.withLock { $0 })
  }
}
