import Foundation
import LaunchOrchestrator

/// A text Gantt chart of a launch: every step on one shared time axis, its waits shaded (`·`),
/// failures marked, the pauses (`‖`, where each began: the axis is active time), and for a
/// manifest with a `splash`, the splash (`░`) and skeleton (`▓`) the app would show.
enum Timeline {
  /// The chart's lines; `width` is the number of columns of the time axis.
  /// A cached step is a mark (`◆`) where it was served, its refresh a row of its own below it.
  static func render(_ report: LaunchReport, width: Int = 48) -> [String] {
    // The report's own list when no step has a refresh row: a new one copies every step.
    var rows = report.steps
    if rows.contains(where: { $0.refreshBar != nil }) {
      rows = []
      rows.reserveCapacity(report.steps.count)
      for step in report.steps {
        rows.append(step)
        if let refresh = step.refreshBar { rows.append(refresh) }
      }
    }
    let splashEnd = report.splash.flatMap { $0.contentAt ?? $0.skeletonFrom }
    let total = max(
      report.duration.seconds, rows.compactMap { $0.end?.seconds }.max() ?? 0,
      splashEnd?.seconds ?? 0, 1e-6)
    let nameWidth = max(
      rows.map(\.id.count).max() ?? 0, report.splash == nil ? 0 : splashRow.count,
      report.pauses.isEmpty ? 0 : pausedRow.count)
    func column(_ duration: Duration) -> Int {
      min(width - 1, Int((duration.seconds / total * Double(width)).rounded(.down)))
    }
    // The axis spans the launch, or the splash when the app would show it for longer.
    let span = splashEnd.map { max($0, report.duration) } ?? report.duration
    let axis =
      "0s" + String(repeating: " ", count: max(1, width - 2 - TimeText.seconds(span).count))
    var lines = ["  \(String(repeating: " ", count: nameWidth))  \(axis)\(TimeText.seconds(span))"]
    lines.reserveCapacity(rows.count + 3)
    // Each row's cells are marked in one array and written as UTF-8 into one buffer, both
    // reused: encoding every cell's scalar, 48 a row, cost more than the rest of the chart.
    var cells = [Cell](repeating: .blank, count: width)
    var bar: [UInt8] = []
    bar.reserveCapacity(width * 3)
    func put(_ glyph: Unicode.Scalar) {
      for byte in glyph.utf8 { bar.append(byte) }
    }
    for step in rows {
      let name = padded(step.id, to: nameWidth)
      guard let start = step.start, let end = step.end else {
        let reason = step.error.map { ": \($0)" } ?? ""
        lines.append("  \(name)  \(String(repeating: " ", count: width))  skipped\(reason)")
        continue
      }
      // Clamped: a chart must draw whatever times it is given, not trap on them.
      func columns(_ from: Duration, _ to: Duration) -> Range<Int> {
        let first = min(width - 1, max(0, column(from)))
        let last = max(
          first + 1, min(width, Int((to.seconds / total * Double(width)).rounded(.up))))
        return first..<last
      }
      for index in cells.indices { cells[index] = .blank }
      // Waits first, so a column a wait shares with work shows the work.
      for wait in step.waits {
        let waitFrom = max(0, column(wait.start))
        for cell in waitFrom..<max(waitFrom, min(width, column(wait.end))) { cells[cell] = .wait }
      }
      for span in step.work { for cell in columns(span.start, span.end) { cells[cell] = .work } }
      if step.state == .cached { cells[columns(start, end).lowerBound] = .served }
      let fill: Unicode.Scalar = step.state == .succeeded ? "█" : "▒"
      bar.removeAll(keepingCapacity: true)
      for cell in cells {
        switch cell {
        case .blank: put(" ")
        case .wait: put("·")
        case .work: put(fill)
        case .served: put("◆")
        }
      }
      lines.append(
        "  \(name)  \(String(decoding: bar, as: UTF8.self))  \(TimeText.seconds(end - start))\(note(for: step))"
      )
    }
    if !report.pauses.isEmpty {
      // Times are active time, in which a pause takes none: a mark where each began.
      var cells = [Character](repeating: " ", count: width)
      for pause in report.pauses { cells[max(0, column(pause.at))] = "‖" }
      let list = report.pauses.map {
        "\(TimeText.seconds($0.duration)) at \(TimeText.seconds($0.at))"
      }
      lines.append(
        "  \(padded(pausedRow, to: nameWidth))  \(String(cells))  paused \(list.joined(separator: ", "))"
      )
    }
    if let splash = report.splash {
      let name = splashRow.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
      let skeletonFrom = splash.skeletonFrom.map(column) ?? width
      let contentAt = splash.contentAt.map { min(width, column($0) + 1) } ?? skeletonFrom
      let bar =
        String(repeating: "░", count: min(skeletonFrom, contentAt))
        + String(repeating: "▓", count: max(0, contentAt - skeletonFrom))
      var note = splash.contentAt.map { "content at \(TimeText.seconds($0))" } ?? "no content"
      if let from = splash.skeletonFrom { note += ", skeleton from \(TimeText.seconds(from))" }
      lines.append(
        "  \(name)  \(bar.padding(toLength: width, withPad: " ", startingAt: 0))  \(note)")
    }
    return lines
  }

  private static let splashRow = "(splash)"
  private static let pausedRow = "(paused)"

  /// `text.padding(toLength: length, withPad: " ", startingAt: 0)`, which counts UTF-16 code
  /// units, without a trip through NSString for each row when there is nothing to cut.
  /// What a column of a step's row shows.
  private enum Cell {
    case blank, wait, work, served
  }

  private static func padded(_ text: String, to length: Int) -> String {
    let count = text.utf16.count
    guard count <= length else {
      return text.padding(toLength: length, withPad: " ", startingAt: 0)
    }
    return text + String(repeating: " ", count: length - count)
  }

  private static func note(for step: LaunchReport.Step) -> String {
    var note = ""
    if step.attempts > 1 { note += ", \(step.attempts) attempts" }
    if step.usedFallback { note += ", fallback" }
    switch step.state {
    case .succeeded, .skipped: break
    case .cached: note += "  cached"
    case .failed: note += "  FAILED: \(step.error ?? "")"
    case .timedOut: note += "  TIMED OUT"
    case .cancelled: note += "  cancelled"
    }
    return note
  }
}
