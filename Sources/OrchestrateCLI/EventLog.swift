import LaunchOrchestrator

/// Prints launch events as plain timestamped lines, for pipes, CI logs and files.
struct EventLog {
  let console: Console
  /// The manifest's splash, whose moments the dismiss milestone's line adds.
  var splash: SplashPolicy?

  func print(_ event: LaunchEvent) {
    guard let line = Self.line(for: event, splash: splash) else { return }
    console.out("\(TimeText.padded(event.time))  \(line)")
  }

  /// The event's line; the splash's dismiss milestone also says when the app's splash (and
  /// skeleton) would give way to the content.
  static func line(for event: LaunchEvent, splash: SplashPolicy? = nil) -> String? {
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
    case .cached(let step):
      return "cached     \(step) (refreshing behind)"
    case .refreshed(let step):
      return "refreshed  \(step)"
    case .refreshFailed(let step, let error):
      return "warning    \(step): the refresh did not succeed (\(error)); the cached output stays"
    case .milestone(let name):
      guard let splash, splash.dismissOn == name else { return "milestone  \(name)" }
      let timing = SplashTiming(policy: splash, readyAt: event.time, endedAt: event.time)
      let skeleton = timing.skeletonFrom.map { ", skeleton from \(TimeText.seconds($0))" } ?? ""
      return
        "milestone  \(name) (splash: content at \(TimeText.seconds(timing.contentAt ?? event.time))\(skeleton))"
    case .routed(let route, let step):
      return "routed     to '\(route)' by \(step)"
    case .reused(let step):
      return "reused     \(step) (it succeeded in the previous run)"
    case .paused:
      return "paused"
    case .resumed(let pausedFor):
      return "resumed    after \(DurationText.format(pausedFor)) paused"
    case .signalled(let name):
      return "signal     \(name)"
    case .finished:
      return nil
    }
  }
}
