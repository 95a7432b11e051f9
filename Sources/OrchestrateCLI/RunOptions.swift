import LaunchOrchestrator

/// The command line of `orchestrate run`.
package struct RunOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "run", abstract: "Runs a launch manifest and reports what happened.",
    discussion: """
      Exits 0 when the launch succeeded, was degraded (with a warning) or was routed; 1 when it \
      failed; 3 when a budget or a regression limit was exceeded; 64 for a wrong command line (a \
      --report or --trace that names a file the launch reads included) or a value a step \
      requires that the run lacks (--app-version); 65 for an invalid manifest; 66 for a \
      missing one or a missing --data-dir folder; \
      73 when --report or --trace names a file it may not replace (a folder, a block device or a \
      socket), or \
      the --history folder cannot be written; 74 when standard output cannot be written; \
      130, 129 or 143 when interrupted by Ctrl-C, SIGHUP or SIGTERM (the report and trace are \
      still written). A report or trace of '-' goes to standard output, and progress to stderr.

      --history keeps each run's report in a folder, with the SHA-256 of the manifest and the \
      machine (host, system, cores), at most --keep runs (oldest removed first; other files \
      in the folder are never touched). --regression compares this run with the median of \
      the runs already there that succeeded or were degraded, runs of an earlier manifest \
      included (with a note); with fewer than 5 such runs it is not checked, and says so, \
      rather than fail. Both gates can be given together.
      """)

  @Argument("manifest", help: "The launch manifest (JSON).")
  package var manifest: String

  @Option(
    "--report", valueName: "file", help: "Write the JSON report to this file ('-' for stdout).")
  package var report: String?

  @Option(
    "--trace", valueName: "file",
    help: "Write a Chrome trace (for Perfetto) to this file ('-' for stdout).")
  package var trace: String?

  @Option(
    "--otlp", valueName: "file",
    help: "Write the launch as an OpenTelemetry trace (OTLP/JSON) to this file ('-' for stdout).")
  package var otlp: String?

  @Option(
    "--max-concurrency", valueName: "n",
    help: "Run at most this many steps at once (overrides the manifest).", parse: .positiveInteger)
  package var maxConcurrency: Int?

  @RepeatedOption(
    "--budget", valueName: "milestone=duration",
    help: "Fail with exit code 3 when the milestone is reached later than this, or never.",
    parse: .budget)
  package var budgets: [Budget]

  @Option(
    "--history", valueName: "folder",
    help:
      "Add this run to a history folder (created if missing), for --regression and 'orchestrate compare'."
  )
  package var history: String?

  @Option(
    "--keep", valueName: "n",
    help: "Keep at most this many runs in --history, removing the oldest (default 50).",
    parse: .positiveInteger)
  package var keep: Int?

  @RepeatedOption(
    "--regression", valueName: "share",
    help:
      "Fail with exit code 3 when interactive is reached later than the --history median by more than this share ('10%'); another milestone: 'searchReady=15%'.",
    parse: .regression)
  package var regressions: [Regression]

  @Option(
    "--app-version", valueName: "version[+build]",
    help:
      "The app's version for steps that read AppInfo (gate.version); else the manifest's app default.",
    parse: .appInfo)
  package var appVersion: AppInfo?

  @Option("--reason", valueName: "name", help: ContextFlags.reasonHelp)
  package var reason: String?

  @Flag("--prewarmed", help: ContextFlags.prewarmedHelp)
  package var prewarmed: Bool

  @Flag(
    "--first-launch",
    help: ContextFlags.firstLaunchHelp + " Serves no cached output: a first launch has none.")
  package var firstLaunch: Bool

  @Flag("--after-upgrade", help: ContextFlags.afterUpgradeHelp)
  package var afterUpgrade: Bool

  @Flag("--safe-mode", help: ContextFlags.safeModeHelp)
  package var safeMode: Bool

  @Option(
    "--data-dir", valueName: "folder",
    help: DataFolder.help, parse: .path)
  package var dataDirectory: String?

  @RepeatedOption(
    "--signal", valueName: "name[@time]",
    help:
      "Send a signal the manifest declares, at the start or at this time of the launch ('consent@300ms'); signals not given are never sent.",
    parse: .timedName)
  package var signals: [TimedName]

  @RepeatedOption(
    "--ensure", valueName: "step[@time]",
    help:
      "Ask for an on-demand step at the start or at this time of the launch ('search@500ms'), as an app's ensure does.",
    parse: .timedName)
  package var ensures: [TimedName]

  @Flag(
    "--no-cache",
    help:
      "Run steps that have a 'cache' instead of serving their saved output (still saving the new one)."
  )
  package var noCache: Bool

  @Flag("--quiet", help: "Print only the outcome line.")
  package var quiet: Bool

  @Flag("--json", help: "Print the report JSON on stdout instead of progress lines.")
  package var json: Bool

  package init() {}

  package func validate() throws(CLIError) {
    if quiet, json {
      throw .invalidValue("'\($quiet.name)' and '\($json.name)' cannot be used together.")
    }
    for (given, name) in [(!regressions.isEmpty, $regressions.name), (keep != nil, $keep.name)]
    where given && history == nil {
      throw .invalidValue(
        "'\(name)' works on the runs in a history folder; give '\($history.synopsis)' too.")
    }
    try contextFlags.validate(firstLaunch: $firstLaunch, afterUpgrade: $afterUpgrade)
  }

  /// Whether the run prints no event lines: `--quiet` and `--json` print only at the end.
  var printsEvents: Bool { !quiet && !json }

  /// The launch-context flags.
  var contextFlags: ContextFlags {
    ContextFlags(
      reason: reason, prewarmed: prewarmed, firstLaunch: firstLaunch, afterUpgrade: afterUpgrade,
      safeMode: safeMode)
  }

}

/// A name and the time of the launch to act on it: `consent` or `consent@300ms`.
package struct TimedName: Sendable, Equatable {
  /// The signal's or step's name.
  package var name: String
  /// When, in the launch's active time.
  package var time: Duration
}

extension ValueParser where Value == TimedName {
  /// `name` (at the start) or `name@duration`.
  package static var timedName: Self {
    Self { text, option throws(CLIError) in
      let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        .map(String.init)
      guard !parts[0].isEmpty else {
        throw .invalidValue(
          "The value '\(text)' for '\(option.name)' needs a name, like 'consent' or 'consent@300ms'."
        )
      }
      guard parts.count == 2 else { return TimedName(name: parts[0], time: .zero) }
      switch CommandLineDuration.parse(parts[1]) {
      case .success(let time):
        return TimedName(name: parts[0], time: time)
      case .failure(let problem):
        throw .invalidValue(
          "The time '\(parts[1])' in '\(option.name) \(text)' \(problem); write it like '300ms' or '2s'."
        )
      }
    }
  }
}

extension ValueParser where Value == AppInfo {
  /// `1.9.0` or `1.9.0+41`.
  package static var appInfo: Self {
    Self { text, option throws(CLIError) in
      guard let app = AppInfo(parsing: text) else {
        throw .invalidValue(
          "The value '\(text)' for '\(option.name)' is not a version; write it like '1.9.0' or '1.9.0+41'."
        )
      }
      return app
    }
  }
}

/// A `--budget`: the latest time a milestone may be reached.
package struct Budget: Sendable, Equatable {
  package var milestone: String
  package var limit: Duration

  /// A budget of `limit` for `milestone`.
  package init(milestone: String, limit: Duration) {
    self.milestone = milestone
    self.limit = limit
  }
}

extension ValueParser where Value == Budget {
  /// `interactive=2s`; a bare number is seconds.
  package static var budget: Self {
    Self { text, option throws(CLIError) in
      let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty else {
        throw .invalidValue(
          "The value '\(text)' for '\(option.name)' must look like 'interactive=2s'.")
      }
      switch CommandLineDuration.parse(parts[1]) {
      case .success(let limit):
        return Budget(milestone: parts[0], limit: limit)
      case .failure(let problem):
        throw .invalidValue(
          "The budget '\(parts[1])' for '\(parts[0])' in '\(option.name)' \(problem); write it like '250ms', '2s' or '1.5m'."
        )
      }
    }
  }
}

/// A duration given on the command line, read where it is given: `250ms`, `2s`, `1.5m`, or a
/// plain decimal number of seconds (`2`, `0.25`, `1e3`), bounded as a manifest's durations are.
enum CommandLineDuration {
  /// Why a text is not a duration, as the end of a sentence naming it.
  struct Problem: Error, CustomStringConvertible {
    let description: String
  }

  private static let scales: [Substring: Double] = [
    "": 1, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86_400,
  ]

  /// The duration `text` denotes, or why it is none: negative, more than a century, or not a
  /// duration at all (hexadecimal, `nan` and `inf` included, which `Double` would take).
  static func parse(_ text: String) -> Result<Duration, Problem> {
    if let duration = DurationText.parse(text) { return .success(duration) }
    let isNegative = text.hasPrefix("-")
    let body = isNegative ? text.dropFirst() : Substring(text)
    let unitLength = body.reversed().prefix { ("a"..."z").contains($0) }.count
    let number = body.dropLast(unitLength)
    guard let scale = scales[body.suffix(unitLength)], let first = number.first,
      ("0"..."9").contains(first),
      number.allSatisfy({ ("0"..."9").contains($0) || ".eE+-".contains($0) }),
      let value = Double(number)
    else {
      return .failure(Problem(description: "is not a duration"))
    }
    let seconds = value * scale
    if isNegative, seconds != 0 {
      return .failure(Problem(description: "cannot be negative"))
    }
    guard let duration = DurationText.seconds(seconds) else {
      return .failure(
        Problem(
          description: "is more than a century (3200000000s), the longest a duration may be"))
    }
    return .success(duration)
  }
}
