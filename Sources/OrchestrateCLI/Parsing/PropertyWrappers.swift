/// An option that takes a value: `--report <file>`, at most once.
///
/// ```swift
/// @Option("--report", valueName: "file", help: "Write the JSON report to this file.")
/// var report: String?
/// @Option("--format", valueName: "dot|mermaid", help: "...", parse: .oneOf)
/// var format: GraphFormat = .dot
/// ```
@propertyWrapper
package struct Option<Value: Sendable>: DeclaredArgument, Sendable {
  let declaration: ArgumentDeclaration
  /// The parsed value, or the default.
  package let wrappedValue: Value
  /// The declaration, so that messages name the option without spelling it again: `$report.name`.
  package var projectedValue: ArgumentDeclaration { declaration }

  /// An option with a default value.
  package init(
    wrappedValue: Value, _ name: String, valueName: String, help: String,
    parse: ValueParser<Value>
  ) {
    declaration = ArgumentDeclaration(
      name: name, kind: .option(valueName: valueName), help: help, convert: parse.parse)
    self.wrappedValue = ParsedValues.current?.values(of: name).last as? Value ?? wrappedValue
  }

  /// An optional option: `nil` unless given.
  package init<Wrapped: Sendable>(
    _ name: String, valueName: String, help: String, parse: ValueParser<Wrapped>
  ) where Value == Wrapped? {
    declaration = ArgumentDeclaration(
      name: name, kind: .option(valueName: valueName), help: help, convert: parse.parse)
    wrappedValue = ParsedValues.current?.values(of: name).last as? Wrapped
  }

  /// An optional option whose value is a file's path; `short` is a one-letter spelling
  /// (`-o`).
  package init(_ name: String, valueName: String, help: String, short: Character? = nil)
  where Value == String? {
    declaration = ArgumentDeclaration(
      name: name, kind: .option(valueName: valueName), help: help, short: short,
      convert: ValueParser<String>.path.parse)
    wrappedValue = ParsedValues.current?.values(of: name).last as? String
  }
}

/// An option that may be given any number of times: `--budget a=1s --budget b=2s`.
@propertyWrapper
package struct RepeatedOption<Element: Sendable>: DeclaredArgument, Sendable {
  let declaration: ArgumentDeclaration
  /// The values in the order given; empty when none was.
  package let wrappedValue: [Element]
  /// The declaration, for messages about the option.
  package var projectedValue: ArgumentDeclaration { declaration }

  /// Declares the option.
  package init(_ name: String, valueName: String, help: String, parse: ValueParser<Element>) {
    declaration = ArgumentDeclaration(
      name: name, kind: .option(valueName: valueName), help: help, repeating: true,
      convert: parse.parse)
    wrappedValue = ParsedValues.current?.values(of: name).compactMap { $0 as? Element } ?? []
  }
}

/// An option without a value: `--quiet`. Giving it twice is the same as once.
@propertyWrapper
package struct Flag: DeclaredArgument, Sendable {
  let declaration: ArgumentDeclaration
  /// Whether it was given.
  package let wrappedValue: Bool
  /// The declaration, for messages about the flag.
  package var projectedValue: ArgumentDeclaration { declaration }

  /// Declares the flag.
  package init(_ name: String, help: String) {
    declaration = ArgumentDeclaration(
      name: name, kind: .flag, help: help, convert: { _, _ in true })
    wrappedValue = ParsedValues.current?.values(of: name).isEmpty == false
  }
}

/// The one positional argument of a command: `<manifest>`, required.
@propertyWrapper
package struct Argument: DeclaredArgument, Sendable {
  let declaration: ArgumentDeclaration
  /// The argument as given.
  package let wrappedValue: String
  /// The declaration, for messages about the argument.
  package var projectedValue: ArgumentDeclaration { declaration }

  /// Declares the argument; `name` is how help and errors show it (`<manifest>`).
  package init(_ name: String, help: String) {
    declaration = ArgumentDeclaration(
      name: name, kind: .positional, help: help, convert: { text, _ in text })
    wrappedValue = ParsedValues.current?.values(of: name).first as? String ?? ""
  }
}

/// One or more positional arguments: `<manifest> ...`.
@propertyWrapper
package struct Arguments: DeclaredArgument, Sendable {
  let declaration: ArgumentDeclaration
  /// The arguments in the order given.
  package let wrappedValue: [String]
  /// The declaration, for messages about the arguments.
  package var projectedValue: ArgumentDeclaration { declaration }

  /// Declares the arguments; at least one is required.
  package init(_ name: String, help: String) {
    declaration = ArgumentDeclaration(
      name: name, kind: .positional, help: help, repeating: true, convert: { text, _ in text })
    wrappedValue = ParsedValues.current?.values(of: name).compactMap { $0 as? String } ?? []
  }
}
