/// A JSON syntax error at a byte offset of its source.
public struct JSONSyntaxError: Error, Sendable, Equatable {
  /// The UTF-8 byte offset where the problem was found.
  public var offset: Int
  /// What is wrong, as a sentence fragment ("expected ',' or '}' after an object member").
  public var message: String
}

/// A parsed JSON document: its root value and the duplicate keys met on the way.
public struct JSONDocument: Sendable {
  /// A key that appeared twice in one object.
  public struct DuplicateKey: Sendable, Equatable {
    /// The repeated key.
    public var key: String
    /// Where the object holding it sits.
    public var path: JSONPath
    /// The byte offset of the repeated occurrence.
    public var offset: Int
  }

  /// The root value.
  public var root: JSONValue
  /// Keys repeated within one object; the first occurrence is the one kept in `root`.
  public var duplicateKeys: [DuplicateKey]
}

/// A strict RFC 8259 JSON parser that records where every value starts.
///
/// A UTF-8 byte-order mark at the start is skipped, as RFC 8259 allows and Foundation's
/// `JSONDecoder` does: editors on Windows add one, and it changes nothing about the text.
/// Nesting is limited to ``maximumDepth`` levels so hostile input cannot overflow the stack.
public struct JSONParser {
  /// The deepest nesting of arrays and objects accepted.
  public static let maximumDepth = 256
  /// The UTF-8 encoding of U+FEFF, which some editors write at the start of a file.
  package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

  /// Parses a whole document.
  public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONDocument {
    if let encoding = wideEncoding(of: bytes) {
      throw JSONSyntaxError(
        offset: 0, message: "the file is \(encoding) text; save it as UTF-8, which JSON requires")
    }
    // The bytes are read through a pointer for the whole parse: no bounds checks, no
    // retains of the array, in the loops that look at every byte.
    return try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in
      var reader = JSONReader(bytes: buffer)
      return try reader.parseDocument()
    }
  }

  /// `"UTF-16"` or `"UTF-32"` when `bytes` are text in one of them, else `nil`: told by the
  /// byte-order mark, or without one by where the NUL bytes of the first character fall, as
  /// RFC 4627 told them. JSON text starts with an ASCII character, and holds no NUL byte in
  /// UTF-8, so the pattern is no valid UTF-8 document.
  static func wideEncoding(of bytes: [UInt8]) -> String? {
    // UTF-32's little-endian mark starts with UTF-16's, so it is looked for first.
    if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00])
    {
      return "UTF-32"
    }
    if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return "UTF-16" }
    func isASCII(_ position: Int) -> Bool { (0x01...0x7F).contains(bytes[position]) }
    if bytes.count >= 4,
      bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0 && isASCII(3)
        || isASCII(0) && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0
    {
      return "UTF-32"
    }
    if bytes.count >= 2, bytes[0] == 0 && isASCII(1) || isASCII(0) && bytes[1] == 0 {
      return "UTF-16"
    }
    return nil
  }
}

/// The parser's state for one document, over its bytes: the values it builds as it reads,
/// the tokens read by its ``JSONCursor``.
///
/// Members and elements wait on stacks shared by every level of nesting until their container
/// closes, then move into an array of exactly their number: no array grows by appending. The
/// path of the value being read is kept as one number a level (a key's offset or an element's
/// index) and spelled out only when a duplicate key needs it. Everything is allocated when
/// first needed, so that parsing a lone string or number allocates nothing of its own.
private struct JSONReader: ~Copyable {
  /// The bytes and the nesting; the mark of each level (``JSONCursor/levels``) is the offset
  /// of a member's key (`>= 0`), or `-1 - i` for the element at index `i`.
  private var cursor: JSONCursor
  private var duplicateKeys: [JSONDocument.DuplicateKey] = []
  private var elements = PendingStack<JSONValue>()
  private var members = PendingStack<JSONMember>()
  /// The source bytes of each pending member's key, when it had no escapes.
  private var keySpans = PendingStack<KeySpan>()
  private var strings = ShortStringCache()
  /// For each level from 1, the key last spelled out for a duplicate's path and the offset it
  /// was read at: every duplicate below one member shares its key, as it would have shared it
  /// had it been kept all along, instead of reading it again into a string of its own (a key
  /// of 100 KB over 10,000 duplicates would take a gigabyte).
  private var pathKeys: [(mark: Int, key: String)] = []

  /// Where a key's bytes sit in the source; `start` is negative when the key had escapes,
  /// so that its bytes are not those of its source.
  private struct KeySpan {
    var start: Int
    var count: Int
  }

  init(bytes: UnsafeBufferPointer<UInt8>, index: Int = 0) {
    cursor = JSONCursor(bytes: bytes, index: index)
  }

  mutating func parseDocument() throws(JSONSyntaxError) -> JSONDocument {
    try cursor.startDocument()
    let root = try parseValue()
    try cursor.endDocument()
    return JSONDocument(root: root, duplicateKeys: duplicateKeys)
  }

  private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
    let byte = try cursor.valueStart()
    let start = cursor.index
    switch byte {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return JSONValue(.string(try parseString().string), offset: start)
    case UInt8(ascii: "t"):
      try cursor.expectLiteral("true")
      return JSONValue(.bool(true), offset: start)
    case UInt8(ascii: "f"):
      try cursor.expectLiteral("false")
      return JSONValue(.bool(false), offset: start)
    case UInt8(ascii: "n"):
      try cursor.expectLiteral("null")
      return JSONValue(.null, offset: start)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      let (number, text) = try cursor.readNumber()
      return JSONValue(number: number, text: text, offset: start)
    default:
      throw cursor.notAValue()
    }
  }

  /// A member's value or an array's element: a string read here, the commonest, without
  /// the general call.
  @inline(__always)
  private mutating func parseMemberOrElement() throws(JSONSyntaxError) -> JSONValue {
    if cursor.atString() {
      let start = cursor.index
      return JSONValue(.string(try parseString().string), offset: start)
    }
    return try parseValue()
  }

  private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
    let start = cursor.index
    guard let level = try cursor.enter(closedBy: UInt8(ascii: "}")) else {
      return JSONValue(.object([]), offset: start)
    }
    let first = members.count
    // Keys are compared as the bytes they are: Swift's `String ==` also equates keys that
    // only Unicode normalisation makes equal ('é' and 'e' with a combining accent).
    var seen: Set<[UInt8]>?
    while true {
      try cursor.expectKey()
      let keyOffset = cursor.index
      let (key, isVerbatim) = try parseString()
      let span = KeySpan(
        start: isVerbatim ? keyOffset + 1 : -1, count: cursor.index - keyOffset - 2)
      guard cursor.skipColon() else { throw cursor.missingColon(after: key) }
      level.pointee = keyOffset
      let value = try parseMemberOrElement()
      // Most objects are small, and a scan beats hashing until they are not.
      let isNew: Bool
      if members.count - first < 16 {
        isNew = !containsKey(key, span: span, from: first)
      } else {
        if seen == nil { seen = Set(members.buffer(from: first).map { Array($0.key.utf8) }) }
        isNew = seen!.insert(Array(key.utf8)).inserted
      }
      if isNew {
        members.append(JSONMember(key: key, keyOffset: keyOffset, value: value))
        keySpans.append(span)
      } else {
        duplicateKeys.append(.init(key: key, path: path(), offset: keyOffset))
      }
      if try cursor.closes(UInt8(ascii: "}"), after: "an object member") {
        keySpans.removeAll(from: first)
        return JSONValue(.object(members.moveArray(from: first)), offset: start)
      }
    }
  }

  /// Whether a pending member of the object whose members start at `first` has `key`.
  @inline(__always)
  private func containsKey(_ key: String, span: KeySpan, from first: Int) -> Bool {
    let spans = keySpans.buffer(from: first)
    for position in spans.indices {
      let other = spans[position]
      if span.start >= 0 && other.start >= 0 {
        // Both keys are their source bytes: compared there, without reading either string.
        if span.count == other.count
          && sameBytes(at: span.start, and: other.start, count: span.count)
        {
          return true
        }
      } else if members.buffer(from: first)[position].key.hasSameBytes(as: key) {
        return true
      }
    }
    return false
  }

  private func sameBytes(at first: Int, and second: Int, count: Int) -> Bool {
    for offset in 0..<count where cursor.bytes[first + offset] != cursor.bytes[second + offset] {
      return false
    }
    return true
  }

  private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
    let start = cursor.index
    guard let level = try cursor.enter(closedBy: UInt8(ascii: "]")) else {
      return JSONValue(.array([]), offset: start)
    }
    let first = elements.count
    while true {
      level.pointee = -1 - (elements.count - first)
      let element = try parseMemberOrElement()
      elements.append(element)
      if try cursor.closes(UInt8(ascii: "]"), after: "an array element") {
        return JSONValue(.array(elements.moveArray(from: first)), offset: start)
      }
    }
  }

  /// The path of the container being read at the current depth.
  private mutating func path() -> JSONPath {
    let bytes = cursor.bytes
    return cursor.path(keys: &pathKeys) { offset in
      // The key was read once already, so reading it again cannot fail.
      var reader = JSONReader(bytes: bytes, index: offset)
      return (try? reader.parseString().string) ?? ""
    }
  }

  /// Reads the string whose opening quote is at the cursor; `isVerbatim` when it had no
  /// escapes, so that its bytes are those between its quotes.
  ///
  /// The usual string, plain and shorter than 16 bytes, is read here as one or two words
  /// with its closing quote, and found by them among the strings met lately.
  @inline(__always)
  private mutating func parseString() throws(JSONSyntaxError) -> (string: String, isVerbatim: Bool)
  {
    let bytes = cursor.bytes
    let content = cursor.index &+ 1
    if content &+ 16 <= bytes.count {
      let word = JSONCursor.word(bytes, at: content)
      let stops = JSONCursor.stops(in: word)
      if stops != 0 {
        let count = stops.trailingZeroBitCount &>> 3
        if bytes[content &+ count] == UInt8(ascii: "\"") {
          let first = word & ((1 &<< (UInt64(count) &* 8)) &- 1)
          if let string = strings.string(first: first, last: 0, count: count) {
            cursor.index = content &+ count &+ 1
            return (string, true)
          }
        }
      } else {
        let stops = JSONCursor.stops(in: JSONCursor.word(bytes, at: content &+ 8))
        if stops != 0 {
          let count = 8 &+ stops.trailingZeroBitCount &>> 3
          if bytes[content &+ count] == UInt8(ascii: "\"") {
            let last = JSONCursor.word(bytes, at: content &+ count &- 8)
            if let string = strings.string(first: word, last: last, count: count) {
              cursor.index = content &+ count &+ 1
              return (string, true)
            }
          }
        }
      }
    }
    return try parseAnyString()
  }

  /// ``parseString()`` for any string: the cursor finds its plain run, and a plain string is
  /// made of it, or found among the strings met lately.
  private mutating func parseAnyString() throws(JSONSyntaxError) -> (
    string: String, isVerbatim: Bool
  ) {
    let start = cursor.index
    let content = start &+ 1
    let (end, isASCII) = cursor.plainRun(from: start)
    guard end < cursor.bytes.count, cursor.bytes[end] == UInt8(ascii: "\"") else {
      return (try cursor.readEscapedString(start: start, plainUpTo: end), false)
    }
    let count = end - content
    cursor.index = end + 1
    let words = ShortStringCache.words(cursor.bytes, from: content, count: count)
    if let words, let string = strings.string(first: words.first, last: words.last, count: count) {
      return (string, true)
    }
    let string = try cursor.makeString(start: start, count: count, isASCII: isASCII)
    if let words { strings.remember(string, first: words.first, last: words.last, count: count) }
    return (string, true)
  }
}

/// Values waiting for their container to close, on a stack shared by every level of
/// nesting: a container's own run of it moves into an array of exactly its size.
private struct PendingStack<Element>: ~Copyable {
  private var base: UnsafeMutablePointer<Element>?
  private var capacity = 0
  private(set) var count = 0

  deinit {
    if let base {
      base.deinitialize(count: count)
      base.deallocate()
    }
  }

  /// The pending elements from `first` on.
  func buffer(from first: Int) -> UnsafeBufferPointer<Element> {
    UnsafeBufferPointer(start: base.map { $0 + first }, count: count - first)
  }

  mutating func append(_ element: consuming Element) {
    if count == capacity { grow() }
    (base.unsafelyUnwrapped + count).initialize(to: element)
    count += 1
  }

  private mutating func grow() {
    let larger = UnsafeMutablePointer<Element>.allocate(capacity: max(16, capacity * 2))
    if let base {
      larger.moveInitialize(from: base, count: count)
      base.deallocate()
    }
    base = larger
    capacity = max(16, capacity * 2)
  }

  /// Moves the elements from `first` on into an array, and off the stack.
  mutating func moveArray(from first: Int) -> [Element] {
    let moved = count - first
    // Containers close early when empty; `[]` all the same, which allocates nothing.
    guard moved > 0 else { return [] }
    // Appending after reserving: `Array(unsafeUninitializedCapacity:)` would find the
    // array's storage class through the runtime's generic metadata cache each time.
    let base = base.unsafelyUnwrapped
    var array: [Element] = []
    array.reserveCapacity(moved)
    for offset in first..<count { array.append((base + offset).move()) }
    count = first
    return array
  }

  /// Drops the elements from `first` on.
  mutating func removeAll(from first: Int) {
    base?.advanced(by: first).deinitialize(count: count - first)
    count = first
  }
}
