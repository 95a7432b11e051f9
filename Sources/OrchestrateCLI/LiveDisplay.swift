import Foundation
import LaunchOrchestrator

/// The interactive terminal's view of a running launch: finished events scroll by as lines,
/// and a block at the bottom shows each running step with its elapsed time and progress.
final class LiveDisplay: Sendable {
  /// What the bottom block shows.
  struct State {
    struct Running {
      var started: Duration
      var fraction: Double?
      var message: String?
    }

    var total: Int
    var finished = 0
    var running: [(id: String, step: Running)] = []
    /// Steps between attempts, with what they wait for. Only backoffs are shown: the events
    /// say when a retry is scheduled, not when a ready step is queued for a slot.
    var waiting: [(id: String, reason: String)] = []
    /// Steps served from the cache: their attempts are refreshes, shown as `<id> (refresh)`.
    var cached: Set<String> = []

    /// How the block names the attempts of `step`.
    func label(_ step: String) -> String {
      cached.contains(step) ? "\(step) (refresh)" : step
    }
  }

  private struct Screen {
    var state: State
    var blockHeight = 0
  }

  private let console: Console
  private let started = ContinuousClock.now
  private let screen: Locked<Screen>

  private let splash: SplashPolicy?

  init(console: Console, stepCount: Int, splash: SplashPolicy? = nil) {
    self.console = console
    self.splash = splash
    screen = Locked(Screen(state: State(total: stepCount)))
  }

  /// Records `event`, prints its line above the block and redraws the block.
  func show(_ event: LaunchEvent) {
    screen.withLock { screen in
      switch event.kind {
      case .started(let step, _):
        let step = screen.state.label(step)
        screen.state.running.removeAll { $0.id == step }
        screen.state.waiting.removeAll { $0.id == step }
        screen.state.running.append((step, State.Running(started: event.time)))
      case .progress(let step, let fraction, let message):
        let step = screen.state.label(step)
        if let index = screen.state.running.firstIndex(where: { $0.id == step }) {
          screen.state.running[index].step.fraction =
            fraction ?? screen.state.running[index].step.fraction
          screen.state.running[index].step.message =
            message ?? screen.state.running[index].step.message
        }
      case .succeeded(let step, _), .failed(let step, _), .timedOut(let step, _),
        .cancelled(let step):
        screen.state.running.removeAll { $0.id == step }
        screen.state.waiting.removeAll { $0.id == step }
        screen.state.finished += 1
      case .retrying(let step, let next, _, let delay, let fallback):
        let step = screen.state.label(step)
        screen.state.running.removeAll { $0.id == step }
        if !fallback, delay > .zero {
          screen.state.waiting.append(
            (step, "backoff \(DurationText.format(delay)) before attempt \(next)"))
        }
      case .skipped:
        screen.state.finished += 1
      case .cached(let step):
        screen.state.cached.insert(step)
        screen.state.finished += 1
      case .refreshed(let step), .refreshFailed(let step, _):
        let step = screen.state.label(step)
        screen.state.running.removeAll { $0.id == step }
        screen.state.waiting.removeAll { $0.id == step }
      case .log, .milestone, .routed, .finished:
        break
      }
      let line =
        event.kind.isProgress
        ? nil
        : EventLog.line(for: event, splash: splash).map { "\(TimeText.padded(event.time))  \($0)" }
      redraw(&screen, printing: line)
    }
  }

  /// Redraws the block so elapsed times move while nothing else happens.
  func tick() {
    screen.withLock { redraw(&$0, printing: nil) }
  }

  /// Removes the block, leaving only the scrolled lines.
  func finish() {
    screen.withLock { screen in
      console.writeControlSequences(Self.erase(lines: screen.blockHeight))
      screen.blockHeight = 0
    }
  }

  private func redraw(_ screen: inout Screen, printing line: String?) {
    let now = started.duration(to: .now)
    let block = Self.render(screen.state, now: now)
    var text = Self.erase(lines: screen.blockHeight)
    // The lines carry step ids and messages: escaped, unlike the display's own sequences.
    if let line { text += TerminalText.escaped(line) + "\n" }
    text += block.map { TerminalText.escaped($0) + "\n" }.joined()
    console.writeControlSequences(text)
    screen.blockHeight = block.count
  }

  private static func erase(lines: Int) -> String {
    lines == 0 ? "" : "\u{1B}[\(lines)F\u{1B}[J"
  }

  /// The block's lines for `state` at time `now`: a count, then one line per running step,
  /// then one per step waiting between attempts.
  static func render(_ state: State, now: Duration) -> [String] {
    var lines = [
      "  \(state.finished)/\(state.total) done, \(state.running.count) running  \(TimeText.seconds(now))"
    ]
    let nameWidth = (state.running.map(\.id.count) + state.waiting.map(\.id.count)).max() ?? 0
    for (id, step) in state.running {
      var line =
        "    \(id.padding(toLength: nameWidth, withPad: " ", startingAt: 0))  \(TimeText.padded(now - step.started))"
      if let fraction = step.fraction {
        let filled = Int((fraction * 20).rounded())
        line +=
          "  [\(String(repeating: "█", count: filled))\(String(repeating: "░", count: 20 - filled))] "
          + "\(Int((fraction * 100).rounded()))%"
      }
      if let message = step.message { line += "  \(message)" }
      lines.append(line)
    }
    for (id, reason) in state.waiting {
      lines.append(
        "    \(id.padding(toLength: nameWidth, withPad: " ", startingAt: 0))  waiting: \(reason)")
    }
    return lines
  }
}

extension LaunchEvent.Kind {
  fileprivate var isProgress: Bool {
    if case .progress = self { return true }
    return false
  }
}
