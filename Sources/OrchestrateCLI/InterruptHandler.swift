import Dispatch
import Foundation
import Synchronization

/// Turns the first SIGINT or SIGTERM into a clean cancellation of the launch; a second one
/// exits at once with status 130.
final class InterruptHandler {
  private let sources: [any DispatchSourceSignal]

  init(onInterrupt: @escaping @Sendable () -> Void) {
    let interrupted = InterruptFlag()
    sources = [SIGINT, SIGTERM].map { signalNumber in
      signal(signalNumber, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
      source.setEventHandler {
        if interrupted.setAndReturnPrevious() { exit(ExitCode.interrupted.rawValue) }
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

private final class InterruptFlag: Sendable {
  private let flag = Mutex(false)

  func setAndReturnPrevious() -> Bool {
    flag.withLock { value in
      defer { value = true }
      return value
    }
  }
}
