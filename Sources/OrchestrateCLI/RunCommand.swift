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
  /// The values the binary gives every launch (``Orchestrate/main(registry:environment:)``).
  let baseEnvironment: LaunchEnvironment
  /// Where progress and the summary go: stderr when `--report -` or `--trace -` claims stdout.
  let console: Console

  init(options: RunOptions, registry: PluginRegistry, console: Console) {
    self.init(
      options: options, registry: registry, environment: LaunchEnvironment(), console: console)
  }

  init(
    options: RunOptions, registry: PluginRegistry, environment: LaunchEnvironment,
    console: Console
  ) {
    self.options = options
    self.registry = registry
    baseEnvironment = environment
    self.console =
      options.report == "-" || options.trace == "-" ? console.outputOnStandardError : console
  }

  static func make(
    options: RunOptions, registry: PluginRegistry, environment: LaunchEnvironment,
    console: Console
  ) -> Self {
    Self(options: options, registry: registry, environment: environment, console: console)
  }

  func execute() async throws(CLIError) -> ExitCode {
    let outputs = try OutputFiles(options)
    let plan = try ManifestLoading(registry: registry, console: console).load(
      options.manifest, dataDirectory: try checkedDataDirectory())
    try outputs.refuseFiles(of: plan, registry: registry, history: options.history)
    try checkBudgetMilestones(in: plan)
    try checkSignalsAndEnsures(in: plan)
    let environment = try environment(for: plan)
    let history = try HistoryRecorder(options, plan: plan, console: console)
    for note in outputs.notes { console.err(note) }
    let ((report, routedBy), signal) = await withSignalsCancelling { handle in
      await run(plan, environment: environment, in: handle)
    }
    // Each output is attempted whatever befell the other: a report that cannot be written
    // (a full disk) is no reason to lose the run from the history. Nor to lose the launch's
    // own outcome: the summary still prints and the exit code is the launch's, the outputs
    // that failed named on stderr.
    var failures: [CLIError] = []
    do { try outputs.write(report, console: console) } catch { failures.append(error) }
    var recorded: String?
    do { recorded = try history?.record(report) } catch { failures.append(error) }
    if options.json {
      console.json(report.jsonText)
    } else {
      printSummary(report, routedBy: routedBy, plan: plan)
    }
    for note in report.contextNotes { console.err("Note: \(note).") }
    if let recorded, options.printsEvents { console.out(recorded) }
    printProblems(report)
    for failure in failures { console.err("Error: \(failure.message)") }
    let regressed = history?.checkRegressions(report) ?? false
    let code = exitCode(for: report, signal: signal)
    return code == .success && regressed ? .budgetExceeded : code
  }
}

extension RunCommand {
  /// The values the launch gets: the binary's own, and from the command line `--app-version`
  /// as its ``AppInfo``.
  ///
  /// Values some step requires that the run cannot provide stop it before anything runs,
  /// all named at once: the step, its kind, the type and, for ``AppInfo``, the option that
  /// provides it.
  func environment(for plan: LaunchPlan) throws(CLIError) -> LaunchEnvironment {
    var environment = baseEnvironment
    if let version = options.appVersion { environment[AppInfo.self] = version }
    let missing = plan.missingRequirements(in: environment)
    guard !missing.isEmpty else { return environment }
    let appInfo = String(describing: AppInfo.self)
    let sentences = missing.map { missing in
      let sentence =
        "Step '\(missing.step)' (\(missing.plugin)) requires \(missing.typeName), which this run does not have"
      return missing.typeName == appInfo
        ? "\(sentence); pass '\(options.$appVersion.name) 1.2.3' (or '1.2.3+45'), or give the manifest an \"app\": { \"version\": \"1.2.3\" } default."
        : "\(sentence); only an app can provide it, through the LaunchEnvironment it runs the launch with (a custom binary: Orchestrate.main(registry:environment:))."
    }
    throw CLIError(
      message: sentences.joined(separator: " ") + " Nothing was run.",
      exitCode: missing.allSatisfy { $0.typeName == appInfo } ? .usage : .failure)
  }

  /// `--data-dir`, which must be an existing folder.
  func checkedDataDirectory() throws(CLIError) -> String? {
    try DataFolder.checked(options.dataDirectory, option: options.$dataDirectory)
  }
}
