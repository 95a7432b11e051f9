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

  /// Stops listening and restores the default signal behaviour.
  func stop() {
    for source in sources { source.cancel() }
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
  }
}
