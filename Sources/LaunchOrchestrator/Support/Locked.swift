import Foundation

/// A value shared between tasks or threads, only reachable while holding its lock.
///
/// It has `Mutex`'s shape (`withLock`), but is backed by a pthread mutex: on Linux Thread
/// Sanitizer does not see the synchronization of `Synchronization.Mutex` and reports races
/// on correctly locked code, which would make the sanitizer useless for this package.
public final class Locked<State>: @unchecked Sendable {
  // Guards `state`; every access goes through `withLock`.
  private let lock = NSLock()
  private var state: State

  /// Wraps an initial value.
  public init(_ state: State) {
    self.state = state
  }

  /// Runs `body` with exclusive access to the value.
  public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&state)
  }
}
