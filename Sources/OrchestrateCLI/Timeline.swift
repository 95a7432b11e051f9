import Foundation
import LaunchOrchestrator

/// A text Gantt chart of a launch: every step on one shared time axis, its waits shaded (`·`),
/// failures marked, the pauses (`‖`, where each began: the axis is active time), and for a
/// manifest with a `splash`, the splash (`░`) and skeleton (`▓`) the app would show.
enum Timeline {
  /// The chart's lines; `width` is the number of columns of the time axis.
  /// A cached step is a mark (`◆`) where it was served, its refresh a row of its own below it.
  static func render(_ report: LaunchReport, width: Int = 48) -> [String] {
    var lines: [String] = []
    lines.reserveCapacity(report.steps.count + 3)
    draw(report, width: width) { line, _ in lines.append(String(decoding: line, as: UTF8.self)) }
    return lines
  }

  /// Adds the chart's lines to `text`.
  static func write(_ report: LaunchReport, width: Int = 48, to text: inout ConsoleText) {
    text.reserveCapacity((report.steps.count + 3) * (width * 3 + 32))
    draw(report, width: width) { line, isKnownSafe in
      text.add(line: line, isKnownSafe: isKnownSafe)
    }
  }

  /// Makes each line as UTF-8 in one reused buffer and hands it to `emit`, with whether it
  /// is known to hold nothing to escape for a terminal (printable ASCII and the chart's own
  /// glyphs): a `String` a row (and the strings interpolated into it) cost more than the
  /// chart itself at 10,000 steps.
  private static func draw(
    _ report: LaunchReport, width: Int, emit: (UnsafeBufferPointer<UInt8>, Bool) -> Void
  ) {
    // The report's own list when no step has a refresh row: a new one copies every step.
    var rows = report.steps
    // Rows are read in place, by index, here and below: iterating (or a key path a row)
    // would copy each step, a retain a field; only the rows appended to a new list are copied.
    if report.steps.indices.contains(where: { report.steps[$0].refresh != nil }) {
      rows = []
      rows.reserveCapacity(report.steps.count)
      for step in report.steps {
        rows.append(step)
        if let refresh = step.refreshBar { rows.append(refresh) }
      }
    }
    let splashEnd = report.splash.flatMap { $0.contentAt ?? $0.skeletonFrom }
    var latestEnd = 0.0
    var widestName = 0
    // Each name measured once, for the widest and for its padding, with whether it is
    // printable ASCII: a row whose texts all are is not looked at again for escaping.
    var names: [(columns: Int, isPrintableASCII: Bool)] = []
    names.reserveCapacity(rows.count)
    for index in rows.indices {
      if let end = rows[index].end { latestEnd = max(latestEnd, end.seconds) }
      names.append(TerminalText.measured(rows[index].id))
      widestName = max(widestName, names[index].columns)
    }
    let total = max(report.duration.seconds, latestEnd, splashEnd?.seconds ?? 0, 1e-6)
    // Names are measured and padded in one unit, the terminal's columns as they are printed
    // (escaped, wide characters two): UTF-16 units put CJK names and escaped ids out of line.
    let nameWidth = max(
      widestName, report.splash == nil ? 0 : splashRow.count,
      report.pauses.isEmpty ? 0 : pausedRow.count)
    func column(_ duration: Duration) -> Int {
      min(width - 1, Int((duration.seconds / total * Double(width)).rounded(.down)))
    }
    var line: [UInt8] = []
    line.reserveCapacity(nameWidth + width * 3 + 64)
    func emitLine(_ text: String) {
      var text = text
      text.withUTF8 { emit($0, false) }
    }
    // The axis spans the launch, or the splash when the app would show it for longer.
    let span = splashEnd.map { max($0, report.duration) } ?? report.duration
    let axis =
      "0s" + String(repeating: " ", count: max(1, width - 2 - TimeText.seconds(span).count))
    emitLine("  \(String(repeating: " ", count: nameWidth))  \(axis)\(TimeText.seconds(span))")
    // Each row's cells are marked in one reused array, and the row written into one reused
    // buffer, a run of equal cells at a time, copied from a row of that glyph made once.
    var cells = [Cell](repeating: .blank, count: width)
    func glyphs(_ glyph: Unicode.Scalar) -> [UInt8] {
      Array(String(repeating: String(glyph), count: width).utf8)
    }
    let blankRow = glyphs(" ")
    let waitRow = glyphs("·")
    let servedRow = glyphs("◆")
    let succeededRow = glyphs("█")
    let unsucceededRow = glyphs("▒")
    func put(_ text: String) { line.append(contentsOf: text.utf8) }
    func putSpaces(_ count: Int) {
      line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
    }
    // A row is drawn from the step in place: iterating would copy each, a retain a field.
    func drawRow(of step: LaunchReport.Step, name: (columns: Int, isPrintableASCII: Bool)) {
      line.removeAll(keepingCapacity: true)
      // Its id, and its error when it has one, are the only texts of a row not the chart's.
      let isKnownSafe = name.isPrintableASCII && step.error == nil
      putSpaces(2)
      put(step.id)
      putSpaces(max(0, nameWidth - name.columns) + 2)
      guard let start = step.start, let end = step.end else {
        putSpaces(width)
        put("  skipped")
        if let error = step.error {
          put(": ")
          put(error)
        }
        line.withUnsafeBufferPointer { emit($0, isKnownSafe) }
        return
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
      var first = 0
      while first < width {
        let cell = cells[first]
        var end = first + 1
        while end < width, cells[end] == cell { end += 1 }
        let run: [UInt8]
        switch cell {
        case .blank: run = blankRow
        case .wait: run = waitRow
        case .work: run = step.state == .succeeded ? succeededRow : unsucceededRow
        case .served: run = servedRow
        }
        // Every glyph of a run's row is as long: its bytes for `end - first` of them.
        let glyphLength = run.count / width
        line.append(contentsOf: run[..<((end - first) * glyphLength)])
        first = end
      }
      putSpaces(2)
      TimeText.appendSeconds(end - start, to: &line)
      put(note(for: step))
      line.withUnsafeBufferPointer { emit($0, isKnownSafe) }
    }
    for index in rows.indices { drawRow(of: rows[index], name: names[index]) }
    if !report.pauses.isEmpty {
      // Times are active time, in which a pause takes none: a mark where each began.
      var cells = [Character](repeating: " ", count: width)
      for pause in report.pauses { cells[max(0, column(pause.at))] = "‖" }
      let list = report.pauses.map {
        "\(TimeText.seconds($0.duration)) at \(TimeText.seconds($0.at))"
      }
      let name = pausedRow.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
      emitLine("  \(name)  \(String(cells))  paused \(list.joined(separator: ", "))")
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
      emitLine("  \(name)  \(bar.padding(toLength: width, withPad: " ", startingAt: 0))  \(note)")
    }
  }

  private static let splashRow = "(splash)"
  private static let pausedRow = "(paused)"

  /// What a column of a step's row shows.
  private enum Cell {
    case blank, wait, work, served
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
