import Foundation
import LaunchOrchestrator

/// The `orchestrate` command line as a library, so a team can build its own binary with its
/// own plugins:
///
/// ```swift
/// import OrchestrateCLI
/// import MyAppSteps
/// await Orchestrate.main(plugins: [OpenDatabase.self, WarmCache.self])
/// ```
public enum Orchestrate {
  /// The version `--version` prints.
  public static let version = "0.1.0"

  /// Runs the command line with the given plugin types and exits the process.
  public static func main(plugins: [any StepPlugin.Type]) async -> Never {
    var registry = PluginRegistry()
    registry.register(plugins)
    await main(registry: registry)
  }

  /// Runs the command line with the kinds in `registry` and exits the process; launches get
  /// `environment`, the stand-in values a rehearsal of the app's plugins needs (an API
  /// client that reads fixtures, a feature-flag store), as the app hands in its own.
  ///
  /// ```swift
  /// var environment = LaunchEnvironment()
  /// environment[APIClient.self] = APIClient.fixtures(in: "Fixtures")
  /// await Orchestrate.main(registry: registry, environment: environment)
  /// ```
  public static func main(
    registry: PluginRegistry, environment: LaunchEnvironment = LaunchEnvironment()
  ) async -> Never {
    // Swift repairs an argument that is not UTF-8 (a file name's bytes) with U+FFFD: a path
    // then names nothing, and "does not exist" would mislead about one that does.
    // Past the program's own name; none at all when it was started with an empty argv.
    for index in (0..<Int(CommandLine.argc)).dropFirst() {
      guard let argument = CommandLine.unsafeArgv[index],
        String(validatingCString: argument) == nil
      else { continue }
      let repaired = String(cString: argument)
      Console.standard.err(
        "Error: The argument '\(repaired)' is not valid UTF-8 (\(Grammar.count(repaired.filter { $0 == "\u{FFFD}" }.count, "byte sequence")) shown as \u{FFFD}); orchestrate reads names as UTF-8. Rename the file or folder, or reach it through a symbolic link whose name is UTF-8."
      )
      exit(ExitCode.usage.rawValue)
    }
    let keeper = ExitKeeper()
    let code = await ExitKeeper.$current.withValue(keeper) {
      await run(
        arguments: Array(CommandLine.arguments.dropFirst()), registry: registry,
        environment: environment)
    }
    // What the command kept goes with the process, not freed object by object.
    withExtendedLifetime(keeper) { exit(code.rawValue) }
  }

  /// Runs one command line and returns its exit code.
  ///
  /// SIGPIPE is ignored from here on: a reader that goes away (`orchestrate run ... | head -1`)
  /// stops the printing, not the launch. A stream that was closed when the program started
  /// (`>&-`) is never written to: the descriptor may be another file's by now.
  public static func run(
    arguments: [String], registry: PluginRegistry,
    environment: LaunchEnvironment = LaunchEnvironment()
  ) async -> ExitCode {
    signal(SIGPIPE, SIG_IGN)
    Console.adoptStandardStreams()
    let console = Console.standard
    let code: ExitCode
    do {
      code = try await dispatch(
        arguments, registry: registry, environment: environment, console: console)
    } catch {
      console.err("Error: \(error.message)")
      if let usage = error.usage { console.err("Usage: \(usage)") }
      return error.exitCode
    }
    if code == .success, let failure = Console.standardOutputFailure {
      console.err(
        "Error: standard output could not be written: \(String(cString: strerror(failure))).")
      return .outputFailed
    }
    return code
  }

  private static let commands: [any Command.Type] = [
    RunCommand.self, ValidateCommand.self, PlanCommand.self, CompareCommand.self,
    BlameCommand.self, GraphCommand.self, PluginsCommand.self, SchemaCommand.self,
    CacheCommand.self, StatsCommand.self, ExportCommand.self,
  ]

  private static let abstract =
    "Runs app launches described by a JSON manifest: steps, dependencies, priorities, timeouts."

  private static func dispatch(
    _ arguments: [String], registry: PluginRegistry, environment: LaunchEnvironment,
    console: Console
  ) async throws(CLIError) -> ExitCode {
    guard let first = arguments.first else {
      console.text(help)
      return .success
    }
    switch first {
    case "--help", "-h":
      console.text(help)
      return .success
    case "--version":
      console.out(version)
      return .success
    case "help":
      // `help --help` and `help help` are asking for this very help.
      guard let name = arguments.dropFirst().first, !["--help", "-h", "help"].contains(name)
      else {
        console.text(help)
        return .success
      }
      console.text(try command(named: name).spec.help)
      return .success
    default:
      return try await command(named: first).main(
        Array(arguments.dropFirst()), registry: registry, environment: environment,
        console: console)
    }
  }

  private static func command(named name: String) throws(CLIError) -> any Command.Type {
    if let command = commands.first(where: { $0.spec.name == name }) { return command }
    // A closure, not the key path `\.spec.name`: a key path through an existential metatype
    // crashes the Swift 6.3 compiler.
    let isOption = name.hasPrefix("-")
    let names = isOption ? ["--help", "--version"] : commands.map { $0.spec.name }
    let hint = Suggestions.didYouMean(name, in: names)
    let kind = isOption ? "option" : "subcommand"
    throw CLIError(
      message: "Unknown \(kind) '\(name)'.\(hint)", exitCode: .usage,
      usage: "orchestrate <subcommand>")
  }

  private static var help: String {
    var text = "OVERVIEW: \(abstract)\n\nUSAGE: orchestrate <subcommand>\n\nOPTIONS:\n"
    text += HelpTable.render([
      ("--version", "Show the version."), ("-h, --help", "Show help information."),
    ])
    text += "\nSUBCOMMANDS:\n"
    text += HelpTable.render(commands.map { ($0.spec.name, $0.spec.configuration.abstract) })
    text += "\n  See 'orchestrate help <subcommand>' for detailed help."
    return text
  }
}
