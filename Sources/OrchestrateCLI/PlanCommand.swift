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

    // Counted in a loop: a dictionary hashed each step's source.
    var (fromReport, fromHint, withNone) = (0, 0, 0)
    for index in prediction.sources.indices {
      switch prediction.sources[index] {
      case .report: fromReport += 1
      case .hint: fromHint += 1
      case .none: withNone += 1
      }
    }
    var sources: [String] = []
    if fromReport > 0 { sources.append("\(fromReport) from \(origin)") }
    if fromHint > 0 { sources.append("\(fromHint) from expectedDuration") }
    if withNone > 0 { sources.append("\(withNone) with no duration, counted as 0s") }
    console.out(
      "Plan for \(plan.name): \(Grammar.count(plan.steps.count, "step")) (durations: \(sources.joined(separator: ", ")))"
    )
    console.out("")

    // Steps are read in place, by index: a copy of a report's or a plan's step retains every
    // part of it, for each comparison of the sort and each row.
    let starts = report.steps.map { $0.start ?? .zero }
    let order = starts.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
    // The cells are written as UTF-8 into one buffer: a `String` a cell (the times, the
    // waits joined) and an array a row cost more than the table itself at 10,000 steps.
    var rows = TableCells()
    rows.reserveCapacity(
      rows: order.count + 1, cells: 5 * (order.count + 1), bytes: 48 * order.count)
    rows.startRow()
    for header in ["start", "end", "step", "priority", "waits for"] { rows.add(header) }
    var isCached = [Bool](repeating: false, count: plan.steps.count)
    for index in order {
      rows.startRow()
      rows.addCell { Self.appendTime(report.steps[index].start, to: &$0) }
      rows.addCell { Self.appendTime(report.steps[index].end, to: &$0) }
      rows.add(report.steps[index].id)
      // The step taken once: reading a setting kept in its box from `plan.steps[index]`
      // copies the whole step, here as in any module but the library's own.
      let step = plan.steps[index]
      rows.add(step.priority.description)
      rows.addCell { writeWaits(of: step, in: plan, to: &$0) }
      isCached[index] = step.cache != nil
    }
    var table = ConsoleText()
    table.reserveCapacity(rows.bytes.count + 40 * order.count)
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
    let cached = isCached.indices.filter { isCached[$0] }.map { "'\(plan.steps[$0].id)'" }
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

  /// Appends a time of the table, `-` for none.
  private static func appendTime(_ time: Duration?, to bytes: inout [UInt8]) {
    if let time {
      TimeText.appendSeconds(time, to: &bytes)
    } else {
      bytes.append(UInt8(ascii: "-"))
    }
  }

  /// Appends what `step` waits for, `, ` between them, to `bytes`.
  private func writeWaits(of step: PlannedStep, in plan: LaunchPlan, to bytes: inout [UInt8]) {
    var isFirst = true
    func next() {
      if !isFirst { bytes.append(contentsOf: ", ".utf8) }
      isFirst = false
    }
    for dependency in step.dependsOn {
      next()
      bytes.append(contentsOf: plan.steps[dependency].id.utf8)
    }
    for earlier in step.after {
      next()
      bytes.append(contentsOf: plan.steps[earlier].id.utf8)
      bytes.append(contentsOf: " (after)".utf8)
    }
    if let milestone = step.deferUntil {
      next()
      bytes.append(contentsOf: plan.milestones[milestone].name.utf8)
      bytes.append(contentsOf: " (milestone)".utf8)
    }
    if step.delay > .zero {
      next()
      bytes.append(contentsOf: "+\(DurationText.format(step.delay)) delay".utf8)
    }
    for signal in step.waitFor {
      next()
      bytes.append(contentsOf: "signal '\(plan.signals[signal])'".utf8)
    }
    if step.trigger == .onDemand {
      next()
      bytes.append(contentsOf: "ensure (on demand)".utf8)
    }
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
