/// The process exit codes of `orchestrate`, following sysexits where one fits.
public struct ExitCode: Sendable, Hashable {
  /// The numeric status.
  public let rawValue: Int32

  /// Wraps a status.
  public init(_ rawValue: Int32) {
    self.rawValue = rawValue
  }

  // Each made from its case of ``Code``, where its number and meaning are: a test checks that
  // every one is, and the table lists every case.

  /// The launch succeeded, was degraded, or was routed; or the command did its job.
  public static let success = ExitCode(.success)
  /// The launch failed.
  public static let failure = ExitCode(.failure)
  /// A `--budget` or a `--regression` limit was exceeded.
  public static let budgetExceeded = ExitCode(.budgetExceeded)
  /// The command line was wrong (EX_USAGE).
  public static let usage = ExitCode(.usage)
  /// A manifest is invalid (EX_DATAERR).
  public static let invalidManifest = ExitCode(.invalidManifest)
  /// A manifest is missing or unreadable (EX_NOINPUT).
  public static let missingInput = ExitCode(.missingInput)
  /// Standard output could not be written, for a reason other than its reader leaving
  /// (EX_IOERR).
  public static let outputFailed = ExitCode(.outputFailed)
  /// A file could not be written, or is not one `orchestrate` may replace (EX_CANTCREAT).
  public static let cannotCreate = ExitCode(.cannotCreate)
  /// The launch was cancelled by SIGHUP: the terminal was closed.
  public static let hangUp = ExitCode(.hangUp)
  /// The launch was interrupted with Ctrl-C (SIGINT).
  public static let interrupted = ExitCode(.interrupted)
  /// The launch was cancelled by SIGTERM.
  public static let terminated = ExitCode(.terminated)

  /// The status of a launch cancelled by `signal`, as shells report a death by it: 128 + its
  /// number.
  public static func signalled(_ signal: Int32) -> ExitCode {
    ExitCode(128 + signal)
  }
}

extension ExitCode {
  /// Every status `orchestrate` exits with, declared once: its number here and its meaning in
  /// ``meaning``; the statics of ``ExitCode`` and README's table (``meanings``) are made from
  /// it. In the order README's table lists them.
  package enum Code: Int32, CaseIterable {
    case success = 0
    case failure = 1
    case budgetExceeded = 3
    case usage = 64
    case invalidManifest = 65
    case missingInput = 66
    case cannotCreate = 73
    case outputFailed = 74
    case hangUp = 129
    case interrupted = 130
    case terminated = 143

    /// When `orchestrate` exits with it, as README's table says.
    package var meaning: String {
      switch self {
      case .success:
        "the launch succeeded, was degraded (with a warning) or routed; or the command did its job"
      case .failure:
        "the launch failed, or a step requires a value only an app can give (a custom binary passes it to `Orchestrate.main(registry:environment:)`)"
      case .budgetExceeded: "a `--budget`, `--regression` or `stats --fail-if` limit was exceeded"
      case .usage:
        "the command line is wrong (an output named on it that is a file the launch or the command reads included), or a step requires `AppInfo` and neither `--app-version` nor the manifest's `app` gives it"
      case .invalidManifest:
        "the manifest is invalid (every problem is listed), or a report given to `compare`, `blame` or `plan --durations` is not one of it"
      case .missingInput:
        "the manifest is missing or unreadable, or the `--data-dir` folder is missing"
      case .cannotCreate:
        "a report, trace, history, `stats --svg` or `export -o` target cannot be written, or is a folder, device, socket or link to nothing it may not replace; found before a launch, for `run` (each that fails after the launch is named on stderr, and `run` exits with the launch's code)"
      case .outputFailed: "standard output could not be written (a full disk; not a closed pipe)"
      case .hangUp: "the launch was cancelled by SIGHUP (the terminal closed)"
      case .interrupted: "the launch was interrupted by Ctrl-C (SIGINT)"
      case .terminated: "the launch was cancelled by SIGTERM"
      }
    }
  }

  /// The status of `code`.
  package init(_ code: Code) {
    self.init(code.rawValue)
  }

  /// Every status `orchestrate` exits with and when, in the order README's table lists them:
  /// the table is made from this list, and a test keeps README's copy in step.
  package static let meanings: [(code: ExitCode, meaning: String)] = Code.allCases.map {
    (ExitCode($0), $0.meaning)
  }

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
