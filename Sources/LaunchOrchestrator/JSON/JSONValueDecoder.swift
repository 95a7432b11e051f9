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
    let tracker = KeyTracker(recordsAskedKeys: false, userInfo: userInfo)
    let decoded = try T(
      from: ValueDecoder(value: value, parentPath: [], key: nil, tracker: tracker))
    guard tracker.hasUnusedKeys else { return (decoded, []) }
    // Suggestions for unknown keys need every key the type asked for, found or not. The fast
    // pass above does not keep them; decoding again is deterministic and only happens for
    // params with a mistake in them.
    let diagnosing = KeyTracker(recordsAskedKeys: true, userInfo: userInfo)
    _ = try T(from: ValueDecoder(value: value, parentPath: [], key: nil, tracker: diagnosing))
    return (decoded, diagnosing.unusedKeys())
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
  private let recordsAskedKeys: Bool
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
    .typeMismatch(
      type,
      .init(
        codingPath: codingPath,
        debugDescription: "expected \(expected), found \(value.typeDescription)"))
  }

  func decodeScalar<T: Decodable>(_ type: T.Type) throws -> T {
    // Metatype identity, not `is` casts: this runs for every parameter of every step, in
    // code the compiler cannot specialize.
    let id = ObjectIdentifier(type)
    if id == ObjectIdentifier(String.self) {
      guard case .string(let string) = value.kind else {
        throw mismatch(type, expected: "a string")
      }
      return string as! T
    }
    if id == ObjectIdentifier(Bool.self) {
      guard case .bool(let bool) = value.kind else {
        throw mismatch(type, expected: "true or false")
      }
      return bool as! T
    }
    if id == ObjectIdentifier(Double.self) { return try number(type) as! T }
    if id == ObjectIdentifier(Int.self) { return try integer(Int.self) as! T }
    if id == ObjectIdentifier(Float.self) { return Float(try number(type)) as! T }
    if id == ObjectIdentifier(Int64.self) { return try integer(Int64.self) as! T }
    if id == ObjectIdentifier(Int32.self) { return try integer(Int32.self) as! T }
    if id == ObjectIdentifier(UInt.self) { return try integer(UInt.self) as! T }
    if id == ObjectIdentifier(UInt64.self) { return try integer(UInt64.self) as! T }
    if id == ObjectIdentifier(UInt32.self) { return try integer(UInt32.self) as! T }
    return try T(from: self)
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
