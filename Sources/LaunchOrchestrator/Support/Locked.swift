import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A value shared between tasks or threads, only reachable while holding its lock; a thread
/// can also wait, holding nothing, until the value meets a condition.
///
/// It has `Mutex`'s shape (`withLock`), but is backed by a pthread mutex: on Linux Thread
/// Sanitizer does not see the synchronization of `Synchronization.Mutex` and reports races
/// on correctly locked code, which would make the sanitizer useless for this package. It is
/// the package's one `@unchecked Sendable` type: everything else shares state through it.
package final class Locked<State>: @unchecked Sendable {
  // Guards `state`; every access goes through `withLock` or `withLock(when:_:)`.
  private let lock = PlatformLock()
  // The lock already makes every access exclusive: the run-time exclusivity check would only
  // repeat it, on every message the engine handles.
  @exclusivity(unchecked) private var state: State

  /// Wraps an initial value.
  package init(_ state: State) {
    self.state = state
  }

  /// Runs `body` with exclusive access to the value.
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&state)
  }

  /// Waits, without holding the lock, until `isReady` holds for the value, then runs `body`
  /// with exclusive access to it. Whoever changes the value so that it may hold calls
  /// ``signal()``.
  package func withLock<Result>(
    when isReady: (State) -> Bool, _ body: (inout State) throws -> Result
  ) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    while !isReady(state) { lock.wait() }
    return try body(&state)
  }

  /// Wakes one thread waiting in ``withLock(when:_:)``, to check its condition again.
  package func signal() {
    lock.signal()
  }
}

#if canImport(Glibc)
  /// An adaptive pthread mutex with a condition: it spins briefly before sleeping. The
  /// engine's critical sections last well under a microsecond, and with a plain mutex two
  /// threads that meet on one put a thread to sleep in the kernel and wake it again, which
  /// costs more than the work they guard.
  private final class PlatformLock {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
      mutex = .allocate(capacity: 1)
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
      pthread_mutex_init(mutex, &attributes)
      pthread_mutexattr_destroy(&attributes)
      condition = .allocate(capacity: 1)
      pthread_cond_init(condition, nil)
    }

    deinit {
      pthread_cond_destroy(condition)
      condition.deallocate()
      pthread_mutex_destroy(mutex)
      mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func wait() { pthread_cond_wait(condition, mutex) }
    func signal() { pthread_cond_signal(condition) }
  }
#else
  /// `NSCondition` is a mutex with a condition variable.
  private typealias PlatformLock = NSCondition
#endif
