import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A value shared between tasks or threads, only reachable while holding its lock.
///
/// It has `Mutex`'s shape (`withLock`), but is backed by a pthread mutex: on Linux Thread
/// Sanitizer does not see the synchronization of `Synchronization.Mutex` and reports races
/// on correctly locked code, which would make the sanitizer useless for this package.
package final class Locked<State>: @unchecked Sendable {
  // Guards `state`; every access goes through `withLock`.
  private let lock = PlatformLock()
  private var state: State

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
}

#if canImport(Glibc)
  /// An adaptive pthread mutex: it spins briefly before sleeping. The engine's critical
  /// sections last well under a microsecond, and with a plain mutex two threads that meet on
  /// one put a thread to sleep in the kernel and wake it again, which costs more than the
  /// work they guard.
  private final class PlatformLock {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
      mutex = .allocate(capacity: 1)
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
      pthread_mutex_init(mutex, &attributes)
      pthread_mutexattr_destroy(&attributes)
    }

    deinit {
      pthread_mutex_destroy(mutex)
      mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
  }
#else
  private typealias PlatformLock = NSLock
#endif
