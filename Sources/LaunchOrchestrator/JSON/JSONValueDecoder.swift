/// Decodes `Decodable` types straight from a ``JSONValue`` tree, remembering which object keys
/// the type read so that keys it does not know can be reported.
struct JSONValueDecoder {
  /// An object key that the decoded type never asked for.
  struct UnusedKey {
    var path: JSONPath
    var key: String
    var offset: Int?
    var knownKeys: [String]
  }

  /// Decodes `type` from `value`; `unusedKeys` lists keys no container asked for.
  static func decode<T: Decodable>(
    _ type: T.Type, from value: JSONValue, userInfo: [CodingUserInfoKey: any Sendable] = [:]
  ) throws -> (value: T, unusedKeys: [UnusedKey]) {
    let tracker = KeyTracker()
    let decoder = ValueDecoder(value: value, codingPath: [], tracker: tracker, userInfo: userInfo)
    let decoded = try T(from: decoder)
    return (decoded, tracker.unusedKeys())
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

private final class KeyTracker {
  private struct Entry {
    var path: [any CodingKey]
    var members: [JSONMember]
    var used: Set<String> = []
    var listedAllKeys = false
  }

  private var entries: [Entry] = []

  func register(path: [any CodingKey], members: [JSONMember]) -> Int {
    entries.append(Entry(path: path, members: members))
    return entries.count - 1
  }

  func markUsed(_ key: String, in entry: Int) {
    entries[entry].used.insert(key)
  }

  func markAllUsed(in entry: Int) {
    entries[entry].listedAllKeys = true
  }

  /// Keys of every object that no container read. A type may decode the same object more
  /// than once (through several containers, or a super decoder), so reads are pooled per path.
  func unusedKeys() -> [JSONValueDecoder.UnusedKey] {
    // The common case, every key read: no paths to build.
    if entries.allSatisfy({ entry in
      entry.listedAllKeys || entry.members.allSatisfy { entry.used.contains($0.key) }
    }) {
      return []
    }
    var seen: Set<String> = []
    var result: [JSONValueDecoder.UnusedKey] = []
    let used = Dictionary(
      entries.map { (JSONPath(codingPath: $0.path).description, $0) },
      uniquingKeysWith: { first, second in
        var merged = first
        merged.used.formUnion(second.used)
        merged.listedAllKeys = first.listedAllKeys || second.listedAllKeys
        return merged
      })
    for entry in entries {
      let pathText = JSONPath(codingPath: entry.path).description
      guard let merged = used[pathText], !merged.listedAllKeys, seen.insert(pathText).inserted
      else {
        continue
      }
      for member in entry.members where !merged.used.contains(member.key) {
        result.append(
          .init(
            path: JSONPath(codingPath: entry.path), key: member.key, offset: member.keyOffset,
            knownKeys: merged.used.sorted()))
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

private struct ValueDecoder: Decoder {
  let value: JSONValue
  let codingPath: [any CodingKey]
  let tracker: KeyTracker
  let userInfo: [CodingUserInfoKey: Any]

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard let members = value.members else {
      throw DecodingError.typeMismatch(
        [String: Any].self,
        .init(
          codingPath: codingPath,
          debugDescription: "expected an object, found \(value.typeDescription)"))
    }
    let entry = tracker.register(path: codingPath, members: members)
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
    ValueDecoder(value: value, codingPath: codingPath + [key], tracker: tracker, userInfo: userInfo)
  }

  func mismatch<T>(_ type: T.Type, expected: String) -> DecodingError {
    .typeMismatch(
      type,
      .init(
        codingPath: codingPath,
        debugDescription: "expected \(expected), found \(value.typeDescription)"))
  }

  func decodeScalar<T: Decodable>(_ type: T.Type) throws -> T {
    switch type {
    case is Bool.Type:
      guard case .bool(let bool) = value.kind else {
        throw mismatch(type, expected: "true or false")
      }
      return bool as! T
    case is String.Type:
      guard case .string(let string) = value.kind else {
        throw mismatch(type, expected: "a string")
      }
      return string as! T
    case is Double.Type:
      return try number(type) as! T
    case is Float.Type:
      return Float(try number(type)) as! T
    case is Int.Type: return try integer(Int.self) as! T
    case is Int64.Type: return try integer(Int64.self) as! T
    case is Int32.Type: return try integer(Int32.self) as! T
    case is UInt.Type: return try integer(UInt.self) as! T
    case is UInt64.Type: return try integer(UInt64.self) as! T
    case is UInt32.Type: return try integer(UInt32.self) as! T
    default:
      return try T(from: self)
    }
  }

  private func number<T>(_ type: T.Type) throws -> Double {
    guard case .number(let number) = value.kind else { throw mismatch(type, expected: "a number") }
    return number
  }

  private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    let number = try number(type)
    guard number == number.rounded(), let exact = T(exactly: number) else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: codingPath,
          debugDescription: "expected a whole number between \(T.min) and \(T.max), found \(number)"
        ))
    }
    return exact
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ValueDecoder
  let members: [JSONMember]
  let trackerEntry: Int

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] {
    decoder.tracker.markAllUsed(in: trackerEntry)
    return members.compactMap { Key(stringValue: $0.key) }
  }

  func contains(_ key: Key) -> Bool {
    members.contains { $0.key == key.stringValue }
  }

  private func member(_ key: Key) throws -> JSONValue {
    decoder.tracker.markUsed(key.stringValue, in: trackerEntry)
    guard let member = members.first(where: { $0.key == key.stringValue }) else {
      throw DecodingError.keyNotFound(
        key,
        .init(codingPath: codingPath, debugDescription: "the key '\(key.stringValue)' is required"))
    }
    return member.value
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    decoder.tracker.markUsed(key.stringValue, in: trackerEntry)
    guard let member = members.first(where: { $0.key == key.stringValue }) else { return true }
    return member.value.kind == .null
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try decoder.child(try member(key), key: key).decodeScalar(type)
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    decoder.tracker.markUsed(key.stringValue, in: trackerEntry)
    guard let member = members.first(where: { $0.key == key.stringValue }),
      member.value.kind != .null
    else {
      return nil
    }
    return try decoder.child(member.value, key: key).decodeScalar(type)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try decoder.child(try member(key), key: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder.child(try member(key), key: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.child(try member(key), key: key)
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
}
