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
}
