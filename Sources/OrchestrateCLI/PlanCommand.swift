import Foundation
import LaunchOrchestrator

/// `orchestrate plan <manifest>`: what a launch would cost, without running it.
struct PlanCommand: Command {
  let options: PlanOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let plan = try ManifestLoading(registry: registry, console: console).load(
      options.manifest,
      dataDirectory: try DataFolder.checked(options.dataDirectory, option: options.$dataDirectory))
    var (earlier, origin, isHistory) = try readDurations(of: plan.name)
    if isHistory, let median = earlier { earlier = fitted(median, to: plan) }
    if let earlier, let path = options.durations {
      try check(earlier, from: path, against: plan, isHistory: isHistory)
    }
    let flags = options.contextFlags
    if let warning = flags.reasonWarning { console.err(warning) }
    let version = (options.appVersion ?? plan.manifest.app)?.version
    let context = flags.context(for: plan, version: version)
    for note in context.notes { console.err("Note: \(note).") }
    let prediction = LaunchForecast.predict(
      plan, durations: earlier, maxConcurrency: options.maxConcurrency, context: context.0,
      version: version)
    let report = prediction.report

    var counts: [LaunchForecast.Source: Int] = [:]
    for source in prediction.sources { counts[source, default: 0] += 1 }
    var sources: [String] = []
    if let count = counts[.report] { sources.append("\(count) from \(origin)") }
    if let count = counts[.hint] { sources.append("\(count) from expectedDuration") }
    if let count = counts[.none] { sources.append("\(count) with no duration, counted as 0s") }
    console.out(
      "Plan for \(plan.name): \(Grammar.count(plan.steps.count, "step")) (durations: \(sources.joined(separator: ", ")))"
    )
    console.out("")

    // Steps are read in place, by index: a copy of a report's or a plan's step retains every
    // part of it, for each comparison of the sort and each row.
    let starts = report.steps.map { $0.start ?? .zero }
    let order = starts.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
    var rows = [["start", "end", "step", "priority", "waits for"]]
    rows.reserveCapacity(order.count + 1)
    for index in order {
      rows.append([
        report.steps[index].start.map(TimeText.seconds) ?? "-",
        report.steps[index].end.map(TimeText.seconds) ?? "-", report.steps[index].id,
        plan.steps[index].priority.description, waits(for: index, in: plan),
      ])
    }
    var table = ConsoleText()
    Table.write(rows, rightAligned: [0, 1], indent: "  ", to: &table)
    console.out(table)
    if plan.usesContext || flags.isRehearsal {
      printContext(context.0, of: report, plan: plan, flags: flags)
    }

    if !report.milestones.isEmpty {
      console.out("")
      console.out("milestones:")
      let width = (report.milestones.map { TerminalText.columns(of: $0.name) }.max() ?? 0) + 2
      for milestone in report.milestones {
        let time = milestone.time.map(TimeText.seconds) ?? "not reached"
        console.out("  \(TerminalText.padded(milestone.name, to: width))\(time)")
      }
    }
    console.out("")
    var chart = ConsoleText()
    Timeline.write(report, to: &chart)
    console.out(chart)
    console.out("")
    console.out("predicted total: \(TimeText.seconds(report.duration))")
    if !report.criticalPath.isEmpty {
      console.out("critical path: \(report.criticalPath.joined(separator: " -> "))")
    }
    let cached = plan.steps.filter { $0.cache != nil }.map { "'\($0.id)'" }
    if !cached.isEmpty {
      let rest =
        cached.count == 1
        ? "this plan times a launch without its saved output; with it, the step is served at once and runs again behind"
        : "this plan times a launch without their saved outputs; with them, they are served at once and run again behind"
      console.out("cached: \(cached.joined(separator: ", ")): \(rest)")
    }
    ExitKeeper.keep((plan, earlier, prediction, rows, table, chart))
    return .success
  }

  private func waits(for index: Int, in plan: LaunchPlan) -> String {
    // The step taken once: reading a setting kept in its box from `plan.steps[index]` copies
    // the whole step, here as in any module but the library's own.
    let step = plan.steps[index]
    var parts = step.dependsOn.map { plan.steps[$0].id }
    parts += step.after.map { "\(plan.steps[$0].id) (after)" }
    if let milestone = step.deferUntil {
      parts.append("\(plan.milestones[milestone].name) (milestone)")
    }
    if step.delay > .zero { parts.append("+\(DurationText.format(step.delay)) delay") }
    parts += step.waitFor.map { "signal '\(plan.signals[$0])'" }
    if step.trigger == .onDemand { parts.append("ensure (on demand)") }
    return parts.joined(separator: ", ")
  }

  /// Refuses a report that cannot describe this manifest's steps: one of another manifest,
  /// one naming steps this manifest lacks, or one whose times are impossible.
  private func check(
    _ report: LaunchReport, from path: String, against plan: LaunchPlan, isHistory: Bool
  ) throws(CLIError) {
    func refuse(_ problem: String) -> CLIError {
      let source = isHistory ? "history" : "report"
      let remedy =
        isHistory
        ? "add runs of this manifest with 'orchestrate run \(options.manifest) --history <folder>'"
        : "write a new one with 'orchestrate run \(options.manifest) --report <file>'"
      return CLIError(
        message:
          "The \(source) '\(path)' given to '\(options.$durations.name)' \(problem); \(remedy).",
        exitCode: .invalidManifest)
    }
    // A report that lists a step twice was refused as it was read.
    let declared = Set(plan.steps.map(\.id))
    let foreign = report.steps.map(\.id).filter { !declared.contains($0) }
    if !report.steps.isEmpty, foreign.count == report.steps.count {
      throw refuse(
        "is of the launch '\(report.name)' ('\(report.manifest)'), not of '\(options.manifest)': none of its steps are in this manifest"
      )
    }
    if !foreign.isEmpty {
      let names = foreign.map { "'\($0)'" }.joined(separator: ", ")
      throw refuse(
        "has steps this manifest does not declare (\(names)), so it is of another manifest")
    }
    for step in report.steps {
      guard let start = step.start, let end = step.end, end < start else { continue }
      throw refuse(
        "says the step '\(step.id)' ended at \(TimeText.seconds(end)), before it started at \(TimeText.seconds(start)), so it is damaged"
      )
    }
  }

  /// A history's medians without the steps this manifest no longer has: runs of an earlier
  /// version of it are still good for the steps that remain. A history none of whose steps
  /// remain is kept whole, for ``check(_:from:against:isHistory:)`` to refuse.
  private func fitted(_ median: LaunchReport, to plan: LaunchPlan) -> LaunchReport {
    let declared = Set(plan.steps.map(\.id))
    let gone = median.steps.filter { !declared.contains($0.id) }.map(\.id)
    guard !gone.isEmpty, gone.count < median.steps.count else { return median }
    console.err(
      "Note: the history has steps this manifest no longer declares (\(gone.map { "'\($0)'" }.joined(separator: ", "))); their times are not used."
    )
    var fitted = median
    fitted.steps.removeAll { !declared.contains($0.id) }
    return fitted
  }

  /// The earlier times, what the summary calls them, and whether they are a history
  /// folder's medians (as a report) of the runs of `launch`.
  private func readDurations(of launch: String) throws(CLIError) -> (
    LaunchReport?, origin: String, isHistory: Bool
  ) {
    guard let path = options.durations else { return (nil, "", false) }
    switch try TimesSource.read(path, for: options.$durations.name) {
    case .report(let report):
      return (report, "the report", false)
    case .history(let folder):
      let (baseline, notes) = folder.baseline(launch: launch)
      for note in notes { console.err(note) }
      guard !baseline.reports.isEmpty else {
        throw CLIError(
          message:
            "The history '\(path)' given to '\(options.$durations.name)' has no run that succeeded or was degraded; add some with 'orchestrate run \(options.manifest) --history \(path)'.",
          exitCode: .invalidManifest)
      }
      let median = baseline.medianReport(named: baseline.reports.last?.name ?? "")
      return (
        median, "the median of \(Grammar.count(baseline.reports.count, "run")) in '\(path)'", true
      )
    }
  }
}

extension PlanCommand {
  /// The context the plan is for, and the steps it keeps out: which steps would run.
  fileprivate func printContext(
    _ context: LaunchContext, of report: LaunchReport, plan: LaunchPlan, flags: ContextFlags
  ) {
    console.out("")
    let source =
      flags.isRehearsal ? "rehearsed" : "the next launch by the launch record in the data folder"
    console.out("context: \(context.summary) (\(source))")
    // On-demand steps are skipped in any launch that does not ensure them: not the context's.
    let skipped = report.steps.indices.filter {
      plan.steps[$0].trigger == .launch && report.steps[$0].state == .skipped
    }.map { report.steps[$0] }
    if skipped.isEmpty {
      console.out("  every step runs")
    } else {
      let rows = skipped.map { ["skipped", $0.id, $0.error ?? ""] }
      var table = ConsoleText()
      Table.write(rows, indent: "  ", to: &table)
      console.out(table)
    }
  }
}
