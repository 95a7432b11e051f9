import LaunchOrchestrator

extension RunCommand {
  /// How the run treats the launch record: rehearsed when a context flag is given (the
  /// record is read for the next launch's facts, never written), else kept and updated when
  /// the manifest uses the context, as in an app.
  func launchRecordUse(for plan: LaunchPlan, environment: LaunchEnvironment) -> LaunchRecordUse {
    let flags = options.contextFlags
    guard flags.isRehearsal else { return .automatic }
    if let warning = flags.reasonWarning { console.err(warning) }
    let version = (environment[AppInfo.self] ?? plan.manifest.app)?.version
    let (context, notes) = flags.context(for: plan, version: version)
    for note in notes { console.err("Note: \(note).") }
    return .rehearsed(context)
  }

  /// The context line of the summary, for a manifest that uses the context, a rehearsed
  /// context or a launch in safe mode.
  func printContext(of report: LaunchReport, plan: LaunchPlan) {
    guard let context = report.context,
      plan.usesContext || options.contextFlags.isRehearsal || context.isSafeMode
    else { return }
    let rehearsed =
      options.contextFlags.isRehearsal ? " (rehearsed; the launch record was not changed)" : ""
    console.out("  context: \(context.summary)\(rehearsed)")
  }
}
