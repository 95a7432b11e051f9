import LaunchOrchestrator

/// How an option's text becomes a typed value, with the error to print when it cannot.
package struct ValueParser<Value: Sendable>: Sendable {
  /// Converts `text`, given for `option`; throws the usage error to print.
  package let parse:
    @Sendable (_ text: String, _ option: ArgumentDeclaration) throws(CLIError) -> Value

  /// A parser from a conversion that may fail with a message naming the option.
  package init(
    _ parse:
      @escaping @Sendable (_ text: String, _ option: ArgumentDeclaration) throws(CLIError)
      -> Value
  ) {
    self.parse = parse
  }
}

extension ValueParser where Value == String {
  /// Any text: a file or folder name (an empty one is refused for every option).
  package static var path: Self { Self { text, _ in text } }
}

extension ValueParser where Value == Int {
  /// A whole number of at least 1, such as a concurrency limit.
  package static var positiveInteger: Self {
    Self { text, option throws(CLIError) in
      guard let value = Int(text), value >= 1 else {
        throw CLIError.invalidValue(
          "The value '\(text)' for '\(option.synopsis)' must be a whole number of at least 1.")
      }
      return value
    }
  }
}

extension ValueParser where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
  /// One of the type's raw values, with a did-you-mean for a near miss.
  package static var oneOf: Self {
    Self { text, option throws(CLIError) in
      if let value = Value(rawValue: text) { return value }
      let names = Value.allCases.map(\.rawValue)
      let hint = Suggestions.didYouMean(text, in: names)
      let choices = names.map { "'\($0)'" }.joined(separator: " or ")
      throw CLIError.invalidValue(
        "Unknown \(option.valueNoun) '\(text)' for '\(option.name)'.\(hint) Use \(choices).")
    }
  }
}

extension ArgumentDeclaration {
  /// What the value is called in messages: `format` for `--format`.
  var valueNoun: String { String(name.drop { $0 == "-" }) }
}
