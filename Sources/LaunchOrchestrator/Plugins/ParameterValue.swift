import Foundation
import LaunchJSON

/// A type a ``Parameter`` can hold: any `Decodable` value.
///
/// `String`, every integer and floating-point type (a narrow one with its range: `UInt8` is
/// `integer 0...255`), `Bool`, `Duration` (written `"250ms"`, `"2s"`, `"24h"`), arrays of
/// these and their optionals are shown by name in `orchestrate plugins` and the schema; an
/// enum of strings (`enum Order: String, CaseIterable, Decodable`) by its cases, which become
/// the values a manifest may write; any other `Decodable` type as a JSON object.
public typealias ParameterValue = Decodable & Sendable

/// A parameter type `orchestrate plugins` and the schema know by name.
protocol DescribedParameterValue {
  /// The kind of value.
  static var parameterType: ParameterDescription.ValueType { get }
  /// The value as a manifest would write it, for the schema's `default`.
  var parameterJSON: JSONValue? { get }
}

extension String: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .string() }
  var parameterJSON: JSONValue? { JSONValue(.string(self)) }
}

extension Int: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .integer() }
  var parameterJSON: JSONValue? { JSONValue(integer: self) }
}

extension Double: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .number }
  var parameterJSON: JSONValue? { JSONValue(.number(self)) }
}

extension Bool: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .boolean }
  var parameterJSON: JSONValue? { JSONValue(.bool(self)) }
}

/// Decoded from a manifest duration (`"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or a number of
/// seconds), not from `Duration`'s own `Codable` form.
extension Duration: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .duration }
  /// Written compactly: `"24h"`, `"250ms"`.
  var parameterJSON: JSONValue? { JSONValue(.string(DurationText.format(self))) }
}

extension Array: DescribedParameterValue where Element == String {
  static var parameterType: ParameterDescription.ValueType { .strings() }
  var parameterJSON: JSONValue? { JSONValue(.array(map { JSONValue(.string($0)) })) }
}

/// An array parameter type, described by its elements.
protocol ArrayParameterValue {
  /// The type of its elements.
  static var elementType: Any.Type { get }
  /// Its elements.
  var elements: [Any] { get }
}

extension Array: ArrayParameterValue {
  static var elementType: Any.Type { Element.self }
  var elements: [Any] { map { $0 as Any } }
}

/// How a parameter of type `type` is shown, and its values written: by name for the types
/// above, by cases for an enum of strings, as an object otherwise; an optional as what it
/// wraps, an array by its elements.
enum ParameterShape {
  static func type(of type: Any.Type) -> ParameterDescription.ValueType {
    if let optional = type as? any OptionalParameterValue.Type {
      return self.type(of: optional.wrappedType)
    }
    if let described = type as? any DescribedParameterValue.Type { return described.parameterType }
    if let integer = type as? any FixedWidthInteger.Type { return integerType(integer) }
    if type is any BinaryFloatingPoint.Type { return .number }
    if let choices = type as? any (CaseIterable & RawRepresentable<String>).Type {
      return .oneOf(rawValues(of: choices))
    }
    if let array = type as? any ArrayParameterValue.Type {
      return .array(of: self.type(of: array.elementType))
    }
    return .object
  }

  /// `value` as a manifest would write it; `nil` for nothing, or a value with no JSON form.
  static func json(of value: Any) -> JSONValue? {
    if let optional = value as? any OptionalParameterValue { return optional.wrapped.flatMap(json) }
    if let described = value as? any DescribedParameterValue { return described.parameterJSON }
    if let integer = value as? any BinaryInteger { return JSONValue(integer: integer) }
    if let number = value as? any BinaryFloatingPoint {
      return Double(exactly: number).map { JSONValue(.number($0)) }
    }
    if let choice = value as? any RawRepresentable<String> {
      return JSONValue(.string(choice.rawValue))
    }
    if let array = value as? any ArrayParameterValue {
      var elements: [JSONValue] = []
      for element in array.elements {
        guard let json = json(of: element) else { return nil }
        elements.append(json)
      }
      return JSONValue(.array(elements))
    }
    return nil
  }

  /// An integer type's range, when an `Int` can state it and it is narrower than `Int`'s own.
  private static func integerType<T: FixedWidthInteger>(_ type: T.Type)
    -> ParameterDescription.ValueType
  {
    let minimum = T.min == 0 || T.bitWidth < Int.bitWidth ? Int(exactly: T.min) : nil
    let maximum = T.bitWidth < Int.bitWidth ? Int(exactly: T.max) : nil
    return .integer(minimum: minimum, maximum: maximum)
  }

  /// `value` as people read it: a string as it is, other JSON as a manifest writes it, or as
  /// Swift prints it; empty for nothing.
  static func text(of value: Any) -> String {
    if let optional = value as? any OptionalParameterValue {
      return optional.wrapped.map(text) ?? ""
    }
    guard let json = json(of: value) else { return String(describing: value) }
    return json.stringValue ?? JSONWriter.compact(json)
  }

  private static func rawValues<T: CaseIterable & RawRepresentable<String>>(
    of type: T.Type
  ) -> [String] {
    type.allCases.map(\.rawValue)
  }
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
    if Value.self == [Duration].self || Value.self == [Duration]?.self {
      return { container, key in
        try readDurations(container, key, isRequired: isRequired).map { $0 as! Value }
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

/// Durations as manifests write them, each `"250ms"`, `"2s"` or seconds.
@usableFromInline
func readDurations(
  _ container: KeyedDecodingContainer<ParameterKey>, _ key: ParameterKey, isRequired: Bool
) throws -> [Duration]? {
  if isRequired {
    return try container.decode([DurationParameter].self, forKey: key).map(\.duration)
  }
  return try container.decodeIfPresent([DurationParameter].self, forKey: key)?.map(\.duration)
}

/// An optional parameter type: one a manifest may leave out.
protocol OptionalParameterValue {
  /// The type it wraps.
  static var wrappedType: Any.Type { get }
  /// The value it wraps, if any.
  var wrapped: Any? { get }
}

extension Optional: OptionalParameterValue where Wrapped: Decodable {
  static var wrappedType: Any.Type { Wrapped.self }
  var wrapped: Any? { self.map { $0 as Any } }
}

/// A key of a plugin's `params`.
@usableFromInline
struct ParameterKey: CodingKey {
  @usableFromInline var stringValue: String
  @usableFromInline var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  @usableFromInline init?(stringValue: String) { self.stringValue = stringValue }
  @usableFromInline init?(intValue: Int) { nil }
}
