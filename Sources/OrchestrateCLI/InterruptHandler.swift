import Dispatch
import Foundation
import LaunchOrchestrator

/// Turns the first SIGINT, SIGTERM or SIGHUP (the terminal closed) into a clean cancellation
/// of the launch; a second one exits at once with 128 plus the signal's number.
final class InterruptHandler {
  /// The signals that cancel a launch.
  static let signals = [SIGINT, SIGTERM, SIGHUP]

  private let sources: [any DispatchSourceSignal]

  /// Starts listening; `onInterrupt` gets the number of the first signal.
  init(onInterrupt: @escaping @Sendable (Int32) -> Void) {
    let interrupted = Locked(false)
    sources = Self.signals.map { signalNumber in
      signal(signalNumber, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
      source.setEventHandler {
        let again = interrupted.withLock { wasInterrupted in
          defer { wasInterrupted = true }
          return wasInterrupted
        }
        if again { exit(ExitCode.signalled(signalNumber).rawValue) }
        onInterrupt(signalNumber)
      }
      source.resume()
      return source
    }
  }

  /// Stops listening. The signals stay ignored: the command is over and the process exits
  /// with its own status moments later, and restoring the default would let a late Ctrl-C
  /// kill it in between, turning a finished launch's status into a death by signal.
  func stop() {
    for source in sources { source.cancel() }
  }
}
