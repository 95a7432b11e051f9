import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

/// Typed failures and output keys as an app reads them: the plugin's own error through
/// `underlying`, a message for users, and keys checked against the plan.
@MainActor
@Suite("Typed failures and output keys")
struct LaunchFailureTests {
  /// The error a feed plugin throws offline: the app branches on its type.
  struct OfflineError: UserFacingError, Equatable {
    var retryAfter: Int
    var userMessage: String { "You're offline. Connect and try again." }
  }

  /// An error with nothing for users: the failure screen gets a sentence of its own.
  struct CorruptStore: Error {}

  private static func registry(throwing error: any Error & Sendable) -> PluginRegistry {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "feed.load") { _ in throw error }
    return registry
  }

  private static let feedManifest = """
    { "version": 1, "milestones": { "interactive": ["feed"] }, "steps": [
      { "id": "store", "plugin": "number.make" },
      { "id": "feed", "plugin": "feed.load", "dependsOn": ["store"] } ] }
    """

  @Test func theSessionsFailureCarriesThePluginsErrorAndItsUserMessage() async throws {
    let plan = try loadPlan(
      Self.feedManifest, registry: Self.registry(throwing: OfflineError(retryAfter: 30)))
    let session = LaunchSession()
    let report = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(report.outcome == .failed)
    let failure = try #require(session.failure)
    #expect(failure.kind == .stepFailed)
    #expect(failure.step == "feed")
    #expect(failure.plugin == "feed.load")
    #expect(failure.underlying as? OfflineError == OfflineError(retryAfter: 30))
    #expect(failure.userMessage == "You're offline. Connect and try again.")
    #expect(
      failure.message == "'feed' failed: OfflineError: You're offline. Connect and try again.")
    #expect(session.screen == .failed(failure))
    // The report keeps strings.
    #expect(report.step("feed")?.error == "OfflineError: You're offline. Connect and try again.")
  }

  @Test func anErrorWithNoUserMessageGetsASentenceWithoutPathsOrIDs() async throws {
    let plan = try loadPlan(Self.feedManifest, registry: Self.registry(throwing: CorruptStore()))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure = try #require(session.failure)
    #expect(failure.underlying is CorruptStore)
    #expect(failure.userMessage == "Something went wrong while starting the app. Please try again.")
    #expect(!failure.userMessage.contains("feed"))
  }

  @Test func aStepFailureMayCarryAUserMessage() async throws {
    let plan = try loadPlan(
      Self.feedManifest,
      registry: Self.registry(
        throwing: StepFailure(
          "/var/mobile/feed.json is not JSON", userMessage: "Your feed could not be read.")))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(session.failure?.userMessage == "Your feed could not be read.")
    #expect(session.failure?.message == "'feed' failed: /var/mobile/feed.json is not JSON")
  }

  @Test func aTimeoutIsItsOwnKind() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "slow", "plugin": "wait", "params": { "duration": "5s" }, "timeout": "1s" } ] }
      """)
    let clock = ManualClock()
    let session = LaunchSession()
    let run = clock.start { await session.run(plan, on: LaunchEngine(clock: clock)) }
    await clock.settle()
    // The step's sleep and its timeout.
    #expect(clock.sleeperDeadlines == [.seconds(1), .seconds(5)])
    await clock.advance(to: .seconds(1))
    _ = await run.value
    #expect(session.failure?.kind == .timedOut)
    #expect(session.failure?.step == "slow")
    #expect(session.failure?.plugin == "wait")
    #expect(session.failure?.underlying == nil)
    #expect(session.failure?.userMessage == "Starting the app took too long. Please try again.")
  }

  @Test func ensureThrowsTheFailureWithThePluginsError() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "number.make" },
        { "id": "feed", "plugin": "feed.load", "trigger": "onDemand" } ] }
      """, registry: Self.registry(throwing: OfflineError(retryAfter: 5)))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("feed", as: Void.self)
    }
    #expect(failure?.underlying as? OfflineError == OfflineError(retryAfter: 5))
    #expect(failure?.plugin == "feed.load")
  }

  // MARK: Output keys

  @Test func anOutputKeyReadsTheOutputAndChecksAgainstThePlan() async throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "answer", "plugin": "number.make" } ] }"#)
    let answer = OutputKey<Int>("answer")
    try plan.check(answer)
    let session = LaunchSession()
    #expect(session[answer] == nil)
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(session[answer] == 42)
  }

  @Test func checkNamesTheStepAndBothTypesOrTheClosestId() throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "answer", "plugin": "number.make" } ] }"#)
    let wrongType = #expect(throws: LaunchFailure.self) {
      try plan.check(OutputKey<String>("answer"))
    }
    #expect(wrongType?.kind == .wrongOutputType)
    #expect(
      wrongType?.message
        == "OutputKey<String>(\"answer\") does not match the plan: 'answer' (number.make) outputs Int, not String."
    )
    let typo = #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<Int>("answr")) }
    #expect(typo?.kind == .unknownStep)
    #expect(
      typo?.message == "OutputKey<Int>(\"answr\") names no step of 'test'. Did you mean 'answer'?")
  }
}
