import LaunchOrchestrator

/// One `orchestrate` subcommand: its options (which declare its command line) and what it does.
protocol Command: Sendable {
  /// The command line it accepts, with its help text.
  associatedtype Options: CommandOptions
  init(options: Options, registry: PluginRegistry, console: Console)
  /// Runs the command and returns the process's exit code.
  func execute() async throws(CLIError) -> ExitCode
}

extension Command {
  /// The command's declarations and help text.
  static var spec: CommandSpec { Options.spec }

  /// Parses `arguments` and runs the command, or prints its help.
  static func main(
    _ arguments: [String], registry: PluginRegistry, console: Console
  ) async throws(CLIError) -> ExitCode {
    guard let options = try Options.parse(arguments) else {
      console.text(spec.help)
      return .success
    }
    return try await Self(options: options, registry: registry, console: console).execute()
  }
}
