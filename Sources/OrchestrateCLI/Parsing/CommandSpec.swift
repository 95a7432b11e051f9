import LaunchOrchestrator

/// A command's configuration and declarations, from which parsing, usage and help are
/// derived, in the layout of swift-argument-parser.
package struct CommandSpec: Sendable {
  package var configuration: CommandConfiguration
  package var declarations: [ArgumentDeclaration]

  var name: String { configuration.name }
  var arguments: [ArgumentDeclaration] { declarations.filter(\.isPositional) }
  var options: [ArgumentDeclaration] { declarations.filter { !$0.isPositional } }
  var allOptions: [ArgumentDeclaration] { options + [.help] }

  /// `orchestrate run <manifest> [--report <file>] ...`
  package var usageLine: String {
    (["orchestrate", name] + arguments.map(\.usage) + options.map(\.usage))
      .joined(separator: " ")
  }

  /// The text `--help` prints.
  package var help: String {
    var text = "OVERVIEW: \(configuration.abstract)\n"
    if let discussion = configuration.discussion {
      let paragraphs = discussion.split(separator: "\n\n").map(String.init)
      text += "\n\(paragraphs.map { HelpTable.wrap($0, width: 80) }.joined(separator: "\n\n"))\n"
    }
    text += "\nUSAGE: \(usageLine)\n"
    let argumentRows = arguments.map { ($0.label, $0.help) }
    let optionRows = allOptions.map { ($0.label, $0.help) }
    let width = HelpTable.labelWidth(for: argumentRows + optionRows)
    if !arguments.isEmpty {
      text += "\nARGUMENTS:\n"
      text += HelpTable.render(argumentRows, labelWidth: width)
    }
    text += "\nOPTIONS:\n"
    text += HelpTable.render(optionRows, labelWidth: width)
    return text
  }

  /// Parses `arguments` into converted values; `nil` when `--help` was given.
  ///
  /// Unknown options fail at once; values are converted only when help was not asked for,
  /// so `--help` works on a line that is still wrong.
  func parse(_ arguments: [String]) throws(CLIError) -> ParsedValues? {
    var positionals: [String] = []
    var given: [(declaration: ArgumentDeclaration, text: String)] = []
    var wantsHelp = false
    var remaining = arguments[...]
    var optionsEnded = false
    while let argument = remaining.popFirst() {
      if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      let option = try option(named: name)
      guard option.takesValue else {
        if inlineValue != nil {
          throw usage("The option '\(option.name)' takes no value.")
        }
        if option.name == ArgumentDeclaration.help.name {
          wantsHelp = true
          continue
        }
        given.append((option, ""))
        continue
      }
      // A following word that is itself an option is not taken as the value: `--report
      // --quiet` would write a file named "--quiet" and never be quiet. `-` stays a value.
      if inlineValue == nil, let next = remaining.first, next.hasPrefix("-"), next != "-" {
        throw usage(
          "Missing value for '\(option.synopsis)' before '\(next)'; a value that starts with '-'"
            + " is written '\(option.name)=\(next)'.")
      }
      guard let value = inlineValue ?? remaining.popFirst() else {
        throw usage("Missing value for '\(option.synopsis)'.")
      }
      // `--report=` names nothing, whatever the option takes.
      guard !value.isEmpty else {
        let what = option.valueName.split(separator: "|").map { "a \($0)" }
        throw usage(
          "The value for '\(option.synopsis)' is empty; give \(what.joined(separator: " or ")).")
      }
      if !option.repeating, given.contains(where: { $0.declaration.name == option.name }) {
        throw usage("The option '\(option.name)' can be given only once.")
      }
      given.append((option, value))
    }
    if wantsHelp { return nil }
    var values = ParsedValues()
    try assign(positionals, to: &values)
    for (declaration, text) in given {
      do {
        values.append(try declaration.convert(text, declaration), to: declaration.name)
      } catch {
        throw error.withUsage(of: self)
      }
    }
    return values
  }

  private func option(named name: String) throws(CLIError) -> ArgumentDeclaration {
    let match = allOptions.first { $0.name == name || $0.short.map { "-\($0)" } == name }
    guard let match else {
      let hint = Suggestions.didYouMean(name, in: allOptions.map(\.name))
      throw usage("Unknown option '\(name)'.\(hint)")
    }
    return match
  }

  /// Hands the positional arguments to the declared ones, in order.
  private func assign(_ positionals: [String], to values: inout ParsedValues) throws(CLIError) {
    var remaining = positionals[...]
    for (index, argument) in arguments.enumerated() {
      guard let first = remaining.popFirst() else {
        // `cache app.json` took the manifest for the action: say so.
        let taken =
          index > 0
          ? " ('\(positionals[index - 1])' was taken as the \(arguments[index - 1].synopsis))" : ""
        throw usage("Missing expected argument '\(argument.synopsis)'\(taken).")
      }
      values.append(first, to: argument.name)
      if argument.repeating {
        while let next = remaining.popFirst() { values.append(next, to: argument.name) }
      }
    }
    if let extra = remaining.first {
      let takes = arguments.last.map { "one \($0.name)" } ?? "none"
      throw usage("Unexpected argument '\(extra)'; '\(name)' takes \(takes).")
    }
  }

  private func usage(_ message: String) -> CLIError {
    CLIError.usage(message, command: self)
  }
}

/// Two aligned columns, two-space indent, as swift-argument-parser prints them.
enum HelpTable {
  static func labelWidth(for rows: [(label: String, help: String)]) -> Int {
    max(22, (rows.map(\.label.count).max() ?? 0) + 4)
  }

  static func render(_ rows: [(label: String, help: String)], labelWidth: Int? = nil) -> String {
    let width = labelWidth ?? self.labelWidth(for: rows)
    return rows.map { row in
      let padding = String(repeating: " ", count: max(2, width - row.label.count))
      let indent = String(repeating: " ", count: width + 2)
      let help = wrap(row.help, width: max(40, 80 - width - 2))
        .split(separator: "\n", omittingEmptySubsequences: false)
        .joined(separator: "\n" + indent)
      return "  \(row.label)\(padding)\(help)\n"
    }.joined()
  }

  /// Breaks `text` into lines of at most `width` characters at spaces.
  static func wrap(_ text: String, width: Int) -> String {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
      if !line.isEmpty, line.count + 1 + word.count > width {
        lines.append(line)
        line = ""
      }
      line += line.isEmpty ? String(word) : " " + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines.joined(separator: "\n")
  }
}
