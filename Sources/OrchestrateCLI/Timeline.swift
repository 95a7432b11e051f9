import Foundation
import LaunchOrchestrator

/// A text Gantt chart of a launch: every step on one shared time axis, failures marked.
enum Timeline {
  /// The chart's lines; `width` is the number of columns of the time axis.
  static func render(_ report: LaunchReport, width: Int = 48) -> [String] {
    let total = max(
      report.duration.seconds, report.steps.compactMap { $0.end?.seconds }.max() ?? 0, 1e-6)
    let nameWidth = report.steps.map(\.id.count).max() ?? 0
    func column(_ duration: Duration) -> Int {
      min(width - 1, Int((duration.seconds / total * Double(width)).rounded(.down)))
    }
    let axis =
      "0s"
      + String(repeating: " ", count: max(1, width - 2 - TimeText.seconds(report.duration).count))
    var lines = [
      "  \(String(repeating: " ", count: nameWidth))  \(axis)\(TimeText.seconds(report.duration))"
    ]
    for step in report.steps {
      let name = step.id.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
      guard let start = step.start, let end = step.end else {
        let reason = step.error.map { ": \($0)" } ?? ""
        lines.append("  \(name)  \(String(repeating: " ", count: width))  skipped\(reason)")
        continue
      }
      // Clamped: a chart must draw whatever times it is given, not trap on them.
      let from = max(0, column(start))
      let to = max(from + 1, min(width, Int((end.seconds / total * Double(width)).rounded(.up))))
      let fill: Character = step.state == .succeeded ? "█" : "▒"
      let bar =
        String(repeating: " ", count: from) + String(repeating: fill, count: to - from)
        + String(repeating: " ", count: width - to)
      lines.append("  \(name)  \(bar)  \(TimeText.seconds(end - start))\(note(for: step))")
    }
    return lines
  }

  private static func note(for step: LaunchReport.Step) -> String {
    var note = ""
    if step.attempts > 1 { note += ", \(step.attempts) attempts" }
    if step.usedFallback { note += ", fallback" }
    switch step.state {
    case .succeeded, .skipped: break
    case .failed: note += "  FAILED: \(step.error ?? "")"
    case .timedOut: note += "  TIMED OUT"
    case .cancelled: note += "  cancelled"
    }
    return note
  }
}
