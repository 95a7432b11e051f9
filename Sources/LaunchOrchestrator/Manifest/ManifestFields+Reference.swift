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
    return lines.joined(separator: "\n") + "\n"
  }

  private static func describe(_ shape: ManifestShape) -> String {
    switch shape {
    case .constant(let value): "`\(value)`"
    case .string(let minLength): minLength > 0 ? "non-empty string" : "string"
    case .integer(let minimum?, let maximum?): "integer \(minimum)-\(maximum)"
    case .integer(let minimum?, nil): "integer >= \(minimum)"
    case .integer(nil, let maximum?): "integer <= \(maximum)"
    case .integer(nil, nil): "integer"
    case .duration: "duration"
    case .priority:
      StepPriority.allCases.reversed().map { "`\($0)`" }.joined(separator: " \\| ")
    case .failurePolicy:
      FailurePolicy.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .isolation: StepIsolation.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .stepIDs: "array of step ids"
    case .signalNames: "array of signal names"
    case .trigger: StepTrigger.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .boolean: "boolean"
    case .names: "array of names"
    case .once: RunOnce.allCases.map { "`\($0.rawValue)`" }.joined(separator: " \\| ")
    case .milestoneName: "milestone name"
    case .pluginKind: "plugin kind"
    case .params: "object"
    case .milestoneMap: "object"
    case .object(let info): "[`\(info.name)`](#\(info.name)) object"
    case .array(let info): "array of [`\(info.name)`](#\(info.name)) objects"
    }
  }
}
