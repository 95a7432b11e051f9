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

/// The parser's state for one document, over its bytes.
///
/// Members and elements wait on stacks shared by every level of nesting until their container
/// closes, then move into an array of exactly their number: no array grows by appending. The
/// path of the value being read is kept as one number a level (a key's offset or an element's
/// index) and spelled out only when a duplicate key needs it. Everything is allocated when
/// first needed, so that parsing a lone string or number allocates nothing of its own.
private struct JSONReader: ~Copyable {
  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  private var depth = 0
  private var duplicateKeys: [JSONDocument.DuplicateKey] = []
  /// For each level of nesting from 1, what is being read there: the offset of a member's
  /// key (`>= 0`), or `-1 - i` for the element at index `i`.
  private var levels: UnsafeMutablePointer<Int>?
  private var elements = PendingStack<JSONValue>()
  private var members = PendingStack<JSONMember>()
  /// The source bytes of each pending member's key, when it had no escapes.
  private var keySpans = PendingStack<KeySpan>()
  private var strings = ShortStringCache()
  /// For each level from 1, the key last spelled out for a duplicate's path and the offset it
  /// was read at: every duplicate below one member shares its key, as it would have shared it
  /// had it been kept all along, instead of reading it again into a string of its own (a key
  /// of 100 KB over 10,000 duplicates would take a gigabyte).
  private var pathKeys: [(offset: Int, key: String)] = []

  /// Where a key's bytes sit in the source; `start` is negative when the key had escapes,
  /// so that its bytes are not those of its source.
  private struct KeySpan {
    var start: Int
    var count: Int
  }

  init(bytes: UnsafeBufferPointer<UInt8>, index: Int = 0) {
    self.bytes = bytes
    self.index = index
  }

  deinit {
    levels?.deallocate()
  }

  mutating func parseDocument() throws(JSONSyntaxError) -> JSONDocument {
    if bytes.starts(with: JSONParser.byteOrderMark) { index = JSONParser.byteOrderMark.count }
    skipWhitespace()
    if index == bytes.count {
      throw JSONSyntaxError(offset: 0, message: "the file is empty; expected a JSON object")
    }
    let root = try parseValue()
    skipWhitespace()
    if index != bytes.count {
      throw unexpected(" after the end of the document")
    }
    return JSONDocument(root: root, duplicateKeys: duplicateKeys)
  }

  private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
    skipWhitespace()
    guard index < bytes.count else {
      throw JSONSyntaxError(offset: index, message: "unexpected end of file; expected a value")
    }
    let start = index
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return JSONValue(.string(try parseString().string), offset: start)
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      return JSONValue(.bool(true), offset: start)
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      return JSONValue(.bool(false), offset: start)
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      return JSONValue(.null, offset: start)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      let (number, text) = try parseNumber()
      return JSONValue(number: number, text: text, offset: start)
    default:
      throw unexpected("; expected a value")
    }
  }

  /// A member's value or an array's element: a string read here, the commonest, without
  /// the general call.
  @inline(__always)
  private mutating func parseMemberOrElement() throws(JSONSyntaxError) -> JSONValue {
    skipWhitespace()
    if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
      let start = index
      return JSONValue(.string(try parseString().string), offset: start)
    }
    return try parseValue()
  }

  /// Enters a container; returns where its level's mark is kept.
  @inline(__always)
  private mutating func enterContainer() throws(JSONSyntaxError) -> UnsafeMutablePointer<Int> {
    depth += 1
    if depth > JSONParser.maximumDepth {
      throw JSONSyntaxError(
        offset: index, message: "nesting is deeper than \(JSONParser.maximumDepth) levels")
    }
    if let levels { return levels + depth }
    return allocateLevels() + depth
  }

  private mutating func allocateLevels() -> UnsafeMutablePointer<Int> {
    let allocated = UnsafeMutablePointer<Int>.allocate(capacity: JSONParser.maximumDepth + 1)
    levels = allocated
    return allocated
  }

  private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    let level = try enterContainer()
    index += 1
    if closesEmpty(UInt8(ascii: "}")) { return JSONValue(.object([]), offset: start) }
    let first = members.count
    // Keys are compared as the bytes they are: Swift's `String ==` also equates keys that
    // only Unicode normalisation makes equal ('é' and 'e' with a combining accent).
    var seen: Set<[UInt8]>?
    while true {
      skipWhitespace()
      guard peek() == UInt8(ascii: "\"") else {
        throw unexpected("; expected a key in double quotes")
      }
      let keyOffset = index
      let (key, isVerbatim) = try parseString()
      let span = KeySpan(start: isVerbatim ? keyOffset + 1 : -1, count: index - keyOffset - 2)
      skipWhitespace()
      guard peek() == UInt8(ascii: ":") else {
        throw unexpected("; expected ':' after the key '\(key)'")
      }
      index += 1
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
      if try closes(UInt8(ascii: "}"), after: "an object member") {
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
    for offset in 0..<count where bytes[first + offset] != bytes[second + offset] {
      return false
    }
    return true
  }

  private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    let level = try enterContainer()
    index += 1
    if closesEmpty(UInt8(ascii: "]")) { return JSONValue(.array([]), offset: start) }
    let first = elements.count
    while true {
      level.pointee = -1 - (elements.count - first)
      let element = try parseMemberOrElement()
      elements.append(element)
      if try closes(UInt8(ascii: "]"), after: "an array element") {
        return JSONValue(.array(elements.moveArray(from: first)), offset: start)
      }
    }
  }

  /// The path of the container being read at the current depth, spelled out from the
  /// marks kept for the levels above it.
  private mutating func path() -> JSONPath {
    guard let levels else { return .root }
    var components: [JSONPath.Component] = []
    components.reserveCapacity(depth - 1)
    for level in stride(from: 1, to: depth, by: 1) {
      let mark = levels[level]
      if mark >= 0 {
        components.append(.key(pathKey(at: level, offset: mark)))
      } else {
        components.append(.index(-1 - mark))
      }
    }
    return JSONPath(components: components)
  }

  /// The key at `offset`, the member being read at `level`: read once for all the duplicates
  /// below that member.
  private mutating func pathKey(at level: Int, offset: Int) -> String {
    while pathKeys.count < level { pathKeys.append((-1, "")) }
    if pathKeys[level - 1].offset == offset { return pathKeys[level - 1].key }
    // The key was read once already, so reading it again cannot fail.
    var reader = JSONReader(bytes: bytes, index: offset)
    let key = (try? reader.parseString().string) ?? ""
    pathKeys[level - 1] = (offset, key)
    return key
  }

  /// At the start of a container: steps past `closer` and leaves the container when it is
  /// empty; returns whether it was.
  @inline(__always)
  private mutating func closesEmpty(_ closer: UInt8) -> Bool {
    skipWhitespace()
    guard peek() == closer else { return false }
    index += 1
    depth -= 1
    return true
  }

  /// After a member or element, `what`: skips the comma before the next one and returns
  /// `false`, or steps past `closer`, leaves the container and returns `true`.
  @inline(__always)
  private mutating func closes(_ closer: UInt8, after what: StaticString) throws(JSONSyntaxError)
    -> Bool
  {
    skipWhitespace()
    switch peek() {
    case UInt8(ascii: ","):
      try skipComma(before: closer)
      return false
    case closer:
      index += 1
      depth -= 1
      return true
    default:
      throw unexpectedAfterItem(closer, what)
    }
  }

  @inline(never)
  private func unexpectedAfterItem(_ closer: UInt8, _ what: StaticString) -> JSONSyntaxError {
    unexpected("; expected ',' or '\(Character(Unicode.Scalar(closer)))' after \(what)")
  }

  /// Reads the string whose opening quote is at `index`; `isVerbatim` when it had no
  /// escapes, so that its bytes are those between its quotes.
  ///
  /// The usual string, plain and shorter than 16 bytes, is read here as one or two words
  /// with its closing quote, and found by them among the strings met lately.
  @inline(__always)
  private mutating func parseString() throws(JSONSyntaxError) -> (string: String, isVerbatim: Bool)
  {
    let content = index &+ 1
    if content &+ 16 <= bytes.count {
      let word = Self.word(bytes, at: content)
      let stops = Self.stops(in: word)
      if stops != 0 {
        let count = stops.trailingZeroBitCount &>> 3
        if bytes[content &+ count] == UInt8(ascii: "\"") {
          let first = word & ((1 &<< (UInt64(count) &* 8)) &- 1)
          if let string = strings.string(first: first, last: 0, count: count) {
            index = content &+ count &+ 1
            return (string, true)
          }
        }
      } else {
        let stops = Self.stops(in: Self.word(bytes, at: content &+ 8))
        if stops != 0 {
          let count = 8 &+ stops.trailingZeroBitCount &>> 3
          if bytes[content &+ count] == UInt8(ascii: "\"") {
            let last = Self.word(bytes, at: content &+ count &- 8)
            if let string = strings.string(first: word, last: last, count: count) {
              index = content &+ count &+ 1
              return (string, true)
            }
          }
        }
      }
    }
    return try parseAnyString()
  }

  /// ``parseString()`` for any string.
  private mutating func parseAnyString() throws(JSONSyntaxError) -> (
    string: String, isVerbatim: Bool
  ) {
    let start = index
    let content = start &+ 1
    index = content
    // Any plain string: eight bytes at a time while eight remain, the first quote, backslash
    // or control character in a word ending the scan there.
    var scan = content
    var high: UInt64 = 0
    var stopped = false
    while scan &+ 8 <= bytes.count {
      let word = Self.word(bytes, at: scan)
      let stops = Self.stops(in: word)
      if stops != 0 {
        let before = stops.trailingZeroBitCount &>> 3
        high |= word & ((1 &<< (UInt64(before) &* 8)) &- 1)
        scan &+= before
        stopped = true
        break
      }
      high |= word
      scan &+= 8
    }
    if !stopped {
      while scan < bytes.count {
        let byte = bytes[scan]
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
        high |= UInt64(byte)
        scan += 1
      }
    }
    guard scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") else {
      return (try parseEscapedString(start: start, plainUpTo: scan), false)
    }
    let count = scan - content
    index = scan + 1
    let words = ShortStringCache.words(bytes, from: content, count: count)
    if let words, let string = strings.string(first: words.first, last: words.last, count: count) {
      return (string, true)
    }
    let string = try makeString(start: start, count: count, isASCII: high & Self.highBits == 0)
    if let words { strings.remember(string, first: words.first, last: words.last, count: count) }
    return (string, true)
  }

  /// The string of the `count` plain bytes after the quote at `start`.
  private func makeString(start: Int, count: Int, isASCII: Bool) throws(JSONSyntaxError) -> String {
    let content = UnsafeBufferPointer(rebasing: bytes[start + 1..<start + 1 + count])
    if isASCII { return String(decoding: content, as: UTF8.self) }
    guard let string = String(validating: content, as: UTF8.self) else {
      throw JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
    }
    return string
  }

  private static let highBits: UInt64 = 0x8080_8080_8080_8080

  /// The eight bytes at `offset`, the first in the lowest bits.
  @inline(__always)
  fileprivate static func word(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
    UInt64(
      littleEndian: UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped + offset)
        .loadUnaligned(as: UInt64.self))
  }

  /// The high bit of each byte of `word` that is a quote, a backslash or a control
  /// character; exact up to the first of them (beyond it, borrows may set others).
  @inline(__always)
  private static func stops(in word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let isQuote = (quotes &- ones) & ~quotes
    let isBackslash = (backslashes &- ones) & ~backslashes
    let isControl = (word &- ones &* 0x20) & ~word
    return (isQuote | isBackslash | isControl) & 0x8080_8080_8080_8080
  }

  /// The rest of a string that has an escape, a control character or no end; the bytes
  /// before `plainUpTo` are plain.
  private mutating func parseEscapedString(start: Int, plainUpTo plain: Int)
    throws(JSONSyntaxError) -> String
  {
    var scalars: [UInt8] = []
    var run = index
    index = plain
    while true {
      guard index < bytes.count else {
        throw JSONSyntaxError(offset: start, message: "unterminated string")
      }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
        index += 1
        guard let string = String(validating: scalars, as: UTF8.self) else {
          throw JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
        }
        return string
      case UInt8(ascii: "\\"):
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
        try parseEscape(into: &scalars)
        run = index
      case 0..<0x20:
        throw JSONSyntaxError(
          offset: index, message: "a control character must be escaped inside a string")
      default:
        index += 1
      }
    }
  }

  private mutating func parseEscape(into scalars: inout [UInt8]) throws(JSONSyntaxError) {
    let escapeStart = index
    index += 1
    guard index < bytes.count else {
      throw JSONSyntaxError(offset: escapeStart, message: "unterminated escape sequence")
    }
    let byte = bytes[index]
    index += 1
    let simple: UInt8? =
      switch byte {
      case UInt8(ascii: "\""): UInt8(ascii: "\"")
      case UInt8(ascii: "\\"): UInt8(ascii: "\\")
      case UInt8(ascii: "/"): UInt8(ascii: "/")
      case UInt8(ascii: "b"): 0x08
      case UInt8(ascii: "f"): 0x0C
      case UInt8(ascii: "n"): 0x0A
      case UInt8(ascii: "r"): 0x0D
      case UInt8(ascii: "t"): 0x09
      default: nil
      }
    if let simple {
      scalars.append(simple)
      return
    }
    guard byte == UInt8(ascii: "u") else {
      throw JSONSyntaxError(offset: escapeStart, message: "invalid escape sequence in a string")
    }
    var code = try parseHex4(escapeStart: escapeStart)
    if (0xD800...0xDBFF).contains(code) {
      guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
        bytes[index + 1] == UInt8(ascii: "u")
      else {
        throw JSONSyntaxError(offset: escapeStart, message: "unpaired UTF-16 surrogate in a string")
      }
      index += 2
      let low = try parseHex4(escapeStart: escapeStart)
      guard (0xDC00...0xDFFF).contains(low) else {
        throw JSONSyntaxError(offset: escapeStart, message: "unpaired UTF-16 surrogate in a string")
      }
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
    } else if (0xDC00...0xDFFF).contains(code) {
      throw JSONSyntaxError(offset: escapeStart, message: "unpaired UTF-16 surrogate in a string")
    }
    guard let scalar = Unicode.Scalar(code) else {
      throw JSONSyntaxError(offset: escapeStart, message: "invalid unicode escape in a string")
    }
    UTF8.encode(scalar) { scalars.append($0) }
  }

  private mutating func parseHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
    guard index + 4 <= bytes.count else {
      throw JSONSyntaxError(offset: escapeStart, message: "incomplete unicode escape in a string")
    }
    var value: UInt32 = 0
    for byte in bytes[index..<index + 4] {
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default:
        throw JSONSyntaxError(offset: escapeStart, message: "invalid unicode escape in a string")
      }
      value = value << 4 | digit
    }
    index += 4
    return value
  }

  private mutating func parseNumber() throws(JSONSyntaxError) -> (Double, String) {
    let start = index
    if peek() == UInt8(ascii: "-") { index += 1 }
    guard let first = peek(), isDigit(first) else {
      throw JSONSyntaxError(offset: start, message: "invalid number")
    }
    if first == UInt8(ascii: "0") {
      index += 1
      if let next = peek(), isDigit(next) {
        throw JSONSyntaxError(offset: start, message: "a number cannot have leading zeros")
      }
    } else {
      skipDigits()
    }
    if peek() == UInt8(ascii: ".") {
      index += 1
      guard let next = peek(), isDigit(next) else {
        throw JSONSyntaxError(offset: start, message: "invalid number: expected a digit after '.'")
      }
      skipDigits()
    }
    if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
      index += 1
      if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
      guard let next = peek(), isDigit(next) else {
        throw JSONSyntaxError(
          offset: start, message: "invalid number: expected a digit in the exponent")
      }
      skipDigits()
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw JSONSyntaxError(offset: start, message: "the number \(text.prefix(40)) is out of range")
    }
    return (value, text)
  }

  private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
    let start = index
    let count = literal.utf8CodeUnitCount
    let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
    // Byte by byte: a generic `elementsEqual` of the slice is not always inlined.
    var matches = index + count <= bytes.count
    for position in 0..<count where matches {
      matches = bytes[index + position] == expected[position]
    }
    guard matches else {
      throw JSONSyntaxError(
        offset: start, message: "unexpected \(describeCurrent()); expected a value")
    }
    index += count
  }

  /// Steps over a comma between members or elements, naming a trailing comma (allowed in
  /// Swift and JavaScript, not in JSON) rather than calling what follows it unexpected.
  @inline(__always)
  private mutating func skipComma(before closing: UInt8) throws(JSONSyntaxError) {
    let comma = index
    index += 1
    skipWhitespace()
    if peek() == closing { throw Self.trailingComma(at: comma, before: closing) }
  }

  @inline(never)
  private static func trailingComma(at comma: Int, before closing: UInt8) -> JSONSyntaxError {
    JSONSyntaxError(
      offset: comma,
      message:
        "a trailing comma before '\(Character(Unicode.Scalar(closing)))'; remove it, as JSON allows no comma after the last item"
    )
  }

  private mutating func skipDigits() {
    while let byte = peek(), isDigit(byte) { index += 1 }
  }

  @inline(__always)
  private mutating func skipWhitespace() {
    // Anything above a space, the usual case, is told in one comparison.
    while index < bytes.count, bytes[index] <= UInt8(ascii: " ") {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
      default: return
      }
    }
  }

  @inline(__always)
  private func peek() -> UInt8? {
    index < bytes.count ? bytes[index] : nil
  }

  @inline(__always)
  private func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  /// The error for what is at `index` where something else belongs, `expectation` ending its
  /// message. A comment is named as one: JSON allows none, though JavaScript and the JSON
  /// with comments of some editors' settings do, and "unexpected character '/'" does not say
  /// that the whole comment must go.
  @inline(never)
  private func unexpected(_ expectation: String) -> JSONSyntaxError {
    if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "/"),
      bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")
    {
      let comment = bytes[index + 1] == UInt8(ascii: "/") ? "//" : "/* */"
      return JSONSyntaxError(
        offset: index, message: "a comment ('\(comment)'); remove it, as JSON allows no comments")
    }
    return JSONSyntaxError(offset: index, message: "unexpected \(describeCurrent())\(expectation)")
  }

  private func describeCurrent() -> String {
    guard index < bytes.count else { return "end of file" }
    if bytes[index...].starts(with: JSONParser.byteOrderMark) {
      return "byte-order mark (U+FEFF)"
    }
    let byte = bytes[index]
    if byte >= 0x20 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x\(String(byte, radix: 16, uppercase: true))"
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
