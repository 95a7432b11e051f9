import Foundation
import LaunchJSON

/// Decodes `Decodable` types straight from a ``JSONValue`` tree, remembering which object keys
/// the type read so that keys it does not know can be reported.
///
/// Scalars: `String`, `Bool`, every fixed-width integer (`Int8` through `UInt64`, `Int128`,
/// `UInt128`; exact, read from the number's text, so beyond 2^53 too), `Double`, `Float`,
/// `Decimal` (exact), `Data` as a base64 string and `URL` as a string (as `JSONDecoder` does),
/// `Date` as an ISO 8601 string or a number of seconds since 1970. A type with no JSON form
/// is a decoding error, never a recursion.
struct JSONValueDecoder {
  /// An object key that the decoded type never asked for.
  struct UnusedKey {
    var path: JSONPath
    var key: String
    var offset: Int?
    var knownKeys: [String]
  }

  /// Decodes `type` from `value`; `unusedKeys` lists keys no container asked for. `key` is
  /// the key of `value` in the object holding it, if any: errors and unused keys are located
  /// from there.
  static func decode<T: Decodable>(
    _ type: T.Type, from value: JSONValue, key: (any CodingKey)? = nil,
    userInfo: [CodingUserInfoKey: any Sendable] = [:]
  ) throws -> (value: T, unusedKeys: [UnusedKey]) {
    let tracker = KeyTracker(recordsAskedKeys: false, userInfo: userInfo)
    let decoded = try ValueDecoder(value: value, parentPath: [], key: key, tracker: tracker)
      .decodeScalar(type)
    guard tracker.hasUnusedKeys else { return (decoded, []) }
    // Suggestions for unknown keys need every key the type asked for, found or not. The fast
    // pass above does not keep them; decoding again is deterministic and only happens for
    // params with a mistake in them.
    let diagnosing = KeyTracker(recordsAskedKeys: true, userInfo: userInfo)
    _ = try ValueDecoder(value: value, parentPath: [], key: key, tracker: diagnosing)
      .decodeScalar(type)
    return (decoded, diagnosing.unusedKeys())
  }
}

/// The scalars as decoding reads them, with the same errors, for readers that take a value
/// straight from the parsed JSON: a step's parameters of these types are read this way, with
/// no decoder, container or coding key type made for them.
extension JSONValueDecoder {
  /// `value` as a string; `codingPath` locates the error when it is not one.
  static func string(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey])
    throws -> String
  {
    guard case .string(let string) = value.kind else {
      throw mismatch(String.self, value, expected: "a string", at: codingPath())
    }
    return string
  }

  /// `value` as a boolean.
  static func bool(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey])
    throws -> Bool
  {
    guard case .bool(let bool) = value.kind else {
      throw mismatch(Bool.self, value, expected: "true or false", at: codingPath())
    }
    return bool
  }

  /// `value` as a number, for a `T` made from it.
  static func number<T>(
    _ value: JSONValue, as type: T.Type, at codingPath: @autoclosure () -> [any CodingKey]
  ) throws -> Double {
    guard case .number(let number) = value.kind else {
      throw mismatch(type, value, expected: "a number", at: codingPath())
    }
    return number
  }

  /// `value` as a `T`, read from the number's text, digit by digit: a `Double` would round
  /// integers beyond 2^53.
  static func integer<T: FixedWidthInteger>(
    _ type: T.Type, _ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]
  ) throws -> T {
    let number = try number(value, as: type, at: codingPath())
    let problem: String
    switch value.integer(T.self) {
    case .exact(let integer): return integer
    case .fractional: problem = "expected a whole number"
    case .outOfRange, nil: problem = "expected a whole number between \(T.min) and \(T.max)"
    }
    throw DecodingError.dataCorrupted(
      .init(
        codingPath: codingPath(),
        debugDescription: "\(problem), found \(value.numberText ?? "\(number)")"))
  }

  /// The error for `value` where `expected` was.
  static func mismatch<T>(
    _ type: T.Type, _ value: JSONValue, expected: String, at codingPath: [any CodingKey]
  ) -> DecodingError {
    .typeMismatch(
      type,
      .init(
        codingPath: codingPath,
        debugDescription: "expected \(expected), found \(value.typeDescription)"))
  }
}

/// Converts a decoder coding path to a JSON path.
extension JSONPath {
  init(codingPath: [any CodingKey]) {
    self.init(
      components: codingPath.map { key in
        if let index = key.intValue, key.stringValue.hasPrefix("Index ") { return .index(index) }
        return .key(key.stringValue)
      })
  }
}

/// What every decoder and container of one decoding shares: the keys read, and `userInfo`.
private final class KeyTracker {
  private struct Entry {
    var parentPath: [any CodingKey]
    var key: (any CodingKey)?
    var members: [JSONMember]
    /// Which members were read: a bit each for the first 64, a set beyond.
    var usedMask: UInt64 = 0
    var usedBeyond: Set<Int> = []
    var askedKeys: [String] = []
    var listedAllKeys = false

    var path: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }

    func isUsed(_ member: Int) -> Bool {
      member < 64 ? usedMask & (1 << member) != 0 : usedBeyond.contains(member)
    }

    var hasUnusedMember: Bool {
      !listedAllKeys && members.indices.contains { !isUsed($0) }
    }
  }

  let userInfo: [CodingUserInfoKey: any Sendable]
  let recordsAskedKeys: Bool
  private var entries: [Entry] = []

  init(recordsAskedKeys: Bool, userInfo: [CodingUserInfoKey: any Sendable]) {
    self.recordsAskedKeys = recordsAskedKeys
    self.userInfo = userInfo
  }

  func register(parentPath: [any CodingKey], key: (any CodingKey)?, members: [JSONMember]) -> Int {
    entries.append(Entry(parentPath: parentPath, key: key, members: members))
    return entries.count - 1
  }

  /// Notes that a container asked for `key`, which is member `member` of its object if found.
  func asked(_ key: String, member: Int?, in entry: Int) {
    if let member {
      if member < 64 {
        entries[entry].usedMask |= 1 << member
      } else {
        entries[entry].usedBeyond.insert(member)
      }
    }
    if recordsAskedKeys { entries[entry].askedKeys.append(key) }
  }

  func markAllUsed(in entry: Int) {
    entries[entry].listedAllKeys = true
  }

  var hasUnusedKeys: Bool { entries.contains { $0.hasUnusedMember } }

  /// Keys of every object that no container read. A type may decode the same object more
  /// than once (through several containers, or a super decoder), so reads are pooled per path.
  func unusedKeys() -> [JSONValueDecoder.UnusedKey] {
    var pooled: [String: (used: Set<String>, asked: Set<String>, listedAllKeys: Bool)] = [:]
    for entry in entries {
      let pathText = JSONPath(codingPath: entry.path).description
      var pool = pooled[pathText] ?? ([], [], false)
      for (index, member) in entry.members.enumerated() where entry.isUsed(index) {
        pool.used.insert(member.key)
      }
      pool.asked.formUnion(entry.askedKeys)
      pool.listedAllKeys = pool.listedAllKeys || entry.listedAllKeys
      pooled[pathText] = pool
    }
    var seen: Set<String> = []
    var result: [JSONValueDecoder.UnusedKey] = []
    for entry in entries {
      let pathText = JSONPath(codingPath: entry.path).description
      guard let pool = pooled[pathText], !pool.listedAllKeys, seen.insert(pathText).inserted
      else {
        continue
      }
      for member in entry.members where !pool.used.contains(member.key) {
        result.append(
          .init(
            path: JSONPath(codingPath: entry.path), key: member.key, offset: member.keyOffset,
            knownKeys: pool.asked.sorted()))
      }
    }
    return result
  }
}

private struct IndexKey: CodingKey {
  var stringValue: String
  var intValue: Int?
  init(_ index: Int) {
    stringValue = "Index \(index)"
    intValue = index
  }
  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.init(intValue) }
}

/// A class, not a struct: decoders travel as `any Decoder` and inside single-value
/// containers, and a struct this size would be boxed on the heap at each of those hops; a
/// reference fits in the existential as it is.
private final class ValueDecoder: Decoder {
  let value: JSONValue
  /// The coding path, kept as the parent's path and this value's key, so that decoding a
  /// flat params object builds no path arrays at all.
  let parentPath: [any CodingKey]
  let key: (any CodingKey)?
  let tracker: KeyTracker
  /// The types this decoder is decoding through `init(from:)`, to catch one that asks for
  /// itself again.
  private var selfDecoding: [ObjectIdentifier] = []

  init(value: JSONValue, parentPath: [any CodingKey], key: (any CodingKey)?, tracker: KeyTracker) {
    self.value = value
    self.parentPath = parentPath
    self.key = key
    self.tracker = tracker
  }

  var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
  var userInfo: [CodingUserInfoKey: Any] { tracker.userInfo }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard let members = value.members else {
      throw DecodingError.typeMismatch(
        [String: Any].self,
        .init(
          codingPath: codingPath,
          debugDescription: "expected an object, found \(value.typeDescription)"))
    }
    let entry = tracker.register(parentPath: parentPath, key: key, members: members)
    return KeyedDecodingContainer(
      KeyedContainer<Key>(decoder: self, members: members, trackerEntry: entry))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard let elements = value.elements else {
      throw DecodingError.typeMismatch(
        [Any].self,
        .init(
          codingPath: codingPath,
          debugDescription: "expected an array, found \(value.typeDescription)"))
    }
    return UnkeyedContainer(decoder: self, elements: elements)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    SingleValueContainer(decoder: self)
  }

  func child(_ value: JSONValue, key: any CodingKey) -> ValueDecoder {
    ValueDecoder(value: value, parentPath: codingPath, key: key, tracker: tracker)
  }

  func mismatch<T>(_ type: T.Type, expected: String) -> DecodingError {
    JSONValueDecoder.mismatch(type, value, expected: expected, at: codingPath)
  }

  func decodeScalar<T: Decodable>(_ type: T.Type) throws -> T {
    // Metatype identity, not `is` casts: this runs for every parameter of every step, in
    // code the compiler cannot specialize. The common types come first.
    let id = ObjectIdentifier(type)
    if id == ObjectIdentifier(String.self) {
      return try JSONValueDecoder.string(value, at: codingPath) as! T
    }
    if id == ObjectIdentifier(Bool.self) {
      return try JSONValueDecoder.bool(value, at: codingPath) as! T
    }
    if id == ObjectIdentifier(Double.self) { return try number(type) as! T }
    if id == ObjectIdentifier(Int.self) { return try integer(Int.self) as! T }
    if let integer = try fixedWidthInteger(type, id) { return integer }
    if id == ObjectIdentifier(Float.self) { return try float() as! T }
    if id == ObjectIdentifier(Decimal.self) { return try decimal() as! T }
    if id == ObjectIdentifier(Data.self) { return try data() as! T }
    if id == ObjectIdentifier(URL.self) { return try url() as! T }
    if id == ObjectIdentifier(Date.self) { return try date() as! T }
    // A type that asks this very decoder for a single value of its own type (as Int128 and
    // UInt128 would on an older runtime, or a type written that way) has no JSON form here:
    // asking it to decode itself again would recurse forever.
    if selfDecoding.contains(id) {
      throw DecodingError.typeMismatch(
        type,
        .init(
          codingPath: codingPath,
          debugDescription:
            "\(T.self) has no JSON form this decoder knows; use a string, number, boolean, Data (base64), URL or Date instead"
        ))
    }
    selfDecoding.append(id)
    defer { selfDecoding.removeLast() }
    return try T(from: self)
  }

  /// The other fixed-width integers, or `nil` when `type` is none of them.
  private func fixedWidthInteger<T>(_ type: T.Type, _ id: ObjectIdentifier) throws -> T? {
    switch id {
    case ObjectIdentifier(Int64.self): try integer(Int64.self) as? T
    case ObjectIdentifier(Int32.self): try integer(Int32.self) as? T
    case ObjectIdentifier(Int16.self): try integer(Int16.self) as? T
    case ObjectIdentifier(Int8.self): try integer(Int8.self) as? T
    case ObjectIdentifier(UInt.self): try integer(UInt.self) as? T
    case ObjectIdentifier(UInt64.self): try integer(UInt64.self) as? T
    case ObjectIdentifier(UInt32.self): try integer(UInt32.self) as? T
    case ObjectIdentifier(UInt16.self): try integer(UInt16.self) as? T
    case ObjectIdentifier(UInt8.self): try integer(UInt8.self) as? T
    case ObjectIdentifier(Int128.self): try integer(Int128.self) as? T
    case ObjectIdentifier(UInt128.self): try integer(UInt128.self) as? T
    default: nil
    }
  }

  private func number<T>(_ type: T.Type) throws -> Double {
    try JSONValueDecoder.number(value, as: type, at: codingPath)
  }

  /// Read from the number's text when there is one: text to `Float` rounds once, text to
  /// `Double` to `Float` may round twice.
  private func float() throws -> Float {
    let number = try number(Float.self)
    let float = value.numberText.flatMap { Float($0) } ?? Float(number)
    guard float.isFinite else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: codingPath,
          debugDescription: "the number \(value.numberText ?? "\(number)") is too large for a Float"
        ))
    }
    return float
  }

  private func decimal() throws -> Decimal {
    let number = try number(Decimal.self)
    if let text = value.numberText, let exact = Decimal(string: text, locale: nil) { return exact }
    return Decimal(number)
  }

  /// Read from the number's text, digit by digit: a `Double` would round integers beyond
  /// 2^53.
  private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    try JSONValueDecoder.integer(type, value, at: codingPath)
  }

  /// As `JSONDecoder` does by default: a base64 string.
  private func data() throws -> Data {
    try string(
      as: Data.self, expected: "a base64 string", parse: { Data(base64Encoded: $0) },
      problem: { "expected base64, found '\($0)'" })
  }

  /// As `JSONDecoder` does: the string, parsed by `URL(string:)`.
  private func url() throws -> URL {
    try string(
      as: URL.self, expected: "a URL string", parse: { URL(string: $0) },
      problem: { "'\($0)' is not a valid URL" })
  }

  /// A string that `parse` turns into a `T`; `problem` says what is wrong with one it cannot.
  private func string<T>(
    as type: T.Type, expected: String, parse: (String) -> T?, problem: (String) -> String
  ) throws -> T {
    guard case .string(let string) = value.kind else { throw mismatch(type, expected: expected) }
    guard let parsed = parse(string) else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: codingPath, debugDescription: problem(string)))
    }
    return parsed
  }

  /// An ISO 8601 string (`"2026-11-23T13:45:00Z"`, fractional seconds and offsets allowed),
  /// or a number of seconds since 1970-01-01T00:00:00Z. `JSONDecoder`'s default, seconds
  /// since 2001, is nobody's JSON convention, so it is not followed.
  private func date() throws -> Date {
    switch value.kind {
    case .number(let seconds):
      return Date(timeIntervalSince1970: seconds)
    case .string(let string):
      if let date = try? Date.ISO8601FormatStyle().parse(string) { return date }
      if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(string) {
        return date
      }
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: codingPath,
          debugDescription:
            "expected an ISO 8601 date such as '2026-11-23T13:45:00Z', found '\(string)'"))
    default:
      throw mismatch(Date.self, expected: "an ISO 8601 date string or seconds since 1970")
    }
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ValueDecoder
  let members: [JSONMember]
  let trackerEntry: Int

  var codingPath: [any CodingKey] { decoder.codingPath }
  private var tracker: KeyTracker { decoder.tracker }

  private func child(_ value: JSONValue, key childKey: Key) -> ValueDecoder {
    ValueDecoder(value: value, parentPath: codingPath, key: childKey, tracker: tracker)
  }

  var allKeys: [Key] {
    tracker.markAllUsed(in: trackerEntry)
    return members.compactMap { Key(stringValue: $0.key) }
  }

  func contains(_ key: Key) -> Bool {
    // The standard library's `decodeIfPresent` for scalars starts here, so a key asked about
    // is a key the type knows, even when it is absent.
    let name = key.stringValue
    tracker.asked(name, member: nil, in: trackerEntry)
    return members.contains { $0.key == name }
  }

  /// The member named `key`, noting that the type asked for it.
  private func lookUp(_ key: Key) -> JSONValue? {
    let name = key.stringValue
    let index = members.firstIndex { $0.key == name }
    tracker.asked(name, member: index, in: trackerEntry)
    return index.map { members[$0].value }
  }

  private func member(_ key: Key) throws -> JSONValue {
    guard let member = lookUp(key) else {
      throw DecodingError.keyNotFound(
        key,
        .init(codingPath: codingPath, debugDescription: "the key '\(key.stringValue)' is required"))
    }
    return member
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let member = lookUp(key) else { return true }
    return member.kind == .null
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try child(try member(key), key: key).decodeScalar(type)
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let member = lookUp(key), member.kind != .null else { return nil }
    return try child(member, key: key).decodeScalar(type)
  }

  // The protocol gives the 128-bit integers default requirements that throw, and those win
  // over the generic method above; these take their place.

  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
    try child(try member(key), key: key).decodeScalar(type)
  }

  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
    try child(try member(key), key: key).decodeScalar(type)
  }

  func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? {
    guard let member = lookUp(key), member.kind != .null else { return nil }
    return try child(member, key: key).decodeScalar(type)
  }

  func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? {
    guard let member = lookUp(key), member.kind != .null else { return nil }
    return try child(member, key: key).decodeScalar(type)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try child(try member(key), key: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(try member(key), key: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    child(try member(key), key: key)
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: ValueDecoder
  let elements: [JSONValue]
  var currentIndex = 0

  init(decoder: ValueDecoder, elements: [JSONValue]) {
    self.decoder = decoder
    self.elements = elements
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elements.count }
  var isAtEnd: Bool { currentIndex >= elements.count }

  private mutating func next() throws -> ValueDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        Any.self, .init(codingPath: codingPath, debugDescription: "the array has too few elements"))
    }
    defer { currentIndex += 1 }
    return decoder.child(elements[currentIndex], key: IndexKey(currentIndex))
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, elements[currentIndex].kind == .null else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try next().decodeScalar(type)
  }

  mutating func decode(_ type: Int128.Type) throws -> Int128 {
    try next().decodeScalar(type)
  }

  mutating func decode(_ type: UInt128.Type) throws -> UInt128 {
    try next().decodeScalar(type)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try next().container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next().unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    try next()
  }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
  let decoder: ValueDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { decoder.value.kind == .null }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try decoder.decodeScalar(type)
  }

  func decode(_ type: Int128.Type) throws -> Int128 {
    try decoder.decodeScalar(type)
  }

  func decode(_ type: UInt128.Type) throws -> UInt128 {
    try decoder.decodeScalar(type)
  }
}
