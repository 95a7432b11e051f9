import LaunchJSON

/// Collects diagnostics for one manifest file, locating each by its JSON path.
struct DiagnosticCollector {
  let file: String
  /// The parsed manifest, to find values by their paths in: a loaded manifest's tape, or a
  /// tree of values.
  private var document: Document
  /// The bytes the document was parsed from, to locate diagnostics in.
  private let bytes: [UInt8]
  /// The bytes' line table, made at the first diagnostic: most loads report none.
  private var source: SourceText?
  private(set) var diagnostics: [ManifestDiagnostic] = []

  private enum Document {
    case tree(JSONValue)
    case tape(JSONTapeLocator)
  }

  /// Diagnostics of the manifest whose parsed values are `root`.
  init(file: String, bytes: [UInt8], root: JSONValue) {
    self.file = file
    self.bytes = bytes
    document = .tree(root)
  }

  /// Diagnostics of the manifest parsed into `tape`.
  init(file: String, tape: JSONTape) {
    self.file = file
    bytes = tape.bytes
    document = .tape(JSONTapeLocator(tape: tape))
  }

  /// The tape the manifest was parsed into, when it was.
  var tape: JSONTape? {
    if case .tape(let locator) = document { return locator.tape }
    return nil
  }

  /// The root value, made from the tape when the manifest was parsed into one.
  var root: JSONValue {
    switch document {
    case .tree(let root): root
    case .tape(let locator): locator.tape.value(at: locator.tape.root)
    }
  }

  /// The offset of the value at `path`, if the document has one there.
  mutating func offset(at path: JSONPath) -> Int? {
    switch document {
    case .tree(let root):
      return root.value(at: path)?.offset
    case .tape(var locator):
      // Taken out while it changes, so that its table of elements is not copied.
      document = .tree(JSONValue(.null))
      defer { document = .tape(locator) }
      return locator.index(at: path).map(locator.tape.offset(of:))
    }
  }

  var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

  /// Reports a problem at `path`, located at `offset` or else at the nearest value on the path.
  mutating func report(
    _ message: String, at path: JSONPath, offset: Int? = nil,
    severity: ManifestDiagnostic.Severity = .error
  ) {
    var position: SourcePosition?
    if let offset = offset ?? nearestOffset(of: path) { position = self.position(of: offset) }
    let step = stepID(containing: path)
    diagnostics.append(
      ManifestDiagnostic(
        severity: severity, file: file, path: path, step: step, position: position,
        message: message))
  }

  /// The id of the step `path` lies in, read from the document itself, so that steps the
  /// reader had to leave out of the manifest are still named when their id is readable.
  private mutating func stepID(containing path: JSONPath) -> String? {
    guard path.components.count >= 2, path.components[0] == .key("steps"),
      case .index = path.components[1]
    else { return nil }
    let stepPath = JSONPath(components: Array(path.components.prefix(2)))
    let id: String?
    switch document {
    case .tree(let root):
      id = root.value(at: stepPath)?["id"]?.stringValue
    case .tape(var locator):
      document = .tree(JSONValue(.null))
      defer { document = .tape(locator) }
      let tape = locator.tape
      id = locator.index(at: stepPath).flatMap { tape.member("id", of: $0) }.flatMap {
        tape.kind(of: $0) == .string ? tape.string(at: $0) : nil
      }
    }
    guard let id, !id.isEmpty else { return nil }
    return id
  }

  /// Reports a problem with a member's key, located at the key itself.
  mutating func reportKey(_ message: String, at path: JSONPath) {
    let parent = JSONPath(components: path.components.dropLast())
    var offset: Int?
    if case .key(let key) = path.components.last {
      switch document {
      case .tree(let root):
        offset = root.value(at: parent)?.members?.first { $0.key == key }?.keyOffset
      case .tape(var locator):
        document = .tree(JSONValue(.null))
        defer { document = .tape(locator) }
        let tape = locator.tape
        // Compared as `String`s, as the tree's members are above.
        if let object = locator.index(at: parent), tape.kind(of: object) == .object {
          var members = tape.members(of: object)
          while offset == nil, let member = members.next() {
            if tape.string(at: member.key) == key { offset = tape.offset(of: member.key) }
          }
        }
      }
    }
    report(message, at: path, offset: offset)
  }

  private mutating func nearestOffset(of path: JSONPath) -> Int? {
    var components = path.components[...]
    while true {
      if let offset = offset(at: JSONPath(components: Array(components))) {
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
