import LaunchJSON

extension ManifestReader {
  mutating func boolean(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> Bool? {
    guard case .bool(let flag) = value.kind else {
      diagnostics.report("expected true or false, found \(value.typeDescription).", at: path())
      return nil
    }
    return flag
  }
}
