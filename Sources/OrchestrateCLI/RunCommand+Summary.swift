import Foundation
import LaunchOrchestrator

extension RunCommand {
  /// The outcome line, milestones, timeline, critical path and where the files went.
  func printSummary(_ report: LaunchReport, routedBy: String?, plan: LaunchPlan) {
    // Active time; a paused launch also says how long it took in real time.
    var took = TimeText.seconds(report.duration)
    if !report.pauses.isEmpty {
      took +=
        " (\(TimeText.seconds(report.wallDuration)) with \(Grammar.count(report.pauses.count, "pause")))"
    }
    let headline: String
    if report.outcome == .routed, let route = report.route {
      let by = routedBy.map { " by '\($0)'" } ?? ""
      headline = "\(report.name): routed to '\(route)'\(by) in \(took)"
    } else {
      headline = "\(report.name): \(report.outcome.rawValue) in \(took)"
    }
    guard !options.quiet else {
      console.out(headline)
      return
    }
    console.out("")
    console.out(headline)
    printContext(of: report, plan: plan)
    let width = (report.milestones.map { TerminalText.columns(of: $0.name) }.max() ?? 0) + 2
    for milestone in report.milestones {
      let name = TerminalText.padded(milestone.name, to: width)
      let time = milestone.time.map(TimeText.seconds) ?? "not reached"
      let budget =
        options.budgets.last { $0.milestone == milestone.name }.map {
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
    if let chain = CriticalChainText.preferred(in: report, launchEnd: false), chain.links.count > 0
    {
      for line in CriticalChainText.render(chain) { console.out(line) }
    }
    if let path = options.report {
      console.out("report: \(path == "-" ? "standard output" : path)")
    }
    if let path = options.trace {
      let place = path == "-" ? "standard output" : path
      console.out("trace: \(place) (open it in Perfetto or chrome://tracing)")
    }
    if let path = options.otlp {
      let place = path == "-" ? "standard output" : path
      console.out("otlp: \(place) (an OpenTelemetry trace, OTLP/JSON, for a collector)")
    }
  }

  /// Warnings and errors about the outcome and the budgets, on stderr.
  func printProblems(_ report: LaunchReport) {
    switch report.outcome {
    case .degraded:
      let problems = report.steps.filter { $0.state != .succeeded && $0.state != .cached }.map {
        "'\($0.id)' \($0.state == .timedOut ? "timed out" : $0.state.rawValue)"
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
    for violation in budgetViolations(report) {
      console.err("Error: \(violation)")
    }
  }

  /// The status for the outcome: a launch cancelled by a signal exits as shells report a
  /// death by it (130 for Ctrl-C, 129 for SIGHUP, 143 for SIGTERM).
  func exitCode(for report: LaunchReport, signal: Int32?) -> ExitCode {
    switch report.outcome {
    case .failed: return .failure
    case .cancelled: return signal.map(ExitCode.signalled) ?? .interrupted
    case .succeeded, .degraded, .routed:
      return budgetViolations(report).isEmpty ? .success : .budgetExceeded
    }
  }

  private func budgetViolations(_ report: LaunchReport) -> [String] {
    options.budgets.compactMap { budget in
      let limit = DurationText.format(budget.limit)
      guard case .some(.some(let time)) = report.time(ofMilestone: budget.milestone) else {
        return "The milestone '\(budget.milestone)' was never reached; its budget is \(limit)."
      }
      guard time > budget.limit else { return nil }
      return
        "The milestone '\(budget.milestone)' was reached at \(TimeText.seconds(time)), over its budget of \(limit)."
    }
  }

  /// Refuses, before the launch, a budget for a milestone the manifest does not declare.
  func checkBudgetMilestones(in plan: LaunchPlan) throws(CLIError) {
    for budget in options.budgets {
      try Self.requireMilestone(budget.milestone, for: options.$budgets.name, in: plan)
    }
  }

  /// Refuses, before the launch, an option naming a milestone the manifest does not declare;
  /// `advice` follows the message.
  static func requireMilestone(
    _ milestone: String, for option: String, in plan: LaunchPlan, advice: String = ""
  ) throws(CLIError) {
    let names = plan.milestones.map(\.name)
    guard !names.contains(milestone) else { return }
    let hint = Suggestions.didYouMean(milestone, in: names)
    let known =
      names.isEmpty ? "It declares no milestones." : "It declares \(names.joined(separator: ", "))."
    throw .usage(
      "The manifest has no milestone '\(milestone)' for '\(option)'.\(hint) \(known)\(advice)",
      command: RunOptions.spec)
  }
}
