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

  deinit {
    lock.destroy()
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
  ///
  /// A value in its ``Locked``, the mutex and the condition side by side in one allocation:
  /// a launch makes about seven locks, and an object of its own for each, with the mutex and
  /// the condition allocated apart, took four allocations a lock where this takes two.
  private struct PlatformLock {
    /// Where the condition starts, after the mutex.
    private static let conditionOffset =
      (MemoryLayout<pthread_mutex_t>.size + MemoryLayout<pthread_cond_t>.alignment - 1)
      / MemoryLayout<pthread_cond_t>.alignment * MemoryLayout<pthread_cond_t>.alignment

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
      let storage = UnsafeMutableRawPointer.allocate(
        byteCount: Self.conditionOffset + MemoryLayout<pthread_cond_t>.size,
        alignment: max(
          MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<pthread_cond_t>.alignment))
      mutex = storage.bindMemory(to: pthread_mutex_t.self, capacity: 1)
      condition = (storage + Self.conditionOffset).bindMemory(to: pthread_cond_t.self, capacity: 1)
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
      pthread_mutex_init(mutex, &attributes)
      pthread_mutexattr_destroy(&attributes)
      pthread_cond_init(condition, nil)
    }

    /// Destroys the mutex and the condition and frees them: once, by the lock's owner.
    func destroy() {
      pthread_cond_destroy(condition)
      pthread_mutex_destroy(mutex)
      UnsafeMutableRawPointer(mutex).deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func wait() { pthread_cond_wait(condition, mutex) }
    func signal() { pthread_cond_signal(condition) }
  }
#else
  /// `NSCondition` is a mutex with a condition variable.
  private struct PlatformLock {
    private let condition = NSCondition()

    /// Nothing to do: the condition frees itself.
    func destroy() {}

    func lock() { condition.lock() }
    func unlock() { condition.unlock() }
    func wait() { condition.wait() }
    func signal() { condition.signal() }
  }
#endif
