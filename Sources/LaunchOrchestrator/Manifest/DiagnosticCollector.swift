import LaunchJSON

/// Collects diagnostics for one manifest file, locating each by its JSON path.
struct DiagnosticCollector {
  let file: String
  let root: JSONValue
  /// The bytes `root` was parsed from, to locate diagnostics in.
  private let bytes: [UInt8]
  /// The bytes' line table, made at the first diagnostic: most loads report none.
  private var source: SourceText?
  private(set) var diagnostics: [ManifestDiagnostic] = []

  init(file: String, bytes: [UInt8], root: JSONValue) {
    self.file = file
    self.bytes = bytes
    self.root = root
  }

  var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

  /// Reports a problem at `path`, located at `offset` or else at the nearest value on the path.
  mutating func report(
    _ message: String, at path: JSONPath, offset: Int? = nil,
    severity: ManifestDiagnostic.Severity = .error
  ) {
    var position: SourcePosition?
    if let offset = offset ?? nearestOffset(of: path) { position = self.position(of: offset) }
    diagnostics.append(
      ManifestDiagnostic(
        severity: severity, file: file, path: path, step: stepID(containing: path),
        position: position, message: message))
  }

  /// The id of the step `path` lies in, read from the document itself, so that steps the
  /// reader had to leave out of the manifest are still named when their id is readable.
  private func stepID(containing path: JSONPath) -> String? {
    guard path.components.count >= 2, path.components[0] == .key("steps"),
      case .index = path.components[1],
      let id = root.value(at: JSONPath(components: Array(path.components.prefix(2))))?["id"]?
        .stringValue, !id.isEmpty
    else { return nil }
    return id
  }

  /// Reports a problem with a member's key, located at the key itself.
  mutating func reportKey(_ message: String, at path: JSONPath) {
    let parent = JSONPath(components: path.components.dropLast())
    var offset: Int?
    if case .key(let key) = path.components.last {
      offset = root.value(at: parent)?.members?.first { $0.key == key }?.keyOffset
    }
    report(message, at: path, offset: offset)
  }

  private func nearestOffset(of path: JSONPath) -> Int? {
    var components = path.components[...]
    while true {
      if let offset = root.value(at: JSONPath(components: Array(components)))?.offset {
        return offset
      }
      if components.isEmpty { return nil }
      components.removeLast()
    }
  }

  private mutating func position(of offset: Int) -> SourcePosition {
    if let source { return source.position(of: offset) }
    let source = SourceText(bytes: bytes)
    self.source = source
    return source.position(of: offset)
  }

  /// Diagnostics sorted by position, errors before warnings at the same place.
  var sorted: [ManifestDiagnostic] {
    diagnostics.enumerated().sorted { lhs, rhs in
      let left = lhs.element.position.map { ($0.line, $0.column) } ?? (Int.max, Int.max)
      let right = rhs.element.position.map { ($0.line, $0.column) } ?? (Int.max, Int.max)
      if left != right { return left < right }
      return lhs.offset < rhs.offset
    }.map(\.element)
  }
}
