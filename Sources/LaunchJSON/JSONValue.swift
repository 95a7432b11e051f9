/// A parsed JSON value that remembers where it came from in its source text.
///
/// Objects keep their keys in source order, so reports and diagnostics read the way the
/// manifest was written.
public struct JSONValue: Sendable, Equatable {
  /// The shape and content of a JSON value.
  public enum Kind: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as a `Double` (integers up to 2^53 are exact); a parsed number also
    /// keeps its text in ``JSONValue/numberText``, exact beyond that.
    case number(Double)
    /// A string.
    case string(String)
    /// An array of values.
    case array([JSONValue])
    /// An object, its members in source order.
    case object([JSONMember])
  }

  /// The value itself.
  public var kind: Kind
  /// The UTF-8 byte offset of the value's first character in its source, if it was parsed.
  /// (`Int.min`, which no source has, reads back as `nil`.)
  public var offset: Int? {
    get { storedOffset == Self.noOffset ? nil : storedOffset }
    set { storedOffset = newValue ?? Self.noOffset }
  }
  /// A parsed number's text exactly as written (`"9007199254740993"`, `"1e-7"`), which a
  /// `Double` cannot always hold; `nil` for other kinds and for values built in code.
  public var numberText: String?
  /// ``offset``, `noOffset` standing for none: an `Int?` would take a byte more, padded to
  /// eight, in every value and member of a document.
  private var storedOffset: Int
  /// The stored offset of a value without one: no offset in a file is this.
  static let noOffset = Int.min

  /// Creates a value, optionally at a source offset.
  public init(_ kind: Kind, offset: Int? = nil) {
    self.kind = kind
    self.storedOffset = offset ?? Self.noOffset
  }

  /// Creates a whole number, exact however large: written and read back as its digits.
  public init<T: BinaryInteger>(integer: T, offset: Int? = nil) {
    self.init(number: Double(integer), text: String(integer), offset: offset)
  }

  /// Creates a parsed number: its nearest `Double` and its text as written.
  public init(number: Double, text: String, offset: Int? = nil) {
    self.kind = .number(number)
    self.storedOffset = offset ?? Self.noOffset
    self.numberText = text
  }

  /// The members of an object, or `nil` for any other kind.
  public var members: [JSONMember]? {
    if case .object(let members) = kind { return members }
    return nil
  }

  /// The elements of an array, or `nil` for any other kind.
  public var elements: [JSONValue]? {
    if case .array(let elements) = kind { return elements }
    return nil
  }

  /// The string, or `nil` for any other kind.
  public var stringValue: String? {
    if case .string(let string) = kind { return string }
    return nil
  }

  /// The value of the member named `key`, when this is an object that has one.
  public subscript(key: String) -> JSONValue? {
    // The bytes of the key, not its Unicode-normalised text: a document may hold both.
    members?.first { $0.key.hasSameBytes(as: key) }?.value
  }

  /// The value of the member named `key`, looked for from the member at `hint` on, then from
  /// the first; `hint` moves past the member found.
  ///
  /// For an object with each key once, as every parsed one is (the parser keeps the first of
  /// a key written twice), where this finds what ``subscript(key:)`` finds: a reader that reads
  /// an object's members in the order they were written finds each at the hint, at one
  /// comparison instead of half the object's keys.
  package func member(_ key: String, from hint: inout Int) -> JSONValue? {
    guard case .object(let members) = kind else { return nil }
    let start = min(hint, members.count)
    for index in members.indices[start...] where members[index].key.hasSameBytes(as: key) {
      hint = index + 1
      return members[index].value
    }
    for index in members.indices[..<start] where members[index].key.hasSameBytes(as: key) {
      hint = index + 1
      return members[index].value
    }
    return nil
  }

  /// The integer `text` writes when it is a sign and at most 15 digits, which no `Int64`
  /// overflows; `nil` for any other text.
  @usableFromInline static func shortInteger(_ text: String) -> Int64? {
    var digits = text.utf8[...]
    let isNegative = digits.first == UInt8(ascii: "-")
    if isNegative { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.count <= 15 else { return nil }
    var value: Int64 = 0
    for byte in digits {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      value = value * 10 + Int64(byte - UInt8(ascii: "0"))
    }
    return isNegative ? -value : value
  }

  /// The number as a `T`, exactly, or `nil` when this is not a whole number `T` can hold.
  ///
  /// A parsed number is read from its text, so integers beyond 2^53 keep every digit;
  /// `1.0`, `1e2` and `2.5e1` count as whole numbers.
  @inlinable public func exactInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T? {
    if case .exact(let integer) = integer(T.self) { return integer }
    return nil
  }

  /// The number read as a `T`: exactly, or why it is not one; `nil` when this is not a number.
  @inlinable public func integer<T: FixedWidthInteger>(_ type: T.Type) -> IntegerReading<T>? {
    guard case .number(let number) = kind else { return nil }
    if let numberText {
      // The common case (a count, an attempt) in a 64-bit sum of its digits: the general
      // reading below goes through the generic integer parser.
      if let short = Self.shortInteger(numberText) {
        return T(exactly: short).map { .exact($0) } ?? .outOfRange
      }
      return IntegerReading(jsonNumber: numberText)
    }
    // Built in code, the Double is all there is; beyond 2^53 it stands for several
    // integers, so it names none of them exactly.
    guard number == number.rounded() else { return .fractional }
    guard number.magnitude < 9_007_199_254_740_992, let exact = T(exactly: number) else {
      return .outOfRange
    }
    return .exact(exact)
  }

  /// The value found by following `path` from this value.
  public func value(at path: JSONPath) -> JSONValue? {
    var current = self
    for component in path.components {
      switch component {
      case .key(let key):
        guard let next = current[key] else { return nil }
        current = next
      case .index(let index):
        guard let elements = current.elements, elements.indices.contains(index) else {
          return nil
        }
        current = elements[index]
      }
    }
    return current
  }

  /// Values are equal when their content is; where they came from does not matter.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    lhs.kind == rhs.kind
  }

  /// A short name for the value's type, as used in error messages ("a string", "an array").
  public var typeDescription: String {
    switch kind {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// One `"key": value` pair of a JSON object.
public struct JSONMember: Sendable, Equatable {
  /// The member's key.
  public var key: String
  /// The UTF-8 byte offset of the key's opening quote, if it was parsed. (`Int.min`, which
  /// no source has, reads back as `nil`.)
  public var keyOffset: Int? {
    get { storedKeyOffset == JSONValue.noOffset ? nil : storedKeyOffset }
    set { storedKeyOffset = newValue ?? JSONValue.noOffset }
  }
  /// The member's value.
  public var value: JSONValue
  /// ``keyOffset``, as ``JSONValue`` keeps its offset.
  private var storedKeyOffset: Int

  /// Creates a member.
  public init(key: String, keyOffset: Int? = nil, value: JSONValue) {
    self.key = key
    self.storedKeyOffset = keyOffset ?? JSONValue.noOffset
    self.value = value
  }

  /// Members are equal when their keys and values are, wherever they came from.
  public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
    lhs.key.hasSameBytes(as: rhs.key) && lhs.value == rhs.value
  }
}

extension String {
  /// Whether the two are the same UTF-8 bytes: Swift's `==` also equates strings that only
  /// Unicode normalisation makes equal, which JSON keys are not. Compared through the
  /// strings' own storage, lengths first: a report's reader looks keys up millions of times.
  func hasSameBytes(as other: String) -> Bool {
    let (mine, theirs) = (utf8, other.utf8)
    guard mine.count == theirs.count else { return false }
    let contiguous = mine.withContiguousStorageIfAvailable { mine in
      theirs.withContiguousStorageIfAvailable { theirs in mine.elementsEqual(theirs) }
    }
    if let contiguous, let equal = contiguous { return equal }
    return mine.elementsEqual(theirs)
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  /// Creates a string value.
  public init(stringLiteral value: String) { self.init(.string(value)) }
  /// Creates a number value.
  public init(integerLiteral value: Int) { self.init(integer: value) }
  /// Creates a number value.
  public init(floatLiteral value: Double) { self.init(.number(value)) }
  /// Creates a boolean value.
  public init(booleanLiteral value: Bool) { self.init(.bool(value)) }
  /// Creates `null`.
  public init(nilLiteral: ()) { self.init(.null) }
  /// Creates an array value.
  public init(arrayLiteral elements: JSONValue...) { self.init(.array(elements)) }
  /// Creates an object value, members in the literal's order.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self.init(.object(elements.map { JSONMember(key: $0.0, value: $0.1) }))
  }
}

/// How a JSON number reads as an integer of type `T`.
public enum IntegerReading<T: FixedWidthInteger>: Equatable {
  /// It is this integer, exactly.
  case exact(T)
  /// It has a fractional part (`1.5`, `1e-3`).
  case fractional
  /// It is whole, but beyond what `T` holds.
  case outOfRange

  /// Reads the text of a JSON number (`-12`, `1.50e2`) digit by digit, never through a
  /// `Double`, which holds integers exactly only up to 2^53.
  @usableFromInline init(jsonNumber text: String) {
    if let exact = T(text) {
      self = .exact(exact)
      return
    }
    let bytes = Array(text.utf8)
    let isNegative = bytes.first == UInt8(ascii: "-")
    var digits: [UInt8] = []
    var fractionDigits = 0
    var inFraction = false
    var exponentStart: Int?
    for index in bytes.indices.dropFirst(isNegative ? 1 : 0) {
      let byte = bytes[index]
      if byte == UInt8(ascii: ".") {
        inFraction = true
      } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
        exponentStart = index + 1
        break
      } else {
        digits.append(byte - UInt8(ascii: "0"))
        if inFraction { fractionDigits += 1 }
      }
    }
    // The exponent is capped far beyond what any digits written could bring back into range,
    // so that it cannot overflow.
    var exponent = 0
    if let exponentStart {
      var sign = 1
      for byte in bytes[exponentStart...] {
        switch byte {
        case UInt8(ascii: "-"): sign = -1
        case UInt8(ascii: "+"): break
        default: exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000_000)
        }
      }
      exponent *= sign
    }
    exponent -= fractionDigits
    while let last = digits.last, last == 0, digits.count > 1 {
      digits.removeLast()
      exponent += 1
    }
    if digits.allSatisfy({ $0 == 0 }) {
      self = .exact(0)
      return
    }
    guard exponent >= 0 else {
      self = .fractional
      return
    }
    // Built toward the number's sign, so that `T.min` is reachable. A 128-bit integer has 39
    // digits: more zeros than that overflow whatever comes before them.
    var value: T = 0
    for digit in digits + repeatElement(0, count: min(exponent, 40)) {
      let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (next, overflowedAgain) =
        isNegative
        ? shifted.subtractingReportingOverflow(T(digit))
        : shifted.addingReportingOverflow(T(digit))
      guard !overflowed, !overflowedAgain else {
        self = .outOfRange
        return
      }
      value = next
    }
    self = .exact(value)
  }
}
