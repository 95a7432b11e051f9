import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// The app's lifecycle at its edges: what a review that drove launches from outside found
/// (ensure after a launch, on-demand failures in a session, cancel while paused or backing
/// off, a pause said as the run starts, a route after the launch).
@Suite("Launch lifecycle edges", .timeLimit(.minutes(2)))
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
}
