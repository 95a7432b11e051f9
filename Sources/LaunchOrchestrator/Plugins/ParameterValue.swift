import Foundation

/// A type a ``Parameter`` can hold: how it is shown in `orchestrate plugins` and the schema,
/// and how a default of it is written.
///
/// `String`, `Int`, `Double`, `Bool`, `Duration`, `[String]` and their optionals conform; an
/// enum of strings conforms by declaring it (`enum Order: String, CaseIterable,
/// ParameterValue`), and its cases become the values a manifest may write.
public protocol ParameterValue: Decodable, Sendable {
  /// The kind of value, as `orchestrate plugins` and the JSON Schema show it.
  static var parameterType: ParameterDescription.ValueType { get }
  /// The value as a manifest would write it, to show a default.
  var parameterText: String { get }
}

extension ParameterValue {
  /// The value as Swift prints it.
  public var parameterText: String { String(describing: self) }
}

extension String: ParameterValue {
  /// Any string.
  public static var parameterType: ParameterDescription.ValueType { .string }
  /// The string itself.
  public var parameterText: String { self }
}

extension Int: ParameterValue {
  /// A whole number.
  public static var parameterType: ParameterDescription.ValueType { .integer() }
  /// The number.
  public var parameterText: String { String(self) }
}

extension Double: ParameterValue {
  /// Any number.
  public static var parameterType: ParameterDescription.ValueType { .number }
  /// The number.
  public var parameterText: String { "\(self)" }
}

extension Bool: ParameterValue {
  /// `true` or `false`.
  public static var parameterType: ParameterDescription.ValueType { .boolean }
  /// `true` or `false`.
  public var parameterText: String { self ? "true" : "false" }
}

/// Decoded from a manifest duration (`"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or a number of
/// seconds), not from `Duration`'s own `Codable` form.
extension Duration: ParameterValue {
  /// A duration.
  public static var parameterType: ParameterDescription.ValueType { .duration }
  /// The duration written compactly: `24h`, `250ms`.
  public var parameterText: String { DurationText.format(self) }
}

extension Array: ParameterValue where Element == String {
  /// An array of strings.
  public static var parameterType: ParameterDescription.ValueType { .strings }
  /// The strings as a JSON array.
  public var parameterText: String {
    "[" + map { "\"\($0)\"" }.joined(separator: ", ") + "]"
  }
}

extension Optional: ParameterValue where Wrapped: ParameterValue {
  /// The wrapped type's.
  public static var parameterType: ParameterDescription.ValueType { Wrapped.parameterType }
  /// The wrapped value's, or nothing.
  public var parameterText: String { map(\.parameterText) ?? "" }
}

extension ParameterValue where Self: RawRepresentable & CaseIterable, RawValue == String {
  /// One of the cases' raw values.
  public static var parameterType: ParameterDescription.ValueType {
    .oneOf(allCases.map(\.rawValue))
  }
  /// The raw value.
  public var parameterText: String { rawValue }
}

/// Reads one parameter's value from `params`: the value boxed, `nil` when the manifest leaves
/// it out (or writes `null`).
typealias ParameterReader =
  @Sendable (KeyedDecodingContainer<ParameterKey>, ParameterKey) throws -> (any Sendable)?

extension ParameterValue {
  /// How to read a value of this type, chosen once per parameter: a duration as manifests
  /// write it, an optional as its wrapped type, anything else as itself. A required
  /// parameter's reader throws when the key is missing.
  static func reader(isRequired: Bool) -> ParameterReader {
    if let optional = Self.self as? any OptionalParameterValue.Type {
      return optional.wrappedReader
    }
    if Self.self == Duration.self {
      if isRequired {
        return { container, key in
          try container.decode(DurationParameter.self, forKey: key).duration
        }
      }
      return { container, key in
        try container.decodeIfPresent(DurationParameter.self, forKey: key)?.duration
      }
    }
    if isRequired {
      return { container, key in try container.decode(Self.self, forKey: key) }
    }
    return { container, key in try container.decodeIfPresent(Self.self, forKey: key) }
  }
}

/// An optional parameter type, seen through its wrapped type.
protocol OptionalParameterValue {
  /// No value.
  static var none: Self { get }
  /// Reads the wrapped type's value, when present.
  static var wrappedReader: ParameterReader { get }
}

extension Optional: OptionalParameterValue where Wrapped: ParameterValue {
  static var wrappedReader: ParameterReader { Wrapped.reader(isRequired: false) }
}

/// A key of a plugin's `params`.
struct ParameterKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
