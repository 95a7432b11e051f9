import Foundation
import LaunchOrchestrator

/// The interactive terminal's view of a running launch: finished events scroll by as lines,
/// and a block at the bottom shows each running step with its elapsed time and progress, and
/// each step that could start but waits, with what for.
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
    var pending: PendingSteps
    /// Steps served from the cache: their attempts are refreshes, shown as `<id> (refresh)`.
    var cached: Set<String> = []

    /// The state before any event of a launch of `plan` with at most `maxConcurrency` steps
    /// at once (`nil`: no limit).
    init(plan: LaunchPlan, maxConcurrency: Int?) {
      total = plan.steps.count
      pending = PendingSteps(plan: plan, maxConcurrency: maxConcurrency)
    }

    /// Takes in `event`.
    mutating func apply(_ event: LaunchEvent) {
      pending.apply(event)
      switch event.kind {
      case .started(let step, _):
        let step = label(step)
        running.removeAll { $0.id == step }
        running.append((step, Running(started: event.time)))
      case .progress(let step, let fraction, let message):
        let step = label(step)
        if let index = running.firstIndex(where: { $0.id == step }) {
          running[index].step.fraction = fraction ?? running[index].step.fraction
          running[index].step.message = message ?? running[index].step.message
        }
      case .succeeded(let step, _), .failed(let step, _), .timedOut(let step, _),
        .cancelled(let step):
        running.removeAll { $0.id == step }
        finished += 1
      case .retrying(let step, _, _, _, _):
        let step = label(step)
        running.removeAll { $0.id == step }
      case .skipped, .reused:
        finished += 1
      case .cached(let step):
        cached.insert(step)
        finished += 1
      case .refreshed(let step), .refreshFailed(let step, _):
        let step = label(step)
        running.removeAll { $0.id == step }
      case .log, .milestone, .routed, .finished, .paused, .resumed, .signalled:
        break
      }
    }

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

  /// A display of a launch of `plan` with at most `maxConcurrency` steps at once (`nil`: no
  /// limit), the limit the engine runs it with.
  init(console: Console, plan: LaunchPlan, maxConcurrency: Int?) {
    self.console = console
    splash = plan.manifest.splash
    screen = Locked(Screen(state: State(plan: plan, maxConcurrency: maxConcurrency)))
  }

  /// Records `event`, prints its line above the block and redraws the block.
  func show(_ event: LaunchEvent) {
    screen.withLock { screen in
      screen.state.apply(event)
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
    // Each line of the block within the terminal's width: the erase above moves up one row a
    // line, and a line that wrapped would leave its first rows behind at every redraw.
    text += Self.fitted(block.map { TerminalText.escaped($0) }, columns: console.columns)
      .map { $0 + "\n" }.joined()
    console.writeControlSequences(text)
    screen.blockHeight = block.count
  }

  /// `lines`, each cut to fit in `columns` (with an ellipsis), one column spare: some
  /// terminals wrap a line that fills the last one. As they are when the width is unknown.
  static func fitted(_ lines: [String], columns: Int?) -> [String] {
    guard let columns, columns > 2 else { return lines }
    return lines.map { line in
      guard TerminalText.columns(of: line) >= columns else { return line }
      // Measured as tables are (a CJK character takes two columns), a character at a time.
      var cut = ""
      var used = 0
      for character in line {
        let width = TerminalText.columns(of: String(character))
        guard used + width <= columns - 2 else { break }
        cut.append(character)
        used += width
      }
      return cut + "…"
    }
  }

  private static func erase(lines: Int) -> String {
    lines == 0 ? "" : "\u{1B}[\(lines)F\u{1B}[J"
  }

  /// The block's lines for `state` at time `now`: a count, then one line per running step,
  /// then one per step that could start but waits (for a slot, its deferral, its delay or a
  /// retry's backoff), the first few in manifest order and a count of the rest.
  static func render(_ state: State, now: Duration) -> [String] {
    var lines = [
      "  \(state.finished)/\(state.total) done, \(state.running.count) running  \(TimeText.seconds(now))"
    ]
    let waiting = state.pending.waiting(at: now, holders: state.running.map(\.id))
    let nameWidth =
      (state.running.map { TerminalText.columns(of: $0.id) }
      + waiting.lines.map { TerminalText.columns(of: $0.id) }).max() ?? 0
    for (id, step) in state.running {
      // The display's clock starts a moment after the launch's: a step that has just started
      // shows no time rather than a negative one.
      let elapsed = max(.zero, now - step.started)
      var line =
        "    \(TerminalText.padded(id, to: nameWidth))  \(TimeText.padded(elapsed))"
      if let fraction = step.fraction {
        let filled = Int((fraction * 20).rounded())
        line +=
          "  [\(String(repeating: "█", count: filled))\(String(repeating: "░", count: 20 - filled))] "
          + "\(Int((fraction * 100).rounded()))%"
      }
      if let message = step.message { line += "  \(message)" }
      lines.append(line)
    }
    for (id, reason) in waiting.lines {
      lines.append(
        "    \(TerminalText.padded(id, to: nameWidth))  waiting: \(reason)")
    }
    if waiting.more > 0 { lines.append("    and \(waiting.more) more waiting") }
    return lines
  }
}

extension LaunchEvent.Kind {
  fileprivate var isProgress: Bool {
    if case .progress = self { return true }
    return false
  }
}
