import Testing

@testable import LaunchOrchestrator

/// A declaration keeps the members most steps leave out apart from the rest: it is still a
/// value, each copy its own.
@Suite("Step declaration")
struct StepDeclarationTests {
  @Test func aCopyKeepsItsMembersWhenTheOriginalChanges() {
    var original = StepDeclaration(id: "a", plugin: "noop", timeout: .seconds(2))
    let copy = original
    original.timeout = .seconds(5)
    original.after = ["b"]
    original.waitFor = ["ready"]
    original.delay = .milliseconds(10)
    #expect(copy.timeout == .seconds(2))
    #expect(copy.after.isEmpty)
    #expect(copy.waitFor.isEmpty)
    #expect(copy.delay == .zero)
    #expect(original.timeout == .seconds(5))
    #expect(original.after == ["b"])
    #expect(original.waitFor == ["ready"])
    #expect(original.delay == .milliseconds(10))
  }

  @Test func membersSetBackToTheirDefaultsReadAsDefaults() {
    var declaration = StepDeclaration(id: "a", plugin: "noop")
    #expect(declaration.after.isEmpty && declaration.timeout == nil && declaration.delay == .zero)
    declaration.deferUntil = "interactive"
    declaration.isolation = .main
    declaration.expectedDuration = .milliseconds(5)
    declaration.deferUntil = nil
    declaration.expectedDuration = nil
    #expect(declaration.deferUntil == nil)
    #expect(declaration.isolation == .main)
    #expect(declaration.expectedDuration == nil)
    #expect(declaration.once == nil && declaration.when == nil && declaration.cache == nil)
  }

  /// The first change after a copy gives the changed declaration a box of its own: every
  /// member is carried into it, not only the one changed.
  @Test func theFirstChangeAfterACopyKeepsEveryOtherMember() {
    var declaration = StepDeclaration(id: "a", plugin: "noop")
    declaration.after = ["b"]
    declaration.timeout = .seconds(3)
    declaration.retry = RetryPolicy(attempts: 2, backoff: .milliseconds(100))
    declaration.onFailure = .continue
    declaration.fallback = FallbackDeclaration(plugin: "other")
    declaration.delay = .milliseconds(7)
    declaration.deferUntil = "interactive"
    declaration.isolation = .main
    declaration.expectedDuration = .milliseconds(40)
    declaration.cache = CachePolicy(maxAge: .seconds(60))
    declaration.waitFor = ["ready"]
    declaration.when = StepCondition(firstLaunch: true)
    declaration.once = .perInstall
    let copy = declaration
    declaration.id = "changed"
    declaration.timeout = .seconds(9)
    for kept in [declaration, copy] {
      #expect(kept.after == ["b"])
      #expect(kept.retry == RetryPolicy(attempts: 2, backoff: .milliseconds(100)))
      #expect(kept.onFailure == .continue)
      #expect(kept.fallback?.plugin == "other")
      #expect(kept.delay == .milliseconds(7))
      #expect(kept.deferUntil == "interactive")
      #expect(kept.isolation == .main)
      #expect(kept.expectedDuration == .milliseconds(40))
      #expect(kept.cache == CachePolicy(maxAge: .seconds(60)))
      #expect(kept.waitFor == ["ready"])
      #expect(kept.when == StepCondition(firstLaunch: true))
      #expect(kept.once == .perInstall)
    }
    #expect(declaration.timeout == .seconds(9))
    #expect(copy.timeout == .seconds(3))
  }
}
