import LaunchOrchestrator

/// One `orchestrate` subcommand: its spec (for parsing and help) and what it does.
protocol Command: Sendable {
  /// Arguments, options and help text.
  static var spec: CommandSpec { get }
  init(arguments: ParsedArguments, registry: PluginRegistry, console: Console)
  /// Runs the command and returns the process's exit code.
  func execute() async throws(CLIError) -> ExitCode
}

extension Command {
  /// The single manifest argument of commands that take exactly one.
  static func singleManifest(_ arguments: ParsedArguments) throws(CLIError) -> String {
    guard let path = arguments.positionals.first else {
      throw .usage("Missing expected argument '<manifest>'.", command: spec)
    }
    guard arguments.positionals.count == 1 else {
      throw .usage(
        "Unexpected argument '\(arguments.positionals[1])'; '\(spec.name)' takes one manifest.",
        command: spec)
    }
    return path
  }

  /// Commands that take no arguments reject any.
  static func noArguments(_ arguments: ParsedArguments) throws(CLIError) {
    if let extra = arguments.positionals.first {
      throw .usage("Unexpected argument '\(extra)'; '\(spec.name)' takes none.", command: spec)
    }
  }
}
