import Foundation
import LaunchJSON

/// A type a ``Parameter`` can hold: any `Decodable` value.
///
/// `String`, every integer and floating-point type (a narrow one with its range: `UInt8` is
/// `integer 0...255`), `Bool`, `Duration` (written `"250ms"`, `"2s"`, `"24h"`), `Decimal`,
/// `URL`, `UUID`, `Date` and `Data` (as the strings and numbers a manifest writes them as),
/// arrays of these and their optionals are shown by name in `orchestrate plugins` and the
/// schema; an enum of strings (`enum Order: String, CaseIterable, Decodable`) by its cases,
/// which become the values a manifest may write; any other `Decodable` type as a JSON object.
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

// Foundation's values a manifest writes as a string or a number (see the decoder's forms):
// shown and checked as such, not as the objects they are not.
extension Decimal: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .number }
  var parameterJSON: JSONValue? { JSONValue(.number((self as NSDecimalNumber).doubleValue)) }
}

extension URL: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .string() }
  var parameterJSON: JSONValue? { JSONValue(.string(absoluteString)) }
}

extension UUID: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .string() }
  var parameterJSON: JSONValue? { JSONValue(.string(uuidString)) }
}

extension Date: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .date }
  var parameterJSON: JSONValue? { JSONValue(.string(ISO8601DateFormatter().string(from: self))) }
}

extension Data: DescribedParameterValue {
  static var parameterType: ParameterDescription.ValueType { .base64 }
  var parameterJSON: JSONValue? { JSONValue(.string(base64EncodedString())) }
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

/// Reads one parameter's value from its member of `params` (`nil` when the manifest leaves it
/// out), boxed as exactly its type: `nil` when it is left out or `null`; a required
/// parameter's reader throws then. Keys of nested objects that the value's type did not read
/// are added to `unused`.
typealias ParameterReader =
  @Sendable (_ value: JSONValue?, _ key: ParameterKey, _ unused: inout [JSONValueDecoder.UnusedKey])
  throws -> (any Sendable)?

extension Parameter where Value: ParameterValue {
  /// How to read this parameter's value: the types `orchestrate plugins` knows by name (and
  /// their optionals) straight from the parsed JSON, any other type through its `Decodable`
  /// conformance. Chosen once per type, by the identity of `Value`: neither way asks the
  /// run time whether a type conforms to a protocol, a search through every conformance the
  /// process has loaded, the first time, on a launch's cold path.
  static func reader(isRequired: Bool) -> ParameterReader {
    if let read = scalarReader {
      return { value, key, _ in
        guard let value = try present(value, key, isRequired: isRequired) else { return nil }
        return try read(value, key)
      }
    }
    return { value, key, unused in
      guard let value = try present(value, key, isRequired: isRequired) else { return nil }
      let (decoded, nested) = try JSONValueDecoder.decode(Value.self, from: value, key: key)
      unused += nested
      return decoded
    }
  }

  /// Reads a value given in the manifest (not `null`, unless the parameter is required) when
  /// `Value` is `String`, `Int`, `Bool`, `Double`, `Duration`, `[Duration]` or an optional of
  /// one; `nil` for any other type, which decodes itself.
  static var scalarReader: (@Sendable (JSONValue, ParameterKey) throws -> any Sendable)? {
    switch ObjectIdentifier(Value.self) {
    case ObjectIdentifier(String.self), ObjectIdentifier(String?.self):
      { value, key in try JSONValueDecoder.string(value, at: [key]) }
    case ObjectIdentifier(Int.self), ObjectIdentifier(Int?.self):
      { value, key in try JSONValueDecoder.integer(Int.self, value, at: [key]) }
    case ObjectIdentifier(Bool.self), ObjectIdentifier(Bool?.self):
      { value, key in try JSONValueDecoder.bool(value, at: [key]) }
    case ObjectIdentifier(Double.self), ObjectIdentifier(Double?.self):
      { value, key in try JSONValueDecoder.number(value, as: Double.self, at: [key]) }
    // Swift's own `Codable` form of a duration is not how manifests write one.
    case ObjectIdentifier(Duration.self), ObjectIdentifier(Duration?.self):
      { value, key in try DurationText.parameter(value, at: [key]) }
    case ObjectIdentifier([Duration].self), ObjectIdentifier([Duration]?.self):
      { value, key in try DurationText.parameters(value, at: key) }
    default: nil
    }
  }
}

/// `value`, unless it stands for no value: `nil` for a parameter left out or `null`, except
/// that a required parameter must be given, and is read from `null` as from any value.
private func present(_ value: JSONValue?, _ key: ParameterKey, isRequired: Bool) throws
  -> JSONValue?
{
  guard let value else {
    guard isRequired else { return nil }
    throw DecodingError.keyNotFound(
      key, .init(codingPath: [], debugDescription: "the key '\(key.stringValue)' is required"))
  }
  // Not a `? value : nil` expression: `JSONValue` is `ExpressibleByNilLiteral`, so that `nil`
  // would be a `null` value rather than none.
  if !isRequired, case .null = value.kind { return nil }
  return value
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
