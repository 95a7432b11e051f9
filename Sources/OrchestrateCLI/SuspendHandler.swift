import Foundation
import LaunchOrchestrator
import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Keeps a launch's time honest when the terminal suspends the process: Ctrl-Z (SIGTSTP)
/// pauses the launch, then stops the process; `fg` (SIGCONT) resumes it. A `kill -STOP`,
/// which cannot be caught, is noticed on the continue as a gap in the launch clock's
/// readings, which a heartbeat keeps fresh meanwhile.
final class SuspendHandler: Sendable {
  /// The write end of the listening handler's pipe, for the signal handler, which can reach
  /// only globals; -1 when none listens.
  private static let signalWriteEnd = Atomic<Int32>(-1)

  private let readEnd: Int32
  private let writeEnd: Int32
  private let running = Locked(true)

  /// Starts handling SIGTSTP and SIGCONT for the launch `control` drives.
  init(control: LaunchControl) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      readEnd = -1
      writeEnd = -1
      return
    }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    readEnd = ends[0]
    writeEnd = ends[1]
    Self.signalWriteEnd.store(ends[1], ordering: .sequentiallyConsistent)
    let reader = Thread { [readEnd] in Self.readSignals(from: readEnd, control: control) }
    reader.name = "orchestrate suspend"
    reader.start()
    let heartbeat = Thread { [running] in
      // Readings at least every 50 ms: a gap of half a second is then a stopped process.
      while running.withLock({ $0 }) {
        control.heartbeat()
        usleep(50_000)
      }
    }
    heartbeat.name = "orchestrate heartbeat"
    heartbeat.start()
    signal(SIGTSTP, Self.forwardToPipe)
    signal(SIGCONT, Self.forwardToPipe)
  }

  /// Stops handling: Ctrl-Z stops the process as usual again.
  func stop() {
    running.withLock { $0 = false }
    guard readEnd >= 0 else { return }
    signal(SIGTSTP, SIG_DFL)
    signal(SIGCONT, SIG_DFL)
    var stopByte: UInt8 = 0
    _ = write(writeEnd, &stopByte, 1)
  }

  private static let forwardToPipe: @convention(c) (Int32) -> Void = { signalNumber in
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(signalWriteEnd.load(ordering: .relaxed), &byte, 1)
    errno = savedErrno
  }

  private static func readSignals(from readEnd: Int32, control: LaunchControl) {
    while true {
      var byte: UInt8 = 0
      let count = read(readEnd, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      guard count == 1, byte != 0 else { return }
      switch Int32(byte) {
      case SIGTSTP:
        control.pause()
        // Stops for real, as the shell expects. SIGSTOP, not SIGTSTP again: a process whose
        // group has no shell left (started in the background of a script) ignores SIGTSTP.
        kill(getpid(), SIGSTOP)
      case SIGCONT:
        control.resume()
      default:
        break
      }
    }
  }
}
