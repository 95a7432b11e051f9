import Testing

@testable import LaunchOrchestrator

@Suite("Suggestions")
struct SuggestionsTests {
  @Test(arguments: [
    ("duraton", "duration"),
    ("cuont", "count"),
    ("dependson", "dependsOn"),
    ("Priorty", "priority"),
    ("timout", "timeout"),
  ])
  func suggestsTheNameATypoMeant(typo: String, meant: String) {
    let names = ["duration", "count", "dependsOn", "priority", "timeout", "after"]
    #expect(Suggestions.closest(to: typo, in: names) == meant)
  }

  @Test func suggestsNothingForANameThatIsNoTypo() {
    let names = ["duration", "count", "after"]
    #expect(Suggestions.closest(to: "colour", in: names) == nil)
    #expect(Suggestions.closest(to: "tnuoc", in: names) == nil)
    #expect(Suggestions.closest(to: String(repeating: "count", count: 20), in: names) == nil)
    #expect(Suggestions.didYouMean("zzz", in: names) == "")
  }

  @Test func suggestsNothingForAnEmptyName() {
    #expect(Suggestions.closest(to: "", in: ["a", "b2"]) == nil)
    #expect(Suggestions.didYouMean("", in: ["a"]) == "")
    // An empty step id in 'dependsOn' is not taken for a typo of a one-letter id.
    let problems = diagnostics(
      of: #"""
        { "version": 1, "steps": [
          { "id": "a", "plugin": "noop" }, { "id": "b", "plugin": "noop", "dependsOn": [""] }
        ] }
        """#)
    #expect(problems.count == 1)
    #expect(
      problems.allSatisfy { $0.contains("steps[1].dependsOn[0]") && !$0.contains("Did you mean") },
      "\(problems)")
  }
}
