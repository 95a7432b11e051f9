extension ManifestFields {
  /// The field reference of docs/manifest.md: one table per kind of object, made from the
  /// declarations, so the docs say exactly what the reader accepts.
  package static var reference: String {
    var objects: [ManifestObjectInfo] = []
    func collect(_ info: ManifestObjectInfo) {
      guard !objects.contains(where: { $0.name == info.name }) else { return }
      objects.append(info)
      for field in info.fields {
        switch field.shape {
        case .object(let nested), .array(let nested): collect(nested)
        default: continue
        }
      }
    }
    collect(.topLevel)
    return objects.map(table).joined(separator: "\n")
  }

  private static func table(_ info: ManifestObjectInfo) -> String {
    let title = info.name == ManifestObjectInfo.topLevel.name ? "Top level" : "`\(info.name)`"
    var lines = ["### \(title)", "", "| key | type | default | meaning |", "|---|---|---|---|"]
    for field in info.fields {
      let defaultText: String
      switch field.requirement {
      case .required: defaultText = "required"
      case .optional(let text): defaultText = text
      }
      lines.append(
        "| `\(field.key)` | \(describe(field.shape)) | \(defaultText) | \(field.summary) |")
    }
    let rules = sentences(of: info.rules, object: info.name)
    return lines.joined(separator: "\n") + "\n" + (rules.isEmpty ? "" : "\n" + rules + "\n")
  }

  /// The rules of an object, one sentence for the keys each setting excludes: "With
  /// `"trigger": "onDemand"`, a step cannot have `when`, `once` or `cache`."
  private static func sentences(of rules: [ManifestRuleInfo], object: String) -> String {
    var settings: [(setting: String, excluded: [String])] = []
    for rule in rules {
      let setting = rule.value.map { "`\"\(rule.key)\": \"\($0)\"`" } ?? "`\(rule.key)`"
      if let index = settings.firstIndex(where: { $0.setting == setting }) {
        settings[index].excluded.append(rule.excluded)
      } else {
        settings.append((setting, [rule.excluded]))
      }
    }
    return settings.map { setting, excluded in
      let keys = excluded.map { "`\($0)`" }
      let list =
        keys.count > 1 ? keys.dropLast().joined(separator: ", ") + " or " + keys.last! : keys[0]
      return "With \(setting), a \(object) cannot have \(list)."
    }.joined(separator: " ")
  }

  private static func describe(_ shape: ManifestShape) -> String {
    switch shape {
    case .constant(let value): "`\(value)`"
    case .string(let minLength): minLength > 0 ? "non-empty string" : "string"
    // A bound the field leaves open is the reader's own.
    case .integer(let minimum, let maximum):
      "integer \(minimum ?? -ManifestReader.integerLimit)-\(maximum ?? ManifestReader.integerLimit)"
    case .duration: "duration"
    case .positiveDuration: "duration above 0"
    case .priority:
      StepPriority.allCases.reversed().map { "`\($0)`" }.joined(separator: " \\| ")
    case .failurePolicy:
      FailurePolicy.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .isolation: StepIsolation.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .stepIDs: "array of step ids"
    case .signalNames(let unique): "array of \(unique ? "distinct " : "")signal names"
    case .trigger: StepTrigger.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .boolean: "boolean"
    case .names: "array of one name or more"
    case .version: "version string"
    case .once: RunOnce.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .milestoneName: "milestone name"
    case .pluginKind: "plugin kind"
    case .params: "object"
    case .milestoneMap: "object"
    case .nullable(let shape): describe(shape) + " or `null`"
    case .object(let info): "[`\(info.name)`](#\(info.name.lowercased())) object"
    case .array(let info): "array of [`\(info.name)`](#\(info.name.lowercased())) objects"
    }
  }
}
