import Dispatch
import Foundation
import LaunchOrchestrator

/// Turns the first SIGINT or SIGTERM into a clean cancellation of the launch; a second one
/// exits at once with status 130.
final class InterruptHandler {
  private let sources: [any DispatchSourceSignal]

  init(onInterrupt: @escaping @Sendable () -> Void) {
    let interrupted = Locked(false)
    sources = [SIGINT, SIGTERM].map { signalNumber in
      signal(signalNumber, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
      source.setEventHandler {
        let again = interrupted.withLock { wasInterrupted in
          defer { wasInterrupted = true }
          return wasInterrupted
        }
        if again { exit(ExitCode.interrupted.rawValue) }
        onInterrupt()
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
