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
  /// What it cannot have together, from its rules when the schema or the docs ask.
  var rules: [ManifestRuleInfo] { makeRules() }
  private let makeRules: @Sendable () -> [ManifestRuleInfo]

  init(
    name: String, isDefinition: Bool = false,
    fields: @escaping @Sendable () -> [ManifestFieldInfo],
    rules: @escaping @Sendable () -> [ManifestRuleInfo] = { [] }
  ) {
    self.name = name
    self.isDefinition = isDefinition
    makeFields = fields
    makeRules = rules
  }

  var keys: [String] { fields.map(\.key) }
}

/// A rule between two keys of one object, declared once: what the plan builder checks, an
/// `if`/`then` of the JSON Schema, and a sentence under the object's table in docs/manifest.md.
struct ManifestRule<Target>: Sendable {
  /// What the declaration says, for the schema and the docs.
  let info: ManifestRuleInfo
  /// Whether an object read breaks it.
  let isBroken: @Sendable (Target) -> Bool

  /// An object with `key` (set to `value`, when one is given) cannot have `excluded`; one
  /// that has both is refused with `message` at `reportedAt`, whichever key that is for
  /// `isBroken`, the same rule checked on what was read.
  init(
    _ key: String, is value: String? = nil, excludes excluded: String, reportedAt: String,
    _ message: String, isBroken: @escaping @Sendable (Target) -> Bool
  ) {
    info = ManifestRuleInfo(
      key: key, value: value, excluded: excluded, reportedAt: reportedAt, message: message)
    self.isBroken = isBroken
  }
}

/// A rule's declaration without its check: an object with `key` (set to `value`, when one is
/// given) cannot have `excluded`.
struct ManifestRuleInfo: Sendable {
  let key: String
  let value: String?
  let excluded: String
  /// The key a broken rule is reported at: `key` or `excluded`.
  let reportedAt: String
  let message: String
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
  /// A duration above zero: at least half a nanosecond, which rounds to one.
  case positiveDuration
  /// A step priority name.
  case priority
  /// `abort` or `continue`.
  case failurePolicy
  /// `default` or `main`.
  case isolation
  /// An array of step ids, none empty.
  case stepIDs
  /// An array of signal names, none empty; with `unique`, none twice.
  case signalNames(unique: Bool)
  /// `launch` or `onDemand`.
  case trigger
  /// `true` or `false`.
  case boolean
  /// An array of one name or more, none empty (launch reasons).
  case names
  /// A version as people write it, such as `1.10.0` (``AppInfo/looksLikeVersion(_:)``).
  case version
  /// `perInstall` or `perVersion`.
  case once
  /// The name of a milestone of the manifest.
  case milestoneName
  /// A registered plugin kind.
  case pluginKind
  /// A plugin's params object.
  case params
  /// An object mapping milestone names (none empty) to step ids.
  case milestoneMap
  /// `null`, which leaves the field out, or a value of the shape.
  case nullable(ManifestShape)
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
    if case .nullable = shape {
      let field = Self.field(
        key, shape.nonNull, requirement, summary, invalid: invalid, into: set, read: read)
      // `null` leaves the field out.
      return Self(info: info) { reader, value, path, target in
        if case .null = value.kind { return }
        field.read(&reader, value, path, &target)
      }
    }
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

  /// The shape of a value other than `null`.
  var nonNull: ManifestShape {
    if case .nullable(let shape) = self { return shape.nonNull }
    return self
  }

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
    case .positiveDuration:
      return { value in
        let duration: Duration?
        switch value.kind {
        case .number(let seconds): duration = DurationText.seconds(seconds)
        // Only a number that starts with a zero or a point can be one: most are read no further.
        case .string(let text) where text.utf8.first.map(Self.mayStartZero) ?? false:
          duration = DurationText.parse(text)
        default: duration = nil
        }
        guard duration == .zero else { return nil }
        let found = value.stringValue ?? value.numberDescription
        return (found, "'\(key)' must be above 0, not \(found).")
      }
    case .version:
      return { value in
        guard let text = value.stringValue, !AppInfo.looksLikeVersion(text) else { return nil }
        return (text, "'\(text)' is not a version; write it like \"1.10.0\".")
      }
    default:
      return nil
    }
  }

  /// Whether a duration string starting with `byte` may be zero: one starting with a digit
  /// other than zero is not.
  private static func mayStartZero(_ byte: UInt8) -> Bool {
    !(UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte)
  }
}

extension Array {
  /// The declarations' information, for the schema and the docs.
  func infos<Target>() -> [ManifestFieldInfo] where Element == ManifestField<Target> {
    map { $0.info }
  }
}
