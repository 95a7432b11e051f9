/// A command's whole command line, declared once as a struct of wrapped properties: the
/// declaration drives parsing, `--help` and the errors, and the command reads typed
/// properties, so a misspelled option is a compile error rather than a silent `nil`.
///
/// Adding an option is one line in the command's options struct; help, usage, parsing and
/// the did-you-mean of a near miss follow from it. For example, to give `run` a data folder:
///
/// ```swift
/// @Option("--data-dir", valueName: "dir", help: "Resolve the steps' data paths against this folder.")
/// var dataDirectory: String?
/// ```
///
/// and read `options.dataDirectory` in ``RunCommand``. A value with rules of its own gets a
/// ``ValueParser`` (`parse: .positiveInteger`, or one written next to its type), whose error
/// names the option through the declaration it is given.
package protocol CommandOptions: Sendable {
  /// The command's name and help text.
  static var configuration: CommandConfiguration { get }
  /// The defaults; the parser builds the real value with the same initializer.
  init()
  /// Checks rules between options (such as two that exclude each other), after parsing.
  func validate() throws(CLIError)
}

extension CommandOptions {
  /// Nothing to check by default.
  package func validate() throws(CLIError) {}

  /// The arguments and options, in the order the struct declares them.
  package static var declarations: [ArgumentDeclaration] {
    Mirror(reflecting: Self()).children.compactMap {
      ($0.value as? any DeclaredArgument)?.declaration
    }
  }

  /// Everything help and errors need to know about the command.
  package static var spec: CommandSpec {
    CommandSpec(configuration: configuration, declarations: declarations)
  }

  /// Parses a command line (without the command's name); `nil` when `--help` was asked for.
  /// - Throws: a ``CLIError`` with exit code 64 and the usage line, saying what is wrong.
  package static func parse(_ arguments: [String]) throws(CLIError) -> Self? {
    let spec = spec
    guard let values = try spec.parse(arguments) else { return nil }
    let options = ParsedValues.$current.withValue(values) { Self() }
    do {
      try options.validate()
    } catch {
      throw error.withUsage(of: spec)
    }
    return options
  }
}

/// What a command is called and what its help says beyond the arguments and options.
package struct CommandConfiguration: Sendable {
  /// The subcommand: `run`.
  package var name: String
  /// One line, for the overview and the list of subcommands.
  package var abstract: String
  /// Paragraphs shown after the overview in the command's help.
  package var discussion: String?

  /// Describes a command.
  package init(name: String, abstract: String, discussion: String? = nil) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
  }
}

/// The converted values of one command line, keyed by declaration name, handed to the
/// property wrappers while the parser builds the options struct.
struct ParsedValues: Sendable {
  @TaskLocal static var current: ParsedValues?

  private var values: [String: [any Sendable]] = [:]

  func values(of name: String) -> [any Sendable] { values[name] ?? [] }

  mutating func append(_ value: any Sendable, to name: String) {
    values[name, default: []].append(value)
  }
}
