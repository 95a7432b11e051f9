import LaunchOrchestrator

/// Prints launch events as plain timestamped lines, for pipes, CI logs and files.
struct EventLog {
  let console: Console

  func print(_ event: LaunchEvent) {
    guard let line = Self.line(for: event) else { return }
    console.out("\(TimeText.padded(event.time))  \(line)")
  }

  static func line(for event: LaunchEvent) -> String? {
    switch event.kind {
    case .started(let step, let attempt):
      return attempt == 1 ? "start      \(step)" : "start      \(step) (attempt \(attempt))"
    case .progress(let step, let fraction, let message):
      let percent = fraction.map { " \(Int(($0 * 100).rounded()))%" } ?? ""
      let text = message.map { " \($0)" } ?? ""
      return "progress   \(step)\(percent)\(text)"
    case .log(let step, let message):
      return "log        \(step): \(message)"
    case .succeeded(let step, let usedFallback):
      return usedFallback ? "done       \(step) (with its fallback)" : "done       \(step)"
    case .failed(let step, let error):
      return "FAILED     \(step): \(error)"
    case .timedOut(let step, let timeout):
      return "TIMED OUT  \(step) after \(DurationText.format(timeout))"
    case .retrying(let step, let next, let error, let delay, let fallback):
      let what =
        fallback ? "running its fallback" : "attempt \(next) in \(DurationText.format(delay))"
      return "retry      \(step): \(error); \(what)"
    case .skipped(let step, let reason):
      return "skipped    \(step): \(reason)"
    case .cancelled(let step):
      return "cancelled  \(step)"
    case .milestone(let name):
      return "milestone  \(name)"
    case .routed(let route, let step):
      return "routed     to '\(route)' by \(step)"
    case .finished:
      return nil
    }
  }
}
