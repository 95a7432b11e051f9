import LaunchJSON

/// One parameter of a step plugin, described for people (`orchestrate plugins`) and editors
/// (the manifest JSON Schema); derived from the plugin's ``Parameter`` declarations.
package struct ParameterDescription: Sendable, Equatable {
  /// The kind of value a parameter takes.
  package enum ValueType: Sendable, Equatable, CustomStringConvertible {
    /// A string; with `nonEmpty`, one of at least one character.
    case string(nonEmpty: Bool = false)
    /// A whole number, optionally bounded.
    case integer(minimum: Int? = nil, maximum: Int? = nil)
    /// Any number.
    case number
    /// `true` or `false`.
    case boolean
    /// A duration: `"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or a number of seconds.
    case duration
    /// A file or folder path, never empty; relative paths resolve against the manifest's
    /// folder or the data folder.
    case path
    /// One of the listed strings.
    case oneOf([String])
    /// An array of strings; with `nonEmpty`, of one string or more.
    case strings(nonEmpty: Bool = false)
    /// An array of other values (`[Int]`, `[Duration]`).
    indirect case array(of: ValueType)
    /// A date: an ISO 8601 string or a number of seconds since 1970.
    case date
    /// Bytes, as a base64 string.
    case base64
    /// A JSON object, decoded by a `Decodable` type of the plugin's.
    case object

    /// The type as `orchestrate plugins` prints it.
    package var description: String {
      switch self {
      case .string(let nonEmpty): nonEmpty ? "non-empty string" : "string"
      case .integer(let minimum, let maximum):
        switch (minimum, maximum) {
        case (let minimum?, let maximum?): "integer \(minimum)...\(maximum)"
        case (let minimum?, nil): "integer >= \(minimum)"
        case (nil, let maximum?): "integer <= \(maximum)"
        case (nil, nil): "integer"
        }
      case .number: "number"
      case .boolean: "boolean"
      case .duration: "duration"
      case .path: "path"
      case .oneOf(let values): values.joined(separator: "|")
      case .strings(let nonEmpty): nonEmpty ? "non-empty [string]" : "[string]"
      case .array(let element): "[\(element)]"
      case .date: "date (ISO 8601, or seconds since 1970)"
      case .base64: "base64 string"
      case .object: "object"
      }
    }
  }

  /// The key in `params`.
  package var name: String
  /// The kind of value.
  package var type: ValueType
  /// Whether a manifest must give it.
  package var isRequired: Bool
  /// The value used when it is left out, as people read it (`24h`, `books`, `true unless
  /// readOnly`).
  package var defaultValue: String?
  /// The value used when it is left out, as JSON of the parameter's type; `nil` when there
  /// is none or it depends on other parameters (a `defaultDescription`).
  package var defaultJSON: JSONValue?
  /// What it means.
  package var summary: String
  /// Whether the step removes files in the folder this path names.
  package var removesFiles: Bool
  /// Whether the step rewrites the file this path names, or moves it aside.
  package var rewritesFile: Bool
  /// The files the step keeps beside the file this path names, as suffixes added to its
  /// name (`-wal`).
  package var companions: [String]
  /// The parameters that must be given too when this one is (``ParameterRules``).
  package var requires: [String]
  /// The parameters that cannot be given with this one (``ParameterRules``).
  package var excludes: [String]

  /// Describes a parameter.
  init(
    _ name: String, _ type: ValueType, required isRequired: Bool = false,
    default defaultValue: String? = nil, json defaultJSON: JSONValue? = nil,
    removesFiles: Bool = false, rewritesFile: Bool = false, companions: [String] = [],
    requires: [String] = [], excludes: [String] = [], _ summary: String
  ) {
    self.name = name
    self.type = type
    self.isRequired = isRequired
    self.defaultValue = defaultValue
    self.defaultJSON = defaultJSON
    self.removesFiles = removesFiles
    self.rewritesFile = rewritesFile
    self.companions = companions
    self.requires = requires
    self.excludes = excludes
    self.summary = summary
  }
}
