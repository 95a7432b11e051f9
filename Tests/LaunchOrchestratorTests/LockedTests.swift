import Foundation
import Testing

@testable import LaunchOrchestrator

@Suite("Locked", .timeLimit(.minutes(10)))
struct LockedTests {
  @Test func countsEveryIncrementFromManyThreads() async {
    let counter = Locked(0)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
      }
    }
    #expect(counter.withLock { $0 } == 80_000)
  }

  @Test func aWaiterWakesOnlyOnceItsConditionHolds() async {
    let value = Locked(0)
    let woke = Locked<Int?>(nil)
    let done = Locked(false)
    let waiter = Thread {
      let seen = value.withLock(when: { $0 >= 3 }) { $0 }
      woke.withLock { $0 = seen }
      done.withLock { $0 = true }
    }
    waiter.start()
    for step in 1...3 {
      try? await Task.sleep(for: .milliseconds(5))
      // Signalled before the condition holds, the waiter must go back to waiting.
      #expect(woke.withLock { $0 } == nil)
      value.withLock { $0 = step }
      value.signal()
    }
    while !done.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(1)) }
    #expect(woke.withLock { $0 } == 3)
  }
}
