import Testing

@testable import OrchestrateCLI

@Suite("What a command leaves to the process's exit")
struct ExitKeeperTests {
  private final class Built: Sendable {}

  @Test func theExitsKeeperHoldsTheLastValuesHandedToIt() {
    weak var first: Built?
    weak var second: Built?
    let keeper = ExitKeeper()
    ExitKeeper.$current.withValue(keeper) {
      do {
        let built = Built()
        first = built
        ExitKeeper.keep(built)
      }
      #expect(first != nil)
      do {
        let built = Built()
        second = built
        ExitKeeper.keep((built, 1))
      }
      // A command that loops holds one round's values, not every round's.
      #expect(first == nil)
      #expect(second != nil)
    }
    withExtendedLifetime(keeper) { #expect(second != nil) }
  }

  /// `Orchestrate.run`, in an app's or a test's process, binds no keeper: what a command
  /// builds is freed as it returns.
  @Test func withoutAKeeperNothingIsHeld() {
    weak var value: Built?
    do {
      let built = Built()
      value = built
      ExitKeeper.keep(built)
    }
    #expect(value == nil)
  }
}
