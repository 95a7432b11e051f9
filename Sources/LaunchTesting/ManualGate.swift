import Dispatch
import LaunchOrchestrator

/// A gate that opens only when a test says so: a step that waits at it is stuck, as a plugin
/// stuck in I/O is, holding its thread and ignoring cancellation, without holding a
/// ``ManualClock`` back.
///
/// ```swift
/// let network = ManualGate()
/// registry.register(kind: "feed") { _ in network.wait() }   // never answers by itself
/// let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
/// await clock.advance(by: .seconds(5))   // the step's timeout fires; it is still stuck
/// network.open()
/// ```
///
/// A step waiting here counts as asleep: ``ManualClock/advance(by:)`` moves on, as it does
/// past a step asleep on the clock, and the gate counts the step again before it lets it go.
public final class ManualGate: Sendable {
  private struct State {
    /// Openings not taken yet: a `wait` with one passes at once.
    var openings = 0
    var waiters: [(wakeUp: DispatchSemaphore, suspension: Participation.Suspension?)] = []
  }

  private let state = Locked(State())

  /// A closed gate.
  public init() {}

  /// Blocks the calling thread until the gate is opened for it; each ``open(_:)`` lets one
  /// waiter through, the earliest first. Ignores cancellation.
  public func wait() {
    let wakeUp = DispatchSemaphore(value: 0)
    let passes = state.withLock { state in
      if state.openings > 0 {
        state.openings -= 1
        return true
      }
      // Leaves the clock's count before the opener can see it waiting.
      state.waiters.append((wakeUp, Participation.suspend(holdingThread: true)))
      return false
    }
    if !passes { wakeUp.wait() }
  }

  /// Lets `count` waiters through, now or when they come.
  public func open(_ count: Int = 1) {
    let released = state.withLock { state in
      let released = Array(state.waiters.prefix(count))
      state.waiters.removeFirst(released.count)
      state.openings += count - released.count
      return released
    }
    for waiter in released {
      // Counted again before it runs, so the clock cannot move in between.
      waiter.suspension?.rejoin()
      waiter.wakeUp.signal()
    }
  }
}
