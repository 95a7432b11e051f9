import Foundation
import LaunchOrchestrator

/// The figures of `orchestrate stats` for people: a block for all reports, then one per group.
enum StatsText {
  static func lines(_ summary: StatsSummary) -> [String] {
    let stats = summary.stats
    // Shares of nothing would read "0.0% succeeded": say plainly that there was nothing.
    let files = Grammar.count(stats.filesRead, "file")
    var lines = [
      (stats.all.reports > 0
        ? "\(Grammar.count(stats.all.reports, "report")) from \(files)" : "No reports in \(files)")
        + (stats.skipped > 0 ? "; \(stats.skipped) skipped (not reports):" : ".")
    ]
    lines += stats.skippedExamples.map { "  \($0)" }
    if stats.skipped > stats.skippedExamples.count {
      lines.append("  ... and \(stats.skipped - stats.skippedExamples.count) more")
    }
    guard stats.all.reports > 0 else { return lines }
    var estimated = false
    for (label, group) in summary.labelledGroups {
      lines.append("")
      lines += block(label, group, estimated: &estimated)
    }
    if estimated {
      lines.append("")
      lines.append(
        "~ estimated: over \(QuantileSketch.exactLimit) values a percentile is within 0.5% of the exact one (max is exact)."
      )
    }
    return lines
  }

  private static func block(_ label: String, _ group: StatsGroup, estimated: inout Bool)
    -> [String]
  {
    var lines = ["\(label): \(Grammar.count(group.reports, "report"))"]
    let outcomes = LaunchOutcome.allCases.map { "\(percent(group.share($0))) \($0.rawValue)" }
    lines.append("  outcomes: " + outcomes.joined(separator: ", "))
    lines.append(
      "  background completion: "
        + (group.backgroundCompletion.map {
          "\(percent($0)) (\(group.deferredSucceeded) of \(Grammar.count(group.deferredStarted, "deferred step")) that started)"
        } ?? "none started"))
    if !group.milestones.isEmpty {
      var rows = [["milestone", "reached", "missed", "p50", "p90", "p99", "max"]]
      for (name, milestone) in group.orderedMilestones {
        rows.append(
          [TerminalText.escaped(name), "\(milestone.times.count)", "\(milestone.missed)"]
            + cells(milestone.times, [50, 90, 99], estimated: &estimated))
      }
      lines.append("")
      lines += Table.render(rows, rightAligned: [1, 2, 3, 4, 5, 6]).map { "  " + $0 }
    }
    if !group.steps.isEmpty {
      var rows = [["step", "ran", "duration p50", "p90", "wait p50", "p90"]]
      for (id, step) in group.orderedSteps {
        let duration = cells(step.durations, [50, 90], estimated: &estimated)
        let wait = cells(step.waits, [50, 90], estimated: &estimated)
        rows.append(
          [TerminalText.escaped(id), "\(step.durations.count)"] + duration.dropLast()
            + wait.dropLast())
      }
      lines.append("")
      lines += Table.render(rows, rightAligned: [1, 2, 3, 4, 5]).map { "  " + $0 }
    }
    return lines
  }

  /// The percentiles, then the max; `-` for an empty series, `~` before an estimate.
  private static func cells(
    _ series: QuantileSketch, _ percentiles: [Double], estimated: inout Bool
  ) -> [String] {
    let mark = series.isExact ? "" : "~"
    if !series.isExact { estimated = true }
    return series.values(atPercentiles: percentiles).map { value in
      value.map { mark + TimeText.seconds(.seconds($0)) } ?? "-"
    } + [series.count > 0 ? TimeText.seconds(.seconds(series.max)) : "-"]
  }

  /// `12.5%`, `0.04%`: two significant decimals below 1%.
  static func percent(_ share: Double) -> String {
    let value = share * 100
    if value == 0 || value >= 1 { return String(format: "%.1f%%", value) }
    return String(format: "%.2f%%", value)
  }
}
