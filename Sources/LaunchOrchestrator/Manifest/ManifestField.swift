import LaunchJSON

/// One key of a manifest object, declared once: how it is read into the Swift value, its
/// JSON Schema, and its row in the field reference of docs/manifest.md all come from here.
///
/// The tables are in ``ManifestFields``; adding a manifest field means adding one
/// declaration there (and the engine code that uses it).
struct ManifestField<Target>: Sendable {
  /// What the declaration says about the field, for the schema and the docs.
  let info: ManifestFieldInfo
  /// Reads the member's value (at the lazily built path) into the target.
  let read: @Sendable (inout ManifestReader, JSONValue, () -> JSONPath, inout Target) -> Void

  var key: String { info.key }
}

/// A manifest field's declaration without its reader: key, shape, default and meaning.
struct ManifestFieldInfo: Sendable {
  /// Whether a manifest must give the field, and what happens when it does not.
  enum Requirement: Sendable {
    /// Leaving it out is an error with this message.
    case required(missing: String)
    /// It may be left out; `defaultText` says what applies then, for the docs.
    case optional(defaultText: String)
  }

  let key: String
  let shape: ManifestShape
  let requirement: Requirement
  let summary: String

  var isRequired: Bool {
    if case .required = requirement { return true }
    return false
  }
}

/// The keys one kind of manifest object holds.
struct ManifestObjectInfo: Sendable {
  /// The object's name in the docs and, for objects defined once in the schema, its `$defs`
  /// entry (`step`, `retry`).
  let name: String
  /// Whether the schema defines it once under `$defs` instead of inline.
  let isDefinition: Bool
  /// Its fields, from its table when the schema or the docs ask: reading a manifest needs
  /// only the tables, and an object's information is part of its parent's shape.
  var fields: [ManifestFieldInfo] { makeFields() }
  private let makeFields: @Sendable () -> [ManifestFieldInfo]

  init(
    name: String, isDefinition: Bool = false,
    fields: @escaping @Sendable () -> [ManifestFieldInfo]
  ) {
    self.name = name
    self.isDefinition = isDefinition
    makeFields = fields
  }

  var keys: [String] { fields.map(\.key) }
}

/// The shape of a field's value: what the schema checks and the docs say.
indirect enum ManifestShape: Sendable {
  /// Exactly this number.
  case constant(Int)
  /// A string, at least `minLength` long.
  case string(minLength: Int)
  /// A whole number within bounds.
  case integer(minimum: Int?, maximum: Int?)
  /// A duration string or a number of seconds.
  case duration
  /// A step priority name.
  case priority
  /// `abort` or `continue`.
  case failurePolicy
  /// `default` or `main`.
  case isolation
  /// An array of step ids.
  case stepIDs
  /// An array of signal names.
  case signalNames
  /// `launch` or `onDemand`.
  case trigger
  /// `true` or `false`.
  case boolean
  /// An array of names (launch reasons).
  case names
  /// `perInstall` or `perVersion`.
  case once
  /// The name of a milestone of the manifest.
  case milestoneName
  /// A registered plugin kind.
  case pluginKind
  /// A plugin's params object.
  case params
  /// An object mapping milestone names to step ids.
  case milestoneMap
  /// An object with declared keys.
  case object(ManifestObjectInfo)
  /// An array of objects with declared keys.
  case array(ManifestObjectInfo)
}

extension ManifestField {
  /// A field read by `read` into the property `into` sets, which keeps its value when the
  /// field is left out or `read` returns `nil`. A closure rather than a key path: each key
  /// path is an object of a generic class made at run time, some 20,000 instructions apiece
  /// the first time, and these tables are built before a launch's first step.
  ///
  /// A value outside what `shape` allows (a string shorter than its `minLength`, a number out
  /// of its bounds or other than its constant) is reported before `read` sees it, with
  /// `invalid`'s message for the value as written when given, else a plain one.
  static func value<Value>(
    _ key: String, _ shape: ManifestShape, default defaultText: String = "", _ summary: String,
    invalid: (@Sendable (String) -> String)? = nil,
    into set: @escaping @Sendable (inout Target, Value) -> Void,
    read: @escaping @Sendable (inout ManifestReader, JSONValue, () -> JSONPath) -> Value?
  ) -> Self {
    field(
      key, shape, .optional(defaultText: defaultText), summary, invalid: invalid, into: set,
      read: read)
  }

  /// A field the manifest must give; `missing` is the error when it does not.
  static func required<Value>(
    _ key: String, _ shape: ManifestShape, _ summary: String, missing: String,
    invalid: (@Sendable (String) -> String)? = nil,
    into set: @escaping @Sendable (inout Target, Value) -> Void,
    read: @escaping @Sendable (inout ManifestReader, JSONValue, () -> JSONPath) -> Value?
  ) -> Self {
    field(
      key, shape, .required(missing: missing), summary, invalid: invalid, into: set, read: read)
  }

  private static func field<Value>(
    _ key: String, _ shape: ManifestShape, _ requirement: ManifestFieldInfo.Requirement,
    _ summary: String, invalid: (@Sendable (String) -> String)?,
    into set: @escaping @Sendable (inout Target, Value) -> Void,
    read: @escaping @Sendable (inout ManifestReader, JSONValue, () -> JSONPath) -> Value?
  ) -> Self {
    let info = ManifestFieldInfo(key: key, shape: shape, requirement: requirement, summary: summary)
    guard let violation = shape.violation(named: key) else {
      return Self(info: info) { reader, value, path, target in
        if let read = read(&reader, value, path) { set(&target, read) }
      }
    }
    return Self(info: info) { reader, value, path, target in
      if let found = violation(value) {
        reader.diagnostics.report(invalid?(found.text) ?? found.message, at: path())
        return
      }
      if let read = read(&reader, value, path) { set(&target, read) }
    }
  }
}

extension ManifestShape {
  /// What a value outside the shape's limits is: its text as written and a plain message.
  typealias Violation = (text: String, message: String)

  /// The check of the shape's limits for the field `key`, or `nil` for a shape without any.
  /// A value of another type passes: the field's reader names the type it expects.
  func violation(named key: String) -> (@Sendable (JSONValue) -> Violation?)? {
    switch self {
    case .constant(let constant):
      return { value in
        switch value.integer(Int.self) {
        case .exact(let number) where number != constant: break
        case .outOfRange: break
        default: return nil
        }
        let found = value.numberDescription
        return (found, "'\(key)' must be \(constant), not \(found).")
      }
    case .string(let minLength) where minLength > 0:
      return { value in
        guard let text = value.stringValue, text.unicodeScalars.count < minLength else {
          return nil
        }
        return (
          text,
          minLength == 1
            ? "'\(key)' cannot be empty."
            : "'\(key)' must be at least \(minLength) characters long."
        )
      }
    case .integer(let minimum, let maximum) where minimum != nil || maximum != nil:
      // A bound the field leaves open is the reader's own (32 bits), so that the message
      // names the field's range: never the reader's, negative numbers and all, for a field
      // that takes none (`maxConcurrency` of 3000000000).
      let lower = minimum ?? -ManifestReader.integerLimit
      let upper = maximum ?? ManifestReader.integerLimit
      return { value in
        switch value.integer(Int.self) {
        case .exact(let number) where number < lower || number > upper: break
        case .outOfRange: break
        default: return nil
        }
        let found = value.numberDescription
        return (found, "'\(key)' must be a whole number from \(lower) to \(upper), not \(found).")
      }
    default:
      return nil
    }
  }
}

extension Array {
  /// The declarations' information, for the schema and the docs.
  func infos<Target>() -> [ManifestFieldInfo] where Element == ManifestField<Target> {
    map { $0.info }
  }
}
