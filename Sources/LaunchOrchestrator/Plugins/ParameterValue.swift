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
  /// The value as a manifest would write it, for the schema's `default`; `nil` for a type
  /// with no JSON form to give.
  var parameterJSON: JSONValue? { get }
  /// The value as people read it, to show a default in `orchestrate plugins`.
  var parameterText: String { get }
}

extension ParameterValue {
  /// No JSON form: the schema gives no default.
  public var parameterJSON: JSONValue? { nil }

  /// A string as it is, other JSON as the manifest would write it, or else as Swift prints it.
  public var parameterText: String {
    guard let json = parameterJSON else { return String(describing: self) }
    return json.stringValue ?? JSONWriter.compact(json)
  }
}

extension String: ParameterValue {
  /// Any string.
  public static var parameterType: ParameterDescription.ValueType { .string() }
  /// The string.
  public var parameterJSON: JSONValue? { JSONValue(.string(self)) }
}

extension Int: ParameterValue {
  /// A whole number.
  public static var parameterType: ParameterDescription.ValueType { .integer() }
  /// The number, exactly.
  public var parameterJSON: JSONValue? { JSONValue(integer: self) }
}

extension Double: ParameterValue {
  /// Any number.
  public static var parameterType: ParameterDescription.ValueType { .number }
  /// The number.
  public var parameterJSON: JSONValue? { JSONValue(.number(self)) }
}

extension Bool: ParameterValue {
  /// `true` or `false`.
  public static var parameterType: ParameterDescription.ValueType { .boolean }
  /// `true` or `false`.
  public var parameterJSON: JSONValue? { JSONValue(.bool(self)) }
}

/// Decoded from a manifest duration (`"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or a number of
/// seconds), not from `Duration`'s own `Codable` form.
extension Duration: ParameterValue {
  /// A duration.
  public static var parameterType: ParameterDescription.ValueType { .duration }
  /// The duration written compactly: `"24h"`, `"250ms"`.
  public var parameterJSON: JSONValue? { JSONValue(.string(DurationText.format(self))) }
}

extension Array: ParameterValue where Element == String {
  /// An array of strings.
  public static var parameterType: ParameterDescription.ValueType { .strings() }
  /// The strings as a JSON array.
  public var parameterJSON: JSONValue? { JSONValue(.array(map { JSONValue(.string($0)) })) }
}

extension Optional: ParameterValue where Wrapped: ParameterValue {
  /// The wrapped type's.
  public static var parameterType: ParameterDescription.ValueType { Wrapped.parameterType }
  /// The wrapped value's, or nothing.
  public var parameterJSON: JSONValue? { self?.parameterJSON }
  /// The wrapped value's, or nothing.
  public var parameterText: String { map(\.parameterText) ?? "" }
}

extension ParameterValue where Self: RawRepresentable & CaseIterable, RawValue == String {
  /// One of the cases' raw values.
  public static var parameterType: ParameterDescription.ValueType {
    .oneOf(allCases.map(\.rawValue))
  }
  /// The raw value.
  public var parameterJSON: JSONValue? { JSONValue(.string(rawValue)) }
}

/// Reads one parameter's value from `params`, boxed as exactly its type: `nil` when the
/// manifest leaves it out (or writes `null`); a required parameter's reader throws then.
@usableFromInline
typealias ParameterReader =
  @Sendable (KeyedDecodingContainer<ParameterKey>, ParameterKey) throws -> (any Sendable)?

extension Parameter {
  /// How to read this parameter's value. Made in the plugin's module (from an inlined
  /// initializer), so that each read is specialized for the value's type: decoding runs
  /// once per step and parameter, and generic indirection there would show in load times.
  @inlinable
  static func reader(isRequired: Bool) -> ParameterReader {
    // Swift's own `Codable` form of a duration is not how manifests write one.
    if Value.self == Duration.self || Value.self == Duration?.self {
      return { container, key in
        try readDuration(container, key, isRequired: isRequired).map { $0 as! Value }
      }
    }
    if isRequired {
      return { container, key in try container.decode(Value.self, forKey: key) }
    }
    return { container, key in try container.decodeIfPresent(Value.self, forKey: key) }
  }
}

/// A duration as manifests write it: `"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or seconds.
@usableFromInline
func readDuration(
  _ container: KeyedDecodingContainer<ParameterKey>, _ key: ParameterKey, isRequired: Bool
) throws -> Duration? {
  if isRequired { return try container.decode(DurationParameter.self, forKey: key).duration }
  return try container.decodeIfPresent(DurationParameter.self, forKey: key)?.duration
}

/// An optional parameter type: one a manifest may leave out.
protocol OptionalParameterValue {}

extension Optional: OptionalParameterValue where Wrapped: ParameterValue {}

/// A key of a plugin's `params`.
@usableFromInline
struct ParameterKey: CodingKey {
  @usableFromInline var stringValue: String
  @usableFromInline var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  @usableFromInline init?(stringValue: String) { self.stringValue = stringValue }
  @usableFromInline init?(intValue: Int) { nil }
}
