import Foundation
import LaunchOrchestrator

/// The shape of one command: its arguments and options, from which both parsing and help
/// are derived, in the layout of swift-argument-parser.
struct CommandSpec {
  struct Argument {
    var name: String
    var help: String
    var repeating = false
  }

  struct Option {
    var name: String
    var valueName: String?
    var help: String
    var repeating = false
    var short: Character? = nil

    var label: String {
      let long = valueName.map { "\(name) <\($0)>" } ?? name
      return short.map { "-\($0), \(long)" } ?? long
    }
  }

  var name: String
  var abstract: String
  var discussion: String? = nil
  var arguments: [Argument] = []
  var options: [Option] = []

  static let helpOption = Option(name: "--help", help: "Show help information.", short: "h")

  var allOptions: [Option] { options + [Self.helpOption] }

  var usageLine: String {
    var parts = ["orchestrate", name]
    for argument in arguments {
      parts.append(argument.repeating ? "<\(argument.name)> ..." : "<\(argument.name)>")
    }
    for option in options {
      let text = option.valueName.map { "\(option.name) <\($0)>" } ?? option.name
      parts.append(option.repeating ? "[\(text) ...]" : "[\(text)]")
    }
    return parts.joined(separator: " ")
  }

  var help: String {
    var text = "OVERVIEW: \(abstract)\n"
    if let discussion { text += "\n\(HelpTable.wrap(discussion, width: 80))\n" }
    text += "\nUSAGE: \(usageLine)\n"
    let argumentRows = arguments.map { ("<\($0.name)>", $0.help) }
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
      let help = wrap(row.help, width: max(40, 80 - width - 2)).replacingOccurrences(
        of: "\n", with: "\n" + indent)
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

/// The arguments and options given to one command.
struct ParsedArguments {
  var positionals: [String] = []
  private(set) var values: [String: [String]] = [:]
  var wantsHelp = false

  func value(_ option: String) -> String? { values[option]?.last }
  func values(_ option: String) -> [String] { values[option] ?? [] }
  func has(_ option: String) -> Bool { values[option] != nil }

  /// Parses `arguments` against `spec`.
  static func parse(_ arguments: [String], for spec: CommandSpec) throws(CLIError)
    -> ParsedArguments
  {
    var parsed = ParsedArguments()
    var remaining = arguments[...]
    var optionsEnded = false
    while let argument = remaining.popFirst() {
      if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
        parsed.positionals.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      guard
        let option = spec.allOptions.first(where: {
          $0.name == name || $0.short.map { "-\($0)" } == name
        })
      else {
        let names = spec.allOptions.map(\.name)
        let hint = Suggestions.didYouMean(name, in: names)
        throw .usage("Unknown option '\(name)'.\(hint)", command: spec)
      }
      if option.name == CommandSpec.helpOption.name {
        parsed.wantsHelp = true
        continue
      }
      guard let valueName = option.valueName else {
        if inlineValue != nil {
          throw .usage("The option '\(option.name)' takes no value.", command: spec)
        }
        parsed.values[option.name, default: []].append("")
        continue
      }
      guard let value = inlineValue ?? remaining.popFirst() else {
        throw .usage("Missing value for '\(option.name) <\(valueName)>'.", command: spec)
      }
      if !option.repeating, parsed.values[option.name] != nil {
        throw .usage("The option '\(option.name)' can be given only once.", command: spec)
      }
      parsed.values[option.name, default: []].append(value)
    }
    return parsed
  }
}
