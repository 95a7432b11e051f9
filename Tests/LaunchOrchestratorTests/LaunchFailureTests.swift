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
    // For developers: the value with its fields, then its words for users.
    let developers = "OfflineError(retryAfter: 30): You're offline. Connect and try again."
    #expect(failure.message == "'feed' failed: \(developers)")
    #expect(session.screen == .failed(failure))
    // The report keeps strings.
    #expect(report.step("feed")?.error == developers)
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

  /// A step skipped because an on-demand dependency failed carries that plugin's error, and
  /// its words for users: the search screen says "You're offline", not a generic sentence.
  @Test func ensureOfAStepSkippedForAFailedDependencyCarriesThatPluginsError() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "number.make" },
        { "id": "feed", "plugin": "feed.load", "trigger": "onDemand" },
        { "id": "index", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["feed"] },
        { "id": "search", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["index"] } ] }
      """, registry: Self.registry(throwing: OfflineError(retryAfter: 5)))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("search", as: Void.self)
    }
    #expect(failure?.kind == .skipped)
    #expect(failure?.step == "search")
    #expect(failure?.message == "'search' was skipped: dependency 'index' was skipped")
    #expect(failure?.underlying as? OfflineError == OfflineError(retryAfter: 5))
    #expect(failure?.userMessage == "You're offline. Connect and try again.")
  }

  /// With two failed dependencies, the error is the one of the dependency the message names.
  @Test func theUnderlyingErrorIsTheOneOfTheDependencyTheSkipNames() async throws {
    struct Named: Error, Equatable { var name: String }
    var registry = PluginRegistry.testKinds
    registry.register(kind: "disk.fail") { _ in throw Named(name: "disk") }
    registry.register(kind: "net.fail") { _ in throw Named(name: "net") }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "disk.fail", "trigger": "onDemand" },
        { "id": "index", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["store"] },
        { "id": "fetch", "plugin": "net.fail", "trigger": "onDemand" },
        { "id": "feed", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["fetch"] },
        { "id": "search", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["index", "feed"] } ] }
      """, registry: registry)
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure = await #expect(throws: LaunchFailure.self) {
      try await session.ensure("search", as: Void.self)
    }
    let message = try #require(failure?.message)
    let expected =
      message == "'search' was skipped: dependency 'index' was skipped" ? "disk" : "net"
    #expect(
      [
        "'search' was skipped: dependency 'index' was skipped",
        "'search' was skipped: dependency 'feed' was skipped",
      ].contains(message))
    #expect(failure?.underlying as? Named == Named(name: expected))
  }

  // MARK: Caught as any error

  /// An app that catches any error shows `error.localizedDescription` (an alert, SwiftUI's
  /// `alert(isPresented:error:)`) and logs `"\(error)"`: the first is the failure's words for
  /// users, the second its message for developers; never Foundation's "The operation
  /// couldn't be completed (LaunchOrchestrator.LaunchFailure error 1.)".
  @Test func aFailureCaughtAsAnyErrorShowsItsWordsForUsersAndLogsItsMessage() async throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "number.make" },
        { "id": "feed", "plugin": "feed.load", "trigger": "onDemand" } ] }
      """, registry: Self.registry(throwing: OfflineError(retryAfter: 5)))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    var shown: String?
    var logged: String?
    do {
      try await session.ensure("feed", as: Void.self)
    } catch {
      shown = error.localizedDescription
      logged = "\(error)"
    }
    #expect(shown == "You're offline. Connect and try again.")
    #expect(
      logged == "'feed' failed: OfflineError(retryAfter: 5): You're offline. Connect and try again."
    )
  }

  @Test func aFailureWithNoWordsForUsersShowsTheSentenceForItsKind() async throws {
    let plan = try loadPlan(Self.feedManifest, registry: Self.registry(throwing: CorruptStore()))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    let failure: any Error = try #require(session.failure)
    #expect(
      failure.localizedDescription
        == "Something went wrong while starting the app. Please try again.")
    #expect("\(failure)" == "'feed' failed: CorruptStore()")
    let timedOut: any Error = LaunchFailure(
      kind: .timedOut, step: "feed", message: "'feed' timed out")
    #expect(timedOut.localizedDescription == "Starting the app took too long. Please try again.")
  }

  /// What a plugin throws, and what `LaunchPlan.clearCache()` throws to the app.
  @Test func aStepFailureCaughtAsAnyErrorShowsItsWordsForUsers() {
    let worded: any Error = StepFailure(
      "/var/mobile/feed.json is not JSON", userMessage: "Your feed could not be read.")
    #expect(worded.localizedDescription == "Your feed could not be read.")
    #expect("\(worded)" == "/var/mobile/feed.json is not JSON")
    let plain: any Error = StepFailure("cannot remove '/data/.cache/feed.json': permission denied")
    #expect(
      plain.localizedDescription == "Something went wrong while starting the app. Please try again."
    )
    #expect("\(plain)" == "cannot remove '/data/.cache/feed.json': permission denied")
  }

  /// A plugin's own `UserFacingError` is localized by its words for users too, unless it says
  /// something else itself.
  @Test func aUserFacingErrorIsLocalizedByItsWordsUnlessItHasItsOwn() {
    struct QuotaError: UserFacingError {
      var userMessage: String { "You've reached today's limit." }
      var errorDescription: String? { "Today's 500 searches are used up." }
    }
    #expect(
      (OfflineError(retryAfter: 5) as any Error).localizedDescription
        == "You're offline. Connect and try again.")
    #expect((QuotaError() as any Error).localizedDescription == "Today's 500 searches are used up.")
  }

  @Test func aManifestErrorCaughtAsAnyErrorListsItsProblems() throws {
    let error = #expect(throws: ManifestError.self) {
      try loadPlan(#"{ "version": 1, "steps": [ { "id": "a", "plugin": "no.such" } ] }"#)
    }
    let caught: any Error = try #require(error)
    #expect(caught.localizedDescription == error?.description)
    #expect(caught.localizedDescription.contains("no.such"))
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

  private static var castRegistry: PluginRegistry {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "page.make") { _ in NotesPage(title: "notes") }
    registry.register(kind: "store.open") { _ in DiskStore() }
    registry.register(kind: "store.base") { _ in BaseStore() }
    return registry
  }

  private static let castManifest = """
    { "version": 1, "steps": [
      { "id": "page", "plugin": "page.make" }, { "id": "store", "plugin": "store.open" },
      { "id": "base", "plugin": "store.base" } ] }
    """

  @Test func aKeyTypedByAProtocolOrASuperclassOfTheOutputPassesAndReads() async throws {
    let plan = try loadPlan(Self.castManifest, registry: Self.castRegistry)
    let page = OutputKey<any ShownPage>("page")
    let store = OutputKey<BaseStore>("store")
    try plan.check(page)
    try plan.check(OutputKey<any ShownPage & Sendable>("page"))
    try plan.check(OutputKey<any Sendable>("page"))
    try plan.check(store)
    try plan.check(OutputKey<any DataStore>("store"))
    try plan.check(OutputKey<any BaseStore & DataStore>("store"))
    try plan.check(OutputKey<any AnyObject & Sendable>("store"))
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(clock: ManualClock()))
    #expect(session[page]?.title == "notes")
    #expect(session[store] is DiskStore)
  }

  @Test func aKeyTypedByAProtocolOrAClassTheOutputDoesNotCastToIsRefused() throws {
    let plan = try loadPlan(Self.castManifest, registry: Self.castRegistry)
    let unrelated = #expect(throws: LaunchFailure.self) {
      try plan.check(OutputKey<any DataStore>("page"))
    }
    #expect(unrelated?.kind == .wrongOutputType)
    #expect(
      unrelated?.message
        == "OutputKey<DataStore>(\"page\") does not match the plan: 'page' (page.make) outputs NotesPage, not DataStore."
    )
    // A base class's output is not a subclass, nor a class-bound composition it lacks.
    #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<DiskStore>("base")) }
    #expect(throws: LaunchFailure.self) {
      try plan.check(OutputKey<any BaseStore & DataStore>("base"))
    }
    #expect(throws: LaunchFailure.self) {
      try plan.check(OutputKey<any AnyObject & Sendable>("page"))
    }
    #expect(throws: LaunchFailure.self) {
      try plan.check(OutputKey<any ShownPage & DataStore>("page"))
    }
  }

  @Test func typeCastTellsFromTheTypesAloneWhatAValueCastsTo() {
    #expect(TypeCast.check(NotesPage.self, to: (any ShownPage).self) == .casts)
    #expect(TypeCast.check(DiskStore.self, to: (any BaseStore & DataStore).self) == .casts)
    #expect(TypeCast.check(Int.self, to: Any.self) == .casts)
    #expect(TypeCast.check(Int.self, to: String.self) == .doesNot)
    #expect(TypeCast.check(BaseStore.self, to: DiskStore.self) == .doesNot)
    #expect(TypeCast.check(BaseStore.self, to: (any BaseStore & DataStore).self) == .doesNot)
    #expect(TypeCast.check(NotesPage.self, to: (any AnyObject & Sendable).self) == .doesNot)
    #expect(TypeCast.check(NotesPage.self, to: (any ShownPage & DataStore).self) == .doesNot)
    #expect(TypeCast.check(NotesPage.self, to: (any Hidden).self) == .unknown)
    #expect(TypeCast.check(NotesPage.self, to: (any Shelf<String>).self) == .unknown)
  }

  @Test func aKeyTypedByAProtocolTheCheckCannotLookUpIsRefusedSayingSo() throws {
    let plan = try loadPlan(Self.castManifest, registry: Self.castRegistry)
    for failure in [
      #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<any Hidden>("page")) },
      #expect(throws: LaunchFailure.self) { try plan.check(OutputKey<any Shelf<String>>("page")) },
    ] {
      #expect(failure?.kind == .wrongOutputType)
      #expect(
        failure?.message.contains(
          "outputs NotesPage, and whether that is ") == true)
      #expect(
        failure?.message.hasSuffix(
          "cannot be told before it runs (a private protocol, or one with primary associated types); type the key by NotesPage or by an internal protocol."
        ) == true)
    }
  }
}

/// What a page step hands on, through a protocol the app reads it by (internal: the check
/// looks it up by name).
protocol ShownPage: Sendable {
  var title: String { get }
}

private struct NotesPage: ShownPage, Shelf, Hidden {
  var title: String
  typealias Item = String
}

/// A protocol with a primary associated type.
protocol Shelf<Item>: Sendable {
  associatedtype Item
}

/// A protocol private to this file, which the runtime cannot look up by name.
private protocol Hidden: Sendable {}

protocol DataStore: AnyObject, Sendable {}

class BaseStore: @unchecked Sendable {}

final class DiskStore: BaseStore, DataStore, @unchecked Sendable {}
