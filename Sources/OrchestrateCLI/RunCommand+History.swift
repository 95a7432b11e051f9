import Foundation
import LaunchOrchestrator

extension RunCommand {
  /// `--history`, `--keep` and `--regression`: the folder is made ready and the earlier runs
  /// read before the launch, so that a folder that cannot be written stops it before it
  /// starts; after the launch, the run is added, the oldest runs beyond `--keep` removed, and
  /// the run compared with the median of the earlier ones.
  struct HistoryRecorder {
    let options: RunOptions
    let console: Console
    /// The runs in the folder before this one.
    let earlier: HistoryFolder
    let manifestHash: String
    let machine: Machine

    /// `nil` without `--history`.
    /// - Throws: a ``CLIError`` when the folder cannot be made or read, the manifest cannot be
    ///   read, or a `--regression` names a milestone the manifest lacks.
    init?(_ options: RunOptions, plan: LaunchPlan, console: Console) throws(CLIError) {
      guard let folder = options.history else { return nil }
      self.options = options
      self.console = console
      try Self.checkMilestones(options, in: plan)
      try HistoryFolder.prepare(folder, option: options.$history)
      earlier = try HistoryFolder(reading: folder)
      do {
        manifestHash = SHA256.hex(of: try Data(contentsOf: URL(fileURLWithPath: options.manifest)))
      } catch {
        throw CLIError(
          message:
            "Cannot read the manifest '\(options.manifest)' to record its hash: \(HistoryFolder.reason(error)).",
          exitCode: .missingInput)
      }
      machine = .current
    }

    /// Adds `report` to the folder and removes the oldest runs beyond `--keep`; returns the
    /// summary's line saying where it went.
    func record(_ report: LaunchReport) throws(CLIError) -> String {
      let folder = earlier.path
      let name = HistoryFolder.entryName(
        sequence: HistoryFolder.nextSequence(in: folder), at: Date(),
        pid: ProcessInfo.processInfo.processIdentifier, tag: UInt32.random(in: 0...UInt32.max))
      let entry = HistoryEntry(
        recordedAt: HistoryFolder.recordedAt(fromName: name), manifestPath: options.manifest,
        manifestHash: manifestHash, machine: machine, report: report)
      try HistoryFolder.append(entry, to: folder, named: name)
      let keep = options.keep ?? HistoryFolder.defaultKeep
      // Read again: other processes may have added runs meanwhile, and they count too.
      let current = try HistoryFolder(reading: folder)
      for failure in current.prune(keeping: keep, sparing: name) {
        console.err(
          "Warning: could not remove the old run '\(current.file(failure.name))' from the history: \(failure.reason)."
        )
      }
      return
        "history: \(current.file(name)) (\(Grammar.count(min(current.entries.count, keep), "run")) kept, at most \(keep))"
    }

    /// Compares `report` with the earlier runs' medians for each `--regression`: prints a line
    /// for each limit kept (unless quiet), a note for each that cannot be checked yet, and an
    /// error for each exceeded; returns whether any was.
    func checkRegressions(_ report: LaunchReport) -> Bool {
      guard !options.regressions.isEmpty else { return false }
      let (baseline, notes) = earlier.baseline(
        manifestHash: manifestHash, machine: machine, launch: report.name,
        kind: report.launchKind)
      for note in notes { console.err(note) }
      var exceeded = false
      for regression in options.regressions {
        let flag = "\(options.$regressions.name) \(regression.milestone)=\(regression.shareText)"
        let figure = baseline.milestone(regression.milestone)
        guard let figure, figure.runs >= Baseline.minimumRuns else {
          let runs = figure?.runs ?? 0
          console.err(
            "Note: '\(flag)' was not checked: '\(earlier.path)' has \(Grammar.count(runs, "earlier run")) to compare with (that succeeded or were degraded, and reached '\(regression.milestone)'); a median needs at least \(Baseline.minimumRuns). This run was added; the check starts once there are \(Baseline.minimumRuns)."
          )
          continue
        }
        let median = TimeText.seconds(figure.median)
        let runs = "\(Grammar.count(figure.runs, "run")) in '\(earlier.path)'"
        guard case .some(.some(let time)) = report.time(ofMilestone: regression.milestone) else {
          exceeded = true
          console.err(
            "Error: The milestone '\(regression.milestone)' was never reached; '\(flag)' compares it with the median of \(median) over \(runs)."
          )
          continue
        }
        let change = (time - figure.median).seconds / max(figure.median.seconds, 1e-9)
        let verb = change >= 0 ? "later" : "earlier"
        let share = Regression.percent(abs(change))
        guard change > regression.share else {
          if options.printsEvents {
            console.out(
              "regression: '\(regression.milestone)' at \(TimeText.seconds(time)), \(share) \(verb) than the median of \(median) over \(runs) (limit \(regression.shareText))"
            )
          }
          continue
        }
        exceeded = true
        var message =
          "Error: The milestone '\(regression.milestone)' was reached at \(TimeText.seconds(time)), \(share) later than the median of \(median) over \(runs); '\(flag)' allows \(regression.shareText)."
        if let noise = figure.noise, noise.seconds > figure.median.seconds * regression.share {
          message +=
            " These runs vary by up to ±\(TimeText.seconds(noise)) on their own, more than the share allows; a larger share may be wiser."
        }
        message += " " + slowerSteps(report, before: time, baseline: baseline)
        console.err(message)
      }
      return exceeded
    }

    /// The steps that ran before the milestone and took longer than their median beyond
    /// noise, longest delay first: where to look.
    private func slowerSteps(
      _ report: LaunchReport, before time: Duration, baseline: Baseline
    ) -> String {
      let slower =
        report.steps.compactMap { step -> (String, Duration, Baseline.Figure)? in
          guard let start = step.start, start < time, let took = step.duration,
            let figure = baseline.step(step.id),
            took - figure.median > (figure.noise ?? Baseline.noiseFloor)
          else { return nil }
          return (step.id, took, figure)
        }
        .sorted { $0.1 - $0.2.median > $1.1 - $1.2.median }
      guard !slower.isEmpty else {
        return "No step before it took longer than its median beyond noise; it waited longer."
      }
      let named = slower.prefix(3).map { id, took, figure in
        "'\(id)' took \(TimeText.seconds(took)) (median \(TimeText.seconds(figure.median)), +\(TimeText.seconds(took - figure.median)))"
      }
      return "Slower than their median: \(named.joined(separator: ", "))."
    }

    /// Refuses, before the launch, a `--regression` for a milestone the manifest does not
    /// declare.
    private static func checkMilestones(_ options: RunOptions, in plan: LaunchPlan)
      throws(CLIError)
    {
      for regression in options.regressions {
        let implied =
          regression.milestone == Regression.defaultMilestone
          ? " ('\(options.$regressions.name) 10%' means '\(Regression.defaultMilestone)=10%'; name one of its milestones: 'firstFrame=10%')"
          : ""
        try RunCommand.requireMilestone(
          regression.milestone, for: options.$regressions.name, in: plan, advice: implied)
      }
    }
  }
}
