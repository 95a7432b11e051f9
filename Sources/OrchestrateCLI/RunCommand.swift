import Foundation
import LaunchOrchestrator

/// `orchestrate run <manifest>`: runs a launch, prints what happens, writes the report and
/// checks milestone budgets.
struct RunCommand {
  static let spec = CommandSpec(
    name: "run", abstract: "Runs a launch manifest and reports what happened.",
    discussion: """
      Exits 0 when the launch succeeded, was degraded (with a warning) or was routed; 1 when it \
      failed; 3 when a budget was exceeded; 65 for an invalid manifest; 66 for a missing one; \
      130 when interrupted (the report is still written).
      """,
    arguments: [.init(name: "manifest", help: "The launch manifest (JSON).")],
    options: [
      .init(name: "--report", valueName: "file", help: "Write the JSON report to this file."),
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

  struct Budget {
    var milestone: String
    var limit: Duration
  }

  let arguments: ParsedArguments
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    guard let path = arguments.positionals.first else {
      throw .usage("Missing expected argument '<manifest>'.", command: Self.spec)
    }
    guard arguments.positionals.count == 1 else {
      throw .usage(
        "Unexpected argument '\(arguments.positionals[1])'; 'run' takes one manifest.",
        command: Self.spec)
    }
    if arguments.has("--quiet"), arguments.has("--json") {
      throw .usage("'--quiet' and '--json' cannot be used together.", command: Self.spec)
    }
    let maxConcurrency = try parseMaxConcurrency()
    let budgets = try arguments.values("--budget").map { text throws(CLIError) in
      try parseBudget(text)
    }
    let reportURL = try reportDestination()

    let plan = try ManifestLoading(registry: registry, console: console).load(path)
    let milestoneNames = plan.milestones.map(\.name)
    for budget in budgets where !milestoneNames.contains(budget.milestone) {
      let hint =
        Suggestions.closest(to: budget.milestone, in: milestoneNames).map {
          " Did you mean '\($0)'?"
        } ?? ""
      let known =
        milestoneNames.isEmpty
        ? "it declares none" : "it declares \(milestoneNames.joined(separator: ", "))"
      throw .usage(
        "The manifest has no milestone '\(budget.milestone)' for '--budget'.\(hint) (\(known))",
        command: Self.spec)
    }

    let report = await runWithInterrupts(plan, maxConcurrency: maxConcurrency)
    if let reportURL {
      do {
        try Data(report.jsonText.utf8).write(to: reportURL, options: .atomic)
      } catch {
        throw CLIError(
          message: "Cannot write the report to '\(reportURL.path)': \(error.localizedDescription)",
          exitCode: .cannotCreate)
      }
    }
    if arguments.has("--json") {
      console.out(report.jsonText.trimmingCharacters(in: .newlines))
    } else {
      printSummary(
        report, budgets: budgets, reportPath: reportURL == nil ? nil : arguments.value("--report"))
    }
    return exitCode(for: report, budgets: budgets)
  }

  private func runWithInterrupts(_ plan: LaunchPlan, maxConcurrency: Int?) async -> LaunchReport {
    let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
    let engine = LaunchEngine(options: LaunchOptions(maxConcurrency: maxConcurrency))
    // Unstructured so that the signal handler can cancel it; it is awaited right below.
    let launch = Task { await engine.run(plan, events: continuation) }
    let interrupts = InterruptHandler { launch.cancel() }
    let log = EventLog(console: console)
    let showEvents = !arguments.has("--quiet") && !arguments.has("--json")
    for await event in events where showEvents {
      log.print(event)
    }
    let report = await launch.value
    interrupts.stop()
    return report
  }

  private func printSummary(_ report: LaunchReport, budgets: [Budget], reportPath: String?) {
    let headline: String
    switch report.outcome {
    case .routed:
      let by = report.criticalPath.last.map { " by '\($0)'" } ?? ""
      headline =
        "\(report.name): routed to '\(report.route?.name ?? "?")'\(by) in \(TimeText.seconds(report.duration))"
    default:
      headline =
        "\(report.name): \(report.outcome.rawValue) in \(TimeText.seconds(report.duration))"
    }
    if arguments.has("--quiet") {
      console.out(headline)
    } else {
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
      if !report.criticalPath.isEmpty {
        console.out("critical path: \(report.criticalPath.joined(separator: " -> "))")
      }
      if let reportPath { console.out("report: \(reportPath)") }
    }
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

  /// Checks before the launch, not after it, that the report's folder exists.
  private func reportDestination() throws(CLIError) -> URL? {
    guard let path = arguments.value("--report") else { return nil }
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    let folder = url.deletingLastPathComponent().path
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
      isDirectory.boolValue
    else {
      throw .usage(
        "The folder for '--report \(path)' does not exist; create '\(folder)' first.",
        command: Self.spec)
    }
    return url
  }
}
