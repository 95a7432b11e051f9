import LaunchOrchestrator

/// One `orchestrate` subcommand: its options (which declare its command line) and what it does.
protocol Command: Sendable {
  /// The command line it accepts, with its help text.
  associatedtype Options: CommandOptions
  init(options: Options, registry: PluginRegistry, console: Console)
  /// The command for `options`; a command that runs launches also takes the binary's
  /// ``LaunchEnvironment`` (``Orchestrate/main(registry:environment:)``).
  static func make(
    options: Options, registry: PluginRegistry, environment: LaunchEnvironment, console: Console
  ) -> Self
  /// Runs the command and returns the process's exit code.
  func execute() async throws(CLIError) -> ExitCode
}

extension Command {
  /// The command's declarations and help text.
  static var spec: CommandSpec { Options.spec }

  /// A command that runs no launch needs no environment.
  static func make(
    options: Options, registry: PluginRegistry, environment: LaunchEnvironment, console: Console
  ) -> Self {
    Self(options: options, registry: registry, console: console)
  }

  /// Parses `arguments` and runs the command, or prints its help.
  static func main(
    _ arguments: [String], registry: PluginRegistry, environment: LaunchEnvironment,
    console: Console
  ) async throws(CLIError) -> ExitCode {
    guard let options = try Options.parse(arguments) else {
      console.text(spec.help)
      return .success
    }
    return try await make(
      options: options, registry: registry, environment: environment, console: console
    ).execute()
  }
}
