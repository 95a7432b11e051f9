import Foundation
import LaunchOrchestrator

/// `orchestrate compare <report> <baseline>`: per milestone and per step, what changed, and
/// whether it is more than run-to-run noise.
struct CompareCommand: Command {
  let options: CompareOptions
  let registry: PluginRegistry
  let console: Console

  /// One line of a table: a time in the report and the baseline's.
  private struct Line {
    var name: String
    var time: Duration?
    /// What to show instead of a missing time: `not reached`, `skipped`.
    var missing: String
    var figure: Baseline.Figure?
  }

  func execute() async throws(CLIError) -> ExitCode {
    let (report, entry) = try TimesSource.readRun(options.report, for: options.$report.synopsis)
    let baseline: Baseline
    let heading: String
    let isHistory: Bool
    switch try TimesSource.read(options.baseline, for: options.$baseline.synopsis) {
    case .report(let other):
      guard other.launchKind == report.launchKind else {
        throw CLIError(
          message:
            "'\(options.report)' and '\(options.baseline)' are of different kinds of launch (\(report.launchKind); \(other.launchKind)), which are not timed alike; compare runs of the same kind.",
          exitCode: .invalidManifest)
      }
      baseline = Baseline([other])
      heading = "'\(options.baseline)' (\(describe(other)))"
      isHistory = false
    case .history(let folder):
      let excluded = entryName(of: options.report, in: folder)
      // An entry says which manifest and machine it ran, so the notes can compare with those.
      let (figures, notes) = folder.baseline(
        manifestHash: entry?.manifestHash, machine: entry?.machine, excluding: excluded,
        launch: report.name, kind: report.launchKind)
      if excluded != nil {
        console.err(
          "Note: '\(options.report)' is one of the runs in '\(folder.path)'; it is left out of the median it is compared with."
        )
      }
      for note in notes { console.err(note) }
      guard !figures.reports.isEmpty else {
        throw CLIError(
          message:
            "The history '\(folder.path)' has no run that succeeded or was degraded to compare with; add some with 'orchestrate run <manifest> --history \(folder.path)'.",
          exitCode: .invalidManifest)
      }
      baseline = figures
      heading = "the median of \(Grammar.count(figures.reports.count, "run")) in '\(folder.path)'"
      isHistory = true
    }
    ExitKeeper.keep((report, baseline))
    console.out("Comparing '\(options.report)' (\(describe(report))) with \(heading).")

    let milestoneNames = Set(report.milestones.map(\.name))
    let milestones =
      report.milestones.map {
        Line(
          name: $0.name, time: $0.time, missing: "not reached",
          figure: baseline.milestone($0.name))
      }
      + baseline.milestones.filter { !milestoneNames.contains($0.name) }.map {
        Line(name: $0.name, time: nil, missing: "-", figure: $0.figure)
      }
    let stepIds = Set(report.steps.map(\.id))
    let steps =
      report.steps.map {
        Line(
          name: $0.id, time: $0.duration, missing: $0.state.rawValue,
          figure: baseline.step($0.id))
      }
      + baseline.steps.filter { !stepIds.contains($0.id) }.map {
        Line(name: $0.id, time: nil, missing: "-", figure: $0.figure)
      }
    let baselineHeader = isHistory ? "median" : "baseline"
    for (title, lines) in [("milestone", milestones), ("step (ran for)", steps)]
    where !lines.isEmpty {
      console.out("")
      var rows = [
        [title, "report", baselineHeader, "change", ""] + (isHistory ? ["noise", ""] : [])
      ]
      rows += lines.map { row($0, showsNoise: isHistory) }
      for line in Table.render(rows, rightAligned: [1, 2, 3, 4, 5]) { console.out("  " + line) }
    }
    console.out("")
    if !isHistory {
      console.out(
        "Nothing is flagged: one report against another says nothing of run-to-run noise. Compare with a history folder ('orchestrate run --history <folder>') for that."
      )
    } else if baseline.reports.count < Baseline.minimumRuns {
      console.out(
        "Nothing is flagged: \(Grammar.count(baseline.reports.count, "run")) cannot say what is noise; at least \(Baseline.minimumRuns) are needed."
      )
    } else {
      console.out(
        "noise: 3 × 1.4826 × the runs' median absolute deviation (at least 1ms); a change beyond it is flagged."
      )
    }
    return .success
  }

  private func row(_ line: Line, showsNoise: Bool) -> [String] {
    let time = line.time.map(TimeText.seconds) ?? line.missing
    let median = line.figure.map { TimeText.seconds($0.median) } ?? "-"
    var change = ""
    var share = ""
    var verdict = ""
    if let time = line.time, let figure = line.figure {
      let difference = time - figure.median
      let size = difference < .zero ? .zero - difference : difference
      change = Self.signed(difference.seconds, places: 3, unit: "s")
      if figure.median > .zero {
        share = Self.signed(
          difference.seconds / figure.median.seconds * 100, places: 1, unit: "%")
      }
      if let noise = figure.noise, size > noise {
        verdict = difference > .zero ? "slower" : "faster"
      }
    } else if line.time != nil {
      change = "new"
    } else if line.figure != nil, line.missing == "-" {
      change = "gone"
    }
    guard showsNoise else { return [line.name, time, median, change, share] }
    let noise = line.figure?.noise.map { "±" + TimeText.seconds($0) } ?? "-"
    return [line.name, time, median, change, share, noise, verdict]
  }

  /// `value` to `places` decimals and `unit`, with its sign, and none when it rounds to zero
  /// (or is not a number): `+0.180s`, `0.000s`, `-12.5%`.
  private static func signed(_ value: Double, places: Int, unit: StaticString) -> String {
    let text = TimeText.fixed(abs(value), places: places, unit: unit)
    guard value.isFinite, !TimeText.roundsToZero(value, places: places) else { return text }
    return (value < 0 ? "-" : "+") + text
  }

  private func describe(_ report: LaunchReport) -> String {
    "\(report.name), \(report.outcome.rawValue) in \(TimeText.seconds(report.duration))"
  }

  /// The name of `report` in `folder` when it is one of the folder's entries, so that it is
  /// not compared with a median it is part of.
  private func entryName(of report: String, in folder: HistoryFolder) -> String? {
    let name = URL(fileURLWithPath: report).lastPathComponent
    guard folder.entries.contains(where: { $0.name == name }),
      let identity = FileIdentity(path: report),
      identity == FileIdentity(path: folder.file(name))
    else { return nil }
    return name
  }
}
