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
}
