import Testing

@testable import LaunchOrchestrator

/// The index of step ids keeps them as a `[String: Int]` would, and a manifest whose ids were
/// made to share the unseeded hash's slots cannot make each lookup walk them all.
@Suite("Step id index")
struct StepIDIndexTests {
  @Test func idsEqualAsSwiftComparesThemAreOneId() {
    var index = StepIDIndex()
    #expect(index.insert("K", index: 0) == nil)
    #expect(index.insert("load", index: 1) == nil)
    #expect(!index.usesDictionary)
    // The Kelvin sign equals "K" in Swift: the first index stays.
    #expect(index.insert("\u{212A}", index: 2) == 0)
    #expect(index.usesDictionary)
    #expect(index["K"] == 0)
    #expect(index["load"] == 1)
    #expect(index["e\u{301}"] == nil)
    #expect(index.ids == ["K", "load"])
  }

  @Test func plainIdsStayInTheHashTable() {
    var index = StepIDIndex()
    index.reserveCapacity(10_000)
    for number in 0..<10_000 { #expect(index.insert("s\(number)", index: number) == nil) }
    #expect(!index.usesDictionary)
    #expect(index["s9999"] == 9_999)
    #expect(index.insert("s42", index: 0) == 42)
  }

  @Test func idsMadeToShareSlotsMoveToTheDictionaryAndAreAllKept() {
    var index = StepIDIndex()
    index.reserveCapacity(2_000)
    // 2,000 ids take a table of 4,096 slots: these all hash into its first 64.
    var crafted: [String] = []
    var number = 0
    while crafted.count < 300 {
      let id = "step-\(number)"
      if let hash = StepIDIndex.asciiHash(of: id), Int(truncatingIfNeeded: hash) & 4_095 < 64 {
        crafted.append(id)
      }
      number += 1
    }
    for (position, id) in crafted.enumerated() {
      #expect(index.insert(id, index: position) == nil)
    }
    #expect(index.usesDictionary)
    for (position, id) in crafted.enumerated() {
      #expect(index[id] == position)
      #expect(index.insert(id, index: -1) == position)
    }
    #expect(index.ids == crafted)
  }
}
