import LaunchOrchestrator

/// The command line of `orchestrate plan`.
package struct PlanOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "plan",
    abstract: "Predicts a launch without running it: start order, critical path, milestone times.",
    discussion: """
      Step durations come from an earlier report (--durations), or the medians of a history \
      folder that 'orchestrate run --history' keeps, or else from each step's \
      expectedDuration; steps with neither count as taking no time. The prediction follows the \
      same rules as a real launch: priorities, the concurrency limit, delays, deferral and timeouts.
      """)

  @Argument("manifest", help: "The launch manifest (JSON).")
  package var manifest: String

  @Option(
    "--durations", valueName: "report|folder",
    help:
      "Take step durations from this report of an earlier run, or the medians of this history folder."
  )
  package var durations: String?

  @Option(
    "--max-concurrency", valueName: "n", help: "Plan for at most this many steps at once.",
    parse: .positiveInteger)
  package var maxConcurrency: Int?

  @Option(
    "--app-version", valueName: "version[+build]",
    help: "The app's version, for 'once' steps and upgrades; else the manifest's app default.",
    parse: .appInfo)
  package var appVersion: AppInfo?

  @Option("--data-dir", valueName: "folder", help: DataFolder.help, parse: .path)
  package var dataDirectory: String?

  @Option("--reason", valueName: "name", help: ContextFlags.reasonHelp)
  package var reason: String?

  @Flag("--prewarmed", help: ContextFlags.prewarmedHelp)
  package var prewarmed: Bool

  @Flag("--first-launch", help: ContextFlags.firstLaunchHelp)
  package var firstLaunch: Bool

  @Flag("--after-upgrade", help: ContextFlags.afterUpgradeHelp)
  package var afterUpgrade: Bool

  @Flag("--safe-mode", help: ContextFlags.safeModeHelp)
  package var safeMode: Bool

  package init() {}

  package func validate() throws(CLIError) {
    try contextFlags.validate(firstLaunch: $firstLaunch, afterUpgrade: $afterUpgrade)
  }

  /// The launch-context flags.
  var contextFlags: ContextFlags {
    ContextFlags(
      reason: reason, prewarmed: prewarmed, firstLaunch: firstLaunch, afterUpgrade: afterUpgrade,
      safeMode: safeMode)
  }

}
