import Testing

@testable import LaunchOrchestrator

@Suite("Articles in messages")
struct EnglishTests {
  @Test(arguments: [
    ("AppSettings", "an AppSettings"), ("StoreHandle", "a StoreHandle"), ("Int", "an Int"),
    ("Token", "a Token"), ("UserSession", "a UserSession"), ("UpdateInfo", "an UpdateInfo"),
    ("URL", "a URL"), ("SQLiteStore", "an SQLiteStore"), ("HTTPClient", "an HTTPClient"),
    ("Optional<Int>", "an Optional<Int>"), ("Array<String>", "an Array<String>"),
    ("EnrichmentQueue", "an EnrichmentQueue"), ("EuropeanStore", "a EuropeanStore"),
  ])
  func choosesTheArticleByTheSoundOfTheName(name: String, expected: String) {
    #expect(English.withArticle(name) == expected)
  }

  @Test func aStepReadingAnUndeclaredValueSaysWhatItNeededWithTheRightArticle() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "settings.input") { context in try context.input(AppSettings.self) }
    registry.register(kind: "settings.app") { context in
      try context.environment(AppSettings.self)
    }
    let plan = try loadPlan(
      """
      { "version": 1, "defaults": { "onFailure": "continue" }, "steps": [
        { "id": "input", "plugin": "settings.input" },
        { "id": "app", "plugin": "settings.app" }
      ] }
      """, registry: registry)
    let report = await LaunchEngine().run(plan)
    #expect(
      report.step("input")?.error
        == "step 'input' needs an AppSettings from a dependency, and none produced one")
    #expect(
      report.step("app")?.error
        == "step 'app' needs an AppSettings from the app's launch environment, and none was provided"
    )
  }
}

/// A value type whose name takes "an".
private struct AppSettings: Sendable {}
