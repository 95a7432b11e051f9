/// Reads a ``Manifest`` out of a parsed JSON document, reporting every field that is missing,
/// unknown or of the wrong shape.
struct ManifestReader {
  private static let manifestKeys = [
    "$schema", "version", "name", "maxConcurrency", "defaults", "milestones", "steps",
  ]
  private static let defaultsKeys = ["timeout", "priority", "onFailure", "retry"]
  private static let stepKeys = [
    "id", "plugin", "params", "priority", "dependsOn", "after", "timeout", "retry", "onFailure",
    "fallback", "delay", "deferUntil", "isolation", "expectedDuration", "description",
  ]
  private static let retryKeys = ["attempts", "backoff"]
  private static let fallbackKeys = ["params", "plugin"]

  var diagnostics: DiagnosticCollector
  let fallbackName: String
  /// For each step read, its index in the source's `steps` array: steps that could not be
  /// read are left out of the manifest, and diagnostics must still point at the right element.
  private(set) var stepSourceIndices: [Int] = []

  /// Reads the manifest; `nil` only when the root is not an object at all.
  mutating func read() -> Manifest? {
    let root = diagnostics.root
    guard object(root, at: .root, allowed: Self.manifestKeys) != nil else { return nil }

    var version = 1
    if let value = root["version"] {
      if let number = integer(value, at: .root.appending("version")) {
        if number != 1 {
          diagnostics.report(
            "unsupported manifest version \(number); this orchestrator reads version 1.",
            at: .root.appending("version"))
        }
        version = number
      }
    } else {
      diagnostics.report("missing key 'version'; add \"version\": 1.", at: .root)
    }

    let name = root["name"].flatMap { string($0, at: .root.appending("name")) } ?? fallbackName

    var maxConcurrency: Int?
    if let value = root["maxConcurrency"], value.kind != .null {
      let path = JSONPath.root.appending("maxConcurrency")
      if let number = integer(value, at: path) {
        if number < 1 {
          diagnostics.report(
            "'maxConcurrency' must be at least 1, or left out for no limit.", at: path)
        } else {
          maxConcurrency = number
        }
      }
    }

    let defaults =
      root["defaults"].map { readDefaults($0, at: .root.appending("defaults")) } ?? StepDefaults()
    let milestones =
      root["milestones"].map { readMilestones($0, at: .root.appending("milestones")) } ?? []

    var steps: [StepDeclaration] = []
    if let value = root["steps"] {
      let path = JSONPath.root.appending("steps")
      if let elements = value.elements {
        for (index, element) in elements.enumerated() {
          if let step = readStep(element, at: path.appending(index)) {
            steps.append(step)
            stepSourceIndices.append(index)
          }
        }
      } else {
        diagnostics.report(
          "'steps' must be an array of step objects, not \(value.typeDescription).", at: path)
      }
    } else {
      diagnostics.report(
        "missing key 'steps'; a manifest declares its steps in an array.", at: .root)
    }
    return Manifest(
      version: version, name: name, maxConcurrency: maxConcurrency, defaults: defaults,
      milestones: milestones, steps: steps)
  }

  private mutating func readDefaults(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> StepDefaults
  {
    var defaults = StepDefaults()
    guard object(value, at: path(), allowed: Self.defaultsKeys) != nil else { return defaults }
    if let timeout = value["timeout"] {
      defaults.timeout = duration(timeout, at: path().appending("timeout"))
    }
    if let priority = value["priority"],
      let parsed = self.priority(priority, at: path().appending("priority"))
    {
      defaults.priority = parsed
    }
    if let policy = value["onFailure"],
      let parsed = failurePolicy(policy, at: path().appending("onFailure"))
    {
      defaults.onFailure = parsed
    }
    if let retry = value["retry"], let parsed = self.retry(retry, at: path().appending("retry")) {
      defaults.retry = parsed
    }
    return defaults
  }

  private mutating func readMilestones(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> [MilestoneDeclaration]
  {
    guard let members = value.members else {
      diagnostics.report(
        "'milestones' must be an object mapping each milestone name to an array of step ids.",
        at: path())
      return []
    }
    return members.compactMap { member in
      let memberPath = path().appending(member.key)
      if member.key.isEmpty {
        diagnostics.reportKey("a milestone name cannot be empty.", at: memberPath)
        return nil
      }
      guard let ids = stringArray(member.value, at: memberPath, what: "step ids") else {
        return nil
      }
      return MilestoneDeclaration(name: member.key, steps: ids)
    }
  }

  private mutating func readStep(_ value: JSONValue, at path: JSONPath) -> StepDeclaration? {
    guard object(value, at: path, allowed: Self.stepKeys) != nil else { return nil }
    var id: String?
    if let idValue = value["id"] {
      id = string(idValue, at: path.appending("id"))
      if id?.isEmpty == true {
        diagnostics.report("a step id cannot be empty.", at: path.appending("id"))
        id = nil
      }
    } else {
      diagnostics.report("missing key 'id'; every step needs a unique id.", at: path)
    }
    var plugin: String?
    if let pluginValue = value["plugin"] {
      plugin = string(pluginValue, at: path.appending("plugin"))
    } else {
      diagnostics.report("missing key 'plugin'; say which step kind runs this step.", at: path)
    }

    var step = StepDeclaration(id: id ?? "", plugin: plugin ?? "")
    if let params = value["params"] {
      if params.members == nil, params.kind != .null {
        diagnostics.report(
          "'params' must be an object, not \(params.typeDescription).", at: path.appending("params")
        )
      } else if params.kind != .null {
        step.params = params
      }
    }
    if let priority = value["priority"] {
      step.priority = self.priority(priority, at: path.appending("priority"))
    }
    if let deps = value["dependsOn"] {
      step.dependsOn = stringArray(deps, at: path.appending("dependsOn"), what: "step ids") ?? []
    }
    if let after = value["after"] {
      step.after = stringArray(after, at: path.appending("after"), what: "step ids") ?? []
    }
    if let timeout = value["timeout"] {
      step.timeout = duration(timeout, at: path.appending("timeout"))
    }
    if let retry = value["retry"] { step.retry = self.retry(retry, at: path.appending("retry")) }
    if let policy = value["onFailure"] {
      step.onFailure = failurePolicy(policy, at: path.appending("onFailure"))
    }
    if let fallback = value["fallback"] {
      step.fallback = self.fallback(fallback, at: path.appending("fallback"))
    }
    if let delay = value["delay"] {
      step.delay = duration(delay, at: path.appending("delay")) ?? .zero
    }
    if let deferUntil = value["deferUntil"] {
      step.deferUntil = string(deferUntil, at: path.appending("deferUntil"))
    }
    if let isolation = value["isolation"] {
      let isolationPath = path.appending("isolation")
      if let text = string(isolation, at: isolationPath) {
        if let parsed = StepIsolation(rawValue: text) {
          step.isolation = parsed
        } else {
          diagnostics.report(
            "unknown isolation '\(text)'; use \"main\" to run on the main actor, or leave it out.",
            at: isolationPath)
        }
      }
    }
    if let expected = value["expectedDuration"] {
      step.expectedDuration = duration(expected, at: path.appending("expectedDuration"))
    }
    if let description = value["description"] {
      _ = string(description, at: path.appending("description"))
    }
    return id == nil || plugin == nil ? nil : step
  }

  private mutating func fallback(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> FallbackDeclaration?
  {
    guard object(value, at: path(), allowed: Self.fallbackKeys) != nil else { return nil }
    var fallback = FallbackDeclaration()
    if let params = value["params"] {
      if params.members == nil {
        diagnostics.report(
          "'params' must be an object, not \(params.typeDescription).",
          at: path().appending("params")
        )
      } else {
        fallback.params = params
      }
    }
    if let plugin = value["plugin"] {
      fallback.plugin = string(plugin, at: path().appending("plugin"))
    }
    if fallback.params == nil, fallback.plugin == nil, value.members?.isEmpty == true {
      diagnostics.report(
        "an empty fallback only runs the step once more; give it 'params' or a 'plugin', or use 'retry'.",
        at: path(), severity: .warning)
    }
    return fallback
  }

  private mutating func retry(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> RetryPolicy?
  {
    guard object(value, at: path(), allowed: Self.retryKeys) != nil else { return nil }
    var policy = RetryPolicy(attempts: 1, backoff: .zero)
    if let attempts = value["attempts"] {
      if let number = integer(attempts, at: path().appending("attempts")) {
        if number < 1 || number > 100 {
          diagnostics.report(
            "'attempts' counts every attempt including the first; use a number from 1 to 100.",
            at: path().appending("attempts"))
        } else {
          policy.attempts = number
        }
      }
    } else {
      diagnostics.report("missing key 'attempts' in 'retry'.", at: path())
    }
    if let backoff = value["backoff"],
      let parsed = duration(backoff, at: path().appending("backoff"))
    {
      policy.backoff = parsed
    }
    return policy
  }

  // MARK: Field readers

  /// The members of an object, reporting unknown keys; `nil` (and a diagnostic) if not an object.
  private mutating func object(
    _ value: JSONValue, at path: @autoclosure () -> JSONPath, allowed: [String]
  )
    -> [JSONMember]?
  {
    guard let members = value.members else {
      diagnostics.report(
        "\(path() == .root ? "a manifest" : "'\(path())'") must be an object, not \(value.typeDescription).",
        at: path())
      return nil
    }
    for member in members where !allowed.contains(member.key) {
      let hint = Suggestions.closest(to: member.key, in: allowed)
      let advice =
        hint.map { " Did you mean '\($0)'?" }
        ?? " Allowed keys: \(allowed.joined(separator: ", "))."
      diagnostics.reportKey(
        "unknown key '\(member.key)'.\(advice)", at: path().appending(member.key))
    }
    return members
  }

  private mutating func string(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> String?
  {
    guard let string = value.stringValue else {
      diagnostics.report("expected a string, found \(value.typeDescription).", at: path())
      return nil
    }
    return string
  }

  private mutating func integer(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> Int? {
    guard case .number(let number) = value.kind, number == number.rounded(),
      let integer = Int(exactly: number),
      abs(integer) < 1 << 31
    else {
      diagnostics.report(
        "expected a whole number, found \(value.typeDescription(numberText: true)).", at: path())
      return nil
    }
    return integer
  }

  private mutating func duration(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> Duration?
  {
    switch value.kind {
    case .number(let seconds):
      if let duration = DurationText.seconds(seconds) { return duration }
      diagnostics.report(
        "a duration cannot be negative or this large (found \(seconds)).", at: path())
    case .string(let text):
      if let duration = DurationText.parse(text) { return duration }
      diagnostics.report(
        "'\(text)' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
        at: path())
    default:
      diagnostics.report(
        "expected a duration such as \"2s\", found \(value.typeDescription).", at: path())
    }
    return nil
  }

  private mutating func priority(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> StepPriority?
  {
    guard let text = string(value, at: path()) else { return nil }
    if let priority = StepPriority(name: text) { return priority }
    let names = StepPriority.allCases.reversed().map(\.description)
    let hint = Suggestions.didYouMean(text, in: names)
    diagnostics.report(
      "unknown priority '\(text)'.\(hint) Priorities are \(names.joined(separator: ", ")).",
      at: path())
    return nil
  }

  private mutating func failurePolicy(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> FailurePolicy?
  {
    guard let text = string(value, at: path()) else { return nil }
    if let policy = FailurePolicy(rawValue: text) { return policy }
    diagnostics.report(
      "unknown failure policy '\(text)'.\(Suggestions.didYouMean(text, in: ["abort", "continue"])) Use \"abort\" or \"continue\".",
      at: path())
    return nil
  }

  private mutating func stringArray(
    _ value: JSONValue, at path: @autoclosure () -> JSONPath, what: String
  )
    -> [String]?
  {
    guard let elements = value.elements else {
      diagnostics.report(
        "expected an array of \(what), found \(value.typeDescription).", at: path())
      return nil
    }
    var strings: [String] = []
    for (index, element) in elements.enumerated() {
      if let text = string(element, at: path().appending(index)) { strings.append(text) }
    }
    // Partial lists would shift later diagnostics' indices off their source elements.
    return strings.count == elements.count ? strings : nil
  }
}

extension JSONValue {
  fileprivate func typeDescription(numberText: Bool) -> String {
    if numberText, case .number(let number) = kind { return "\(number)" }
    return typeDescription
  }
}
