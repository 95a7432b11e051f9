/// The process exit codes of `orchestrate`, following sysexits where one fits.
public struct ExitCode: Sendable, Hashable {
  /// The numeric status.
  public let rawValue: Int32

  /// Wraps a status.
  public init(_ rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// The launch succeeded, was degraded, or was routed; or the command did its job.
  public static let success = ExitCode(0)
  /// The launch failed.
  public static let failure = ExitCode(1)
  /// A `--budget` or a `--regression` limit was exceeded.
  public static let budgetExceeded = ExitCode(3)
  /// The command line was wrong (EX_USAGE).
  public static let usage = ExitCode(64)
  /// A manifest is invalid (EX_DATAERR).
  public static let invalidManifest = ExitCode(65)
  /// A manifest is missing or unreadable (EX_NOINPUT).
  public static let missingInput = ExitCode(66)
  /// Standard output could not be written, for a reason other than its reader leaving
  /// (EX_IOERR).
  public static let outputFailed = ExitCode(74)
  /// A file could not be written, or is not one `orchestrate` may replace (EX_CANTCREAT).
  public static let cannotCreate = ExitCode(73)
  /// The launch was cancelled by SIGHUP: the terminal was closed.
  public static let hangUp = ExitCode(129)
  /// The launch was interrupted with Ctrl-C (SIGINT).
  public static let interrupted = ExitCode(130)
  /// The launch was cancelled by SIGTERM.
  public static let terminated = ExitCode(143)

  /// The status of a launch cancelled by `signal`, as shells report a death by it: 128 + its
  /// number.
  public static func signalled(_ signal: Int32) -> ExitCode {
    ExitCode(128 + signal)
  }
}

extension ExitCode {
  /// Every status `orchestrate` exits with and when, in the order README's table lists them:
  /// the table is made from this list, and a test keeps README's copy in step.
  package static let meanings: [(code: ExitCode, meaning: String)] = [
    (
      .success,
      "the launch succeeded, was degraded (with a warning) or routed; or the command did its job"
    ),
    (
      .failure,
      "the launch failed, or a step requires a value only an app can give (a custom binary passes it to `Orchestrate.main(registry:environment:)`)"
    ),
    (.budgetExceeded, "a `--budget`, `--regression` or `stats --fail-if` limit was exceeded"),
    (
      .usage,
      "the command line is wrong, or a step requires `AppInfo` and neither `--app-version` nor the manifest's `app` gives it"
    ),
    (
      .invalidManifest,
      "the manifest is invalid (every problem is listed), or a report given to `compare`, `blame` or `plan --durations` is not one of it"
    ),
    (.missingInput, "the manifest is missing or unreadable, or the `--data-dir` folder is missing"),
    (
      .cannotCreate,
      "a report, trace, history, `stats --svg` or `export -o` target cannot be written or may not be replaced"
    ),
    (.outputFailed, "standard output could not be written (a full disk; not a closed pipe)"),
    (.hangUp, "the launch was cancelled by SIGHUP (the terminal closed)"),
    (.interrupted, "the launch was interrupted by Ctrl-C (SIGINT)"),
    (.terminated, "the launch was cancelled by SIGTERM"),
  ]

  /// ``meanings`` as README's Markdown table.
  package static var markdownTable: String {
    (["| code | when |", "|---|---|"]
      + meanings.map { "| \($0.code.rawValue) | \($0.meaning) |" })
      .joined(separator: "\n") + "\n"
  }
}

/// An error that ends the command with a message on stderr and an exit code.
package struct CLIError: Error {
  /// `Error: ...` text; user input in single quotes.
  package var message: String
  /// The status the process exits with.
  package var exitCode: ExitCode
  /// The usage line to print after the message, for command-line mistakes.
  package var usage: String?

  init(message: String, exitCode: ExitCode, usage: String? = nil) {
    self.message = message
    self.exitCode = exitCode
    self.usage = usage
  }

  static func usage(_ message: String, command: CommandSpec) -> CLIError {
    CLIError(message: message, exitCode: .usage, usage: command.usageLine)
  }

  /// A value that does not fit its option; the parser adds the command's usage line.
  package static func invalidValue(_ message: String) -> CLIError {
    CLIError(message: message, exitCode: .usage)
  }

  /// This error with `command`'s usage line, unless it already has one.
  func withUsage(of command: CommandSpec) -> CLIError {
    var error = self
    if error.exitCode == .usage, error.usage == nil { error.usage = command.usageLine }
    return error
  }
}
