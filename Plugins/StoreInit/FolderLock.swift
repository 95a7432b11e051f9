import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// An advisory lock on a folder (`flock` on the folder itself, so no lock file is left
/// behind), held only while a body runs.
enum FolderLock {
  /// Runs `body` holding the lock: shared with other shared holders, or exclusive. The lock is
  /// let go when `body` returns or throws, and not before (a lock object could be freed after
  /// its last use, before the work it guards).
  static func holding<T>(_ folder: URL, exclusive: Bool, _ body: () throws -> T) throws -> T {
    // Not inherited by child processes, which would hold the lock past this launch.
    let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw StepFailure(
        "cannot open the store's folder '\(folder.path)' (\(String(cString: strerror(errno)))); check that it exists and can be read"
      )
    }
    // Closing the folder lets go of the lock.
    defer { close(descriptor) }
    while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
    return try body()
  }
}
