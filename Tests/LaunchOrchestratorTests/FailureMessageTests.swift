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

  @Test func foundationsOwnErrorsNameTheFile() async throws {
    let missing = CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "/data/none.json"])
    let text = try #require(await message(for: missing))
    #expect(text.contains("/data/none.json"), "\(text)")
  }
}
