import Foundation
import LaunchOrchestrator

/// `orchestrate run <manifest>`: runs a launch, shows what happens, writes the report and the
/// trace, and checks milestone budgets.
struct RunCommand: Command {
  static let spec = CommandSpec(
    name: "run", abstract: "Runs a launch manifest and reports what happened.",
    discussion: """
      Exits 0 when the launch succeeded, was degraded (with a warning) or was routed; 1 when it \
      failed; 3 when a budget was exceeded; 65 for an invalid manifest; 66 for a missing one; \
      130 when interrupted (the report and trace are still written).
      """,
    arguments: [.init(name: "manifest", help: "The launch manifest (JSON).")],
    options: [
      .init(name: "--report", valueName: "file", help: "Write the JSON report to this file."),
      .init(
        name: "--trace", valueName: "file",
        help: "Write a Chrome trace (for Perfetto) to this file."),
      .init(
        name: "--max-concurrency", valueName: "n",
        help: "Run at most this many steps at once (overrides the manifest)."),
      .init(
        name: "--budget", valueName: "milestone=duration",
        help: "Fail with exit code 3 when the milestone is reached later than this, or never.",
        repeating: true),
      .init(name: "--quiet", help: "Print only the outcome line."),
      .init(name: "--json", help: "Print the report JSON on stdout instead of progress lines."),
    ])

  /// The running launch, for the interrupt handler; a Ctrl-C before it starts is remembered.
  struct LaunchHandle {
    var task: Task<LaunchReport, Never>?
    var cancelRequested = false
  }

  struct Budget {
    var milestone: String
    var limit: Duration
  }

  let arguments: ParsedArguments
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let path = try Self.singleManifest(arguments)
    if arguments.has("--quiet"), arguments.has("--json") {
      throw .usage("'--quiet' and '--json' cannot be used together.", command: Self.spec)
    }
    let maxConcurrency = try parseMaxConcurrency()
    let budgets = try arguments.values("--budget").map { text throws(CLIError) in
      try parseBudget(text)
    }
    let reportURL = try destination(of: "--report")
    let traceURL = try destination(of: "--trace")

    let plan = try ManifestLoading(registry: registry, console: console).load(path)
    try checkBudgetMilestones(budgets, in: plan)

    // Installed until the command is done, not just the launch: a Ctrl-C that arrives while
    // the report is written finds nothing left to cancel instead of killing the process.
    let launch = Locked(LaunchHandle())
    let interrupts = InterruptHandler {
      launch.withLock { handle in
        handle.cancelRequested = true
        handle.task?.cancel()
      }
    }
    defer { interrupts.stop() }
    let (report, routedBy) = await run(plan, maxConcurrency: maxConcurrency, in: launch)
    if let reportURL { try write(report.jsonText, to: reportURL, what: "report") }
    if let traceURL {
      try write(JSONWriter.prettyPrinted(report.chromeTrace), to: traceURL, what: "trace")
    }
    if arguments.has("--json") {
      console.out(report.jsonText.trimmingCharacters(in: .newlines))
    } else {
      printSummary(report, routedBy: routedBy, budgets: budgets)
    }
    printProblems(report, budgets: budgets)
    return exitCode(for: report, budgets: budgets)
  }

  private func run(
    _ plan: LaunchPlan, maxConcurrency: Int?, in handle: Locked<LaunchHandle>
  ) async -> (report: LaunchReport, routedBy: String?) {
    let (events, continuation) = LaunchEvents.makeStream()
    let engine = LaunchEngine(options: LaunchOptions(maxConcurrency: maxConcurrency))
    // Unstructured so that the signal handler can cancel it; it is awaited right below.
    let launch = Task { await engine.run(plan, events: continuation) }
    handle.withLock { handle in
      handle.task = launch
      if handle.cancelRequested { launch.cancel() }
    }
    let display =
      !quiet && Console.isInteractive
      ? LiveDisplay(console: console, stepCount: plan.steps.count) : nil
    let log = EventLog(console: console)
    var routedBy: String?
    await withDiscardingTaskGroup { group in
      if let display {
        group.addTask {
          while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            display.tick()
          }
        }
      }
      for await event in events {
        // The report names the route, not the step that took it; the event does.
        if case .routed(_, let step) = event.kind { routedBy = step }
        if let display {
          display.show(event)
        } else if !quiet {
          log.print(event)
        }
      }
      group.cancelAll()
    }
    display?.finish()
    return (await launch.value, routedBy)
  }

  /// Whether the run prints no event lines: `--quiet` and `--json` print only at the end.
  private var quiet: Bool { arguments.has("--quiet") || arguments.has("--json") }

  private func printSummary(_ report: LaunchReport, routedBy: String?, budgets: [Budget]) {
    let headline: String
    if report.outcome == .routed, let route = report.route {
      let by = routedBy.map { " by '\($0)'" } ?? ""
      headline = "\(report.name): routed to '\(route)'\(by) in \(TimeText.seconds(report.duration))"
    } else {
      headline =
        "\(report.name): \(report.outcome.rawValue) in \(TimeText.seconds(report.duration))"
    }
    guard !arguments.has("--quiet") else {
      console.out(headline)
      return
    }
    console.out("")
    console.out(headline)
    let width = (report.milestones.map(\.name.count).max() ?? 0) + 2
    for milestone in report.milestones {
      let name = milestone.name.padding(toLength: width, withPad: " ", startingAt: 0)
      let time = milestone.time.map(TimeText.seconds) ?? "not reached"
      let budget =
        budgets.last { $0.milestone == milestone.name }.map {
          " (budget \(DurationText.format($0.limit)))"
        } ?? ""
      console.out("  \(name)\(time)\(budget)")
    }
    console.out("")
    for line in Timeline.render(report) { console.out(line) }
    if !report.criticalPath.isEmpty {
      console.out("")
      console.out("critical path: \(report.criticalPath.joined(separator: " -> "))")
    }
    if let path = arguments.value("--report") { console.out("report: \(path)") }
    if let path = arguments.value("--trace") {
      console.out("trace: \(path) (open it in Perfetto or chrome://tracing)")
    }
  }

  private func printProblems(_ report: LaunchReport, budgets: [Budget]) {
    switch report.outcome {
    case .degraded:
      let problems = report.steps.filter { $0.state != .succeeded }.map {
        "'\($0.id)' \($0.state.rawValue)"
      }
      console.err("Warning: the launch was degraded: \(problems.joined(separator: ", ")).")
    case .failed:
      let failed = report.steps.filter { $0.state == .failed || $0.state == .timedOut }
      let details = failed.map {
        "'\($0.id)' \($0.state == .timedOut ? "timed out" : "failed"): \($0.error ?? "")"
      }
      console.err("Error: the launch failed: \(details.joined(separator: "; ")).")
    case .cancelled:
      console.err("Error: the launch was interrupted.")
    case .succeeded, .routed:
      break
    }
    for violation in budgetViolations(report, budgets: budgets) {
      console.err("Error: \(violation)")
    }
  }

  private func exitCode(for report: LaunchReport, budgets: [Budget]) -> ExitCode {
    switch report.outcome {
    case .failed: return .failure
    case .cancelled: return .interrupted
    case .succeeded, .degraded, .routed:
      return budgetViolations(report, budgets: budgets).isEmpty ? .success : .budgetExceeded
    }
  }

  private func budgetViolations(_ report: LaunchReport, budgets: [Budget]) -> [String] {
    budgets.compactMap { budget in
      let limit = DurationText.format(budget.limit)
      guard case .some(.some(let time)) = report.time(ofMilestone: budget.milestone) else {
        return "The milestone '\(budget.milestone)' was never reached; its budget is \(limit)."
      }
      guard time > budget.limit else { return nil }
      return
        "The milestone '\(budget.milestone)' was reached at \(TimeText.seconds(time)), over its budget of \(limit)."
    }
  }

  private func checkBudgetMilestones(_ budgets: [Budget], in plan: LaunchPlan) throws(CLIError) {
    let names = plan.milestones.map(\.name)
    for budget in budgets where !names.contains(budget.milestone) {
      let hint =
        Suggestions.didYouMean(budget.milestone, in: names)
      let known =
        names.isEmpty ? "it declares none" : "it declares \(names.joined(separator: ", "))"
      throw .usage(
        "The manifest has no milestone '\(budget.milestone)' for '--budget'.\(hint) (\(known))",
        command: Self.spec)
    }
  }

  private func parseMaxConcurrency() throws(CLIError) -> Int? {
    guard let text = arguments.value("--max-concurrency") else { return nil }
    guard let value = Int(text), value >= 1 else {
      throw .usage(
        "The value '\(text)' for '--max-concurrency <n>' must be a whole number of at least 1.",
        command: Self.spec)
    }
    return value
  }

  private func parseBudget(_ text: String) throws(CLIError) -> Budget {
    let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2, !parts[0].isEmpty else {
      throw .usage(
        "The value '\(text)' for '--budget' must look like 'interactive=2s'.", command: Self.spec)
    }
    guard let limit = DurationText.parse(parts[1]) ?? Double(parts[1]).flatMap(DurationText.seconds)
    else {
      throw .usage(
        "The budget '\(parts[1])' for '\(parts[0])' is not a duration; write it like '250ms', '2s' or '1.5m'.",
        command: Self.spec)
    }
    return Budget(milestone: parts[0], limit: limit)
  }

  /// The file an option names, checked before the launch (not after it) to be in a folder
  /// that exists.
  private func destination(of option: String) throws(CLIError) -> URL? {
    guard let path = arguments.value(option) else { return nil }
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    let folder = url.deletingLastPathComponent().path
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
      isDirectory.boolValue
    else {
      throw .usage(
        "The folder for '\(option) \(path)' does not exist; create '\(folder)' first.",
        command: Self.spec)
    }
    return url
  }

  private func write(_ text: String, to url: URL, what: String) throws(CLIError) {
    do {
      try Data(text.utf8).write(to: url, options: .atomic)
    } catch {
      throw CLIError(
        message: "Cannot write the \(what) to '\(url.path)': \(error.localizedDescription)",
        exitCode: .cannotCreate)
    }
  }
}
