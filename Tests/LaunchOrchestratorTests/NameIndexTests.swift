import Testing

@testable import LaunchOrchestrator

/// The index of names keeps them as a `[String: Int]` would, and a manifest whose ids were
/// made to share the unseeded hash's slots cannot make each lookup walk them all.
@Suite("Name index")
struct NameIndexTests {
  @Test func idsEqualAsSwiftComparesThemAreOneId() {
    var index = NameIndex()
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
    var index = NameIndex()
    index.reserveCapacity(10_000)
    for number in 0..<10_000 { #expect(index.insert("s\(number)", index: number) == nil) }
    #expect(!index.usesDictionary)
    #expect(index["s9999"] == 9_999)
    #expect(index.insert("s42", index: 0) == 42)
  }

  @Test func idsMadeToShareSlotsMoveToTheDictionaryAndAreAllKept() {
    var index = NameIndex()
    index.reserveCapacity(2_000)
    // 2,000 ids take a table of 4,096 slots: these all hash into its first 64.
    var crafted: [String] = []
    var number = 0
    while crafted.count < 300 {
      let id = "step-\(number)"
      if let hash = NameIndex.asciiHash(of: id), Int(truncatingIfNeeded: hash) & 4_095 < 64 {
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

  @Test func aLookupThatKeepsNothingFindsWhatTheSubscriptFinds() {
    var index = NameIndex()
    #expect(index.index(of: "K") == nil)
    #expect(index.insert("K", index: 0) == nil)
    #expect(index.insert("store.init", index: 1) == nil)
    #expect(index.index(of: "store.init") == 1)
    #expect(index.index(of: "store.check") == nil)
    // Not ASCII: compared with each name kept, equal as Swift compares strings.
    #expect(index.index(of: "\u{212A}") == 0)
    #expect(index.index(of: "caf\u{E9}") == nil)
    #expect(!index.usesDictionary)
    #expect(index.insert("cafe\u{301}", index: 2) == nil)
    #expect(index.usesDictionary)
    #expect(index.index(of: "caf\u{E9}") == 2)
    #expect(index.index(of: "\u{212A}") == 0)
    // The subscript, which makes the dictionary when it is asked a name that is not ASCII,
    // agrees on every name, before and after.
    var before = NameIndex()
    _ = before.insert("K", index: 0)
    _ = before.insert("store.init", index: 1)
    for name in ["K", "store.init", "store.check", "\u{212A}", "caf\u{E9}"] {
      let found = before.index(of: name)
      #expect(before[name] == found, "\(name)")
      #expect(index[name] == index.index(of: name), "\(name)")
    }
  }

  @Test func aCopyKeepsItsNamesWhenTheOriginalChanges() {
    var index = NameIndex()
    _ = index.insert("caf\u{E9}", index: 0)
    #expect(index.usesDictionary)
    let copy = index
    #expect(index.insert("K\u{212A}", index: 1) == nil)
    #expect(index.index(of: "K\u{212A}") == 1)
    #expect(copy.index(of: "K\u{212A}") == nil)
    #expect(copy.index(of: "cafe\u{301}") == 0)
  }

  /// A kind registered again replaces the first, in its place; kinds equal as Swift compares
  /// strings are one kind.
  @Test func aKindRegisteredAgainReplacesTheFirst() {
    var registry = PluginRegistry()
    registry.register(kind: "b.second", summary: "first") { _ in }
    registry.register(kind: "a.first", summary: "") { _ in }
    registry.register(kind: "b.second", summary: "again") { _ in }
    registry.register(kind: "caf\u{E9}", summary: "composed") { _ in }
    registry.register(kind: "cafe\u{301}", summary: "decomposed") { _ in }
    #expect(registry.descriptors.map(\.kind) == ["a.first", "b.second", "cafe\u{301}"])
    #expect(registry.descriptor(for: "b.second")?.summary == "again")
    #expect(registry.descriptor(for: "caf\u{E9}")?.summary == "decomposed")
    #expect(registry.descriptor(for: "c.third") == nil)
  }
}
