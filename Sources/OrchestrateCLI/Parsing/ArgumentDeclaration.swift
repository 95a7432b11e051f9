/// One argument or option as a command declares it: what it is called, how it is written on
/// the command line, what help says about it, and how its text becomes a value.
///
/// Declarations are never written by hand: the property wrappers (``Option``, ``Flag``,
/// ``Argument``, ...) make them, so the declaration and the typed property a command reads are
/// one line of code.
package struct ArgumentDeclaration: Sendable {
  /// How the command line spells it.
  package enum Kind: Sendable {
    /// `--name`, no value.
    case flag
    /// `--name <valueName>` or `--name=<valueName>`.
    case option(valueName: String)
    /// A value without a name, in order.
    case positional
  }

  /// `--report` for options and flags, `manifest` for positional arguments.
  package let name: String
  package let kind: Kind
  package let help: String
  /// Whether it may be given more than once (options) or takes one or more values (positionals).
  package let repeating: Bool
  /// A one-letter alias, such as `-h`.
  package let short: Character?
  /// Turns the given text into the property's value; throws the error message to print.
  let convert: @Sendable (String, ArgumentDeclaration) throws(CLIError) -> any Sendable

  init(
    name: String, kind: Kind, help: String, repeating: Bool = false, short: Character? = nil,
    convert: @escaping @Sendable (String, ArgumentDeclaration) throws(CLIError) -> any Sendable
  ) {
    self.name = name
    self.kind = kind
    self.help = help
    self.repeating = repeating
    self.short = short
    self.convert = convert
  }

  /// `--report <file>`, as errors quote it.
  package var synopsis: String {
    switch kind {
    case .flag: name
    case .option(let valueName): "\(name) <\(valueName)>"
    case .positional: "<\(name)>"
    }
  }

  /// What the value is called (`file` for `--report <file>`), or the name of a positional
  /// argument; empty for a flag.
  package var valueName: String {
    switch kind {
    case .flag: ""
    case .option(let valueName): valueName
    case .positional: name
    }
  }

  /// The help column's label: `-h, --help`, `--report <file>`, `<manifest>`.
  var label: String { short.map { "-\($0), \(synopsis)" } ?? synopsis }

  /// The usage line's form: `[--budget <milestone=duration> ...]`, `<manifest> ...`.
  var usage: String {
    switch kind {
    case .positional: repeating ? "\(synopsis) ..." : synopsis
    case .flag, .option: repeating ? "[\(synopsis) ...]" : "[\(synopsis)]"
    }
  }

  var isPositional: Bool {
    if case .positional = kind { return true }
    return false
  }

  var takesValue: Bool {
    if case .option = kind { return true }
    return false
  }

  /// `--help`, which every command accepts.
  static let help = ArgumentDeclaration(
    name: "--help", kind: .flag, help: "Show help information.", short: "h",
    convert: { _, _ in true })
}

/// A property wrapper that declares an argument or option; the parser finds these by
/// reflection, in declaration order.
protocol DeclaredArgument {
  var declaration: ArgumentDeclaration { get }
}
