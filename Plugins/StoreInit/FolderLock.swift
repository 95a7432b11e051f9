import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// An advisory lock on a folder (`flock` on the folder itself, so no lock file is left
/// behind), released when the value goes away.
final class FolderLock {
  private let descriptor: Int32

  /// Opens the folder; does not lock it yet.
  init(_ folder: URL) throws {
    // Not inherited by child processes, which would hold the lock past this launch.
    descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw StepFailure(
        "cannot open the store's folder '\(folder.path)' (\(String(cString: strerror(errno)))); check that it exists and can be read"
      )
    }
  }

  deinit {
    close(descriptor)
  }

  /// Waits for the lock: shared with other shared holders, or exclusive.
  func lock(exclusive: Bool) {
    while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
  }

  /// Lets go of the lock.
  func unlock() {
    flock(descriptor, LOCK_UN)
  }
}
