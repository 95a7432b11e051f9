import Foundation
import Testing

@testable import LaunchOrchestrator

/// The developer's text for an error a plugin throws: what the report's step `error` and
/// `LaunchFailure.message` say.
@Suite("Failure messages")
struct FailureMessageTests {
  private struct OfflineError: Error {
    var host: String
  }

  private struct FeedCacheError: UserFacingError {
    var path: String
    var userMessage: String { "Your saved feed could not be read." }
  }

  private struct QuotaError: LocalizedError {
    var errorDescription: String? { "the daily quota is used up" }
  }

  /// Words for users, and a description of its own for developers.
  private struct LimitError: UserFacingError {
    var userMessage: String { "You've reached today's limit." }
    var errorDescription: String? { "the daily quota of 500 searches is used up" }
  }

  /// The report's error for a step whose plugin throws `error`.
  private func message(for error: any Error & Sendable) async throws -> String? {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "throws") { _ in throw error }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [{ "id": "feed", "plugin": "throws" }] }"#, registry: registry)
    let session = await LaunchSession()
    let report = await session.run(plan, on: LaunchEngine())
    #expect(await session.failure?.message.contains(report.step("feed")?.error ?? "-") == true)
    return report.step("feed")?.error
  }

  @Test func aPlainErrorIsWrittenWithItsTypeAndFields() async throws {
    let text = try #require(await message(for: OfflineError(host: "api.example.com")))
    #expect(text.contains("OfflineError(host: \"api.example.com\")"), "\(text)")
    #expect(!text.contains("could not be completed"))
  }

  @Test func anErrorForUsersKeepsItsDetailsForDevelopers() async throws {
    let text = try #require(await message(for: FeedCacheError(path: "/data/feed.json")))
    #expect(text.contains("/data/feed.json"), "\(text)")
    #expect(text.contains("Your saved feed could not be read."), "\(text)")
  }

  @Test func aLocalizedErrorIsWrittenWithItsDescription() async throws {
    let text = try #require(await message(for: QuotaError()))
    #expect(text.contains("the daily quota is used up"), "\(text)")
  }

  /// A `UserFacingError` is a `LocalizedError` whose description is its words for users:
  /// the report keeps the value's fields beside them, or the description it gave itself.
  @Test func anErrorForUsersWithADescriptionOfItsOwnIsWrittenWithIt() async throws {
    let text = try #require(await message(for: LimitError()))
    #expect(text == "the daily quota of 500 searches is used up")
  }

  @Test func foundationsOwnErrorsNameTheFile() async throws {
    let missing = CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "/data/none.json"])
    let text = try #require(await message(for: missing))
    #expect(text.contains("/data/none.json"), "\(text)")
  }
}
