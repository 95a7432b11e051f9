import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The thread the caller runs on, as the engine asks about it.
enum CurrentThread {
  /// Whether this is the main thread.
  ///
  /// On Linux, Foundation's `Thread.isMainThread` makes two system calls (`gettid`, `getpid`)
  /// on every call, a tenth of a no-op step; a thread's answer is kept after its first in a
  /// thread-specific value, which is read without one. Apple's platforms ask
  /// `pthread_main_np`, which makes none.
  static var isMain: Bool {
    #if canImport(Darwin)
      return pthread_main_np() != 0
    #else
      if let known = pthread_getspecific(answerKey) { return Int(bitPattern: known) == main }
      let isMain = Thread.isMainThread
      pthread_setspecific(answerKey, UnsafeRawPointer(bitPattern: isMain ? main : other))
      return isMain
    #endif
  }

  #if !canImport(Darwin)
    /// The values kept: not addresses, so the key needs no destructor.
    private static let main = 2
    private static let other = 1

    /// The key of each thread's answer, made once.
    private static let answerKey: pthread_key_t = {
      var key = pthread_key_t()
      pthread_key_create(&key, nil)
      return key
    }()
  #endif
}
