import Foundation
import LaunchOrchestrator

/// `orchestrate run <manifest>`: runs a launch, shows what happens, writes the report and the
/// trace, and checks milestone budgets.
///
/// Its phases live in files of their own: the command line (``RunOptions``), the output files
/// (`RunCommand+OutputFiles.swift`), signals (`RunCommand+Signals.swift`), the live display
/// (`RunCommand+Display.swift`) and the summary and exit code (`RunCommand+Summary.swift`).
struct RunCommand: Command {
  let options: RunOptions
  let registry: PluginRegistry
  /// Where progress and the summary go: stderr when `--report -` or `--trace -` claims stdout.
  let console: Console

  init(options: RunOptions, registry: PluginRegistry, console: Console) {
    self.options = options
    self.registry = registry
    self.console =
      options.report == "-" || options.trace == "-" ? console.outputOnStandardError : console
  }

  func execute() async throws(CLIError) -> ExitCode {
    let outputs = try OutputFiles(options)
    let plan = try ManifestLoading(registry: registry, console: console).load(options.manifest)
    try checkBudgetMilestones(in: plan)
    for note in outputs.notes { console.err(note) }
    let ((report, routedBy), signal) = await withSignalsCancelling { handle in
      await run(plan, in: handle)
    }
    try outputs.write(report, console: console)
    if options.json {
      console.text(report.jsonText.trimmingCharacters(in: .newlines))
    } else {
      printSummary(report, routedBy: routedBy)
    }
    printProblems(report)
    return exitCode(for: report, signal: signal)
  }
}
