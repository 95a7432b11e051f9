/// The token-level grammar of JSON, once, for both readers of it: a cursor over a document's
/// bytes that steps over whitespace, literals, numbers, strings and their escapes, commas and
/// closing brackets, keeps the nesting, and makes every syntax error with its text and offset.
///
/// ``JSONParser``'s reader builds values and ``JSONScanner`` writes a ``JSONTape``, each of its
/// own structure; the bytes they step over, and the errors they give, are the cursor's. Where
/// the two differ, the cursor does the shared part and leaves the rest: it finds where a
/// string's plain run ends, and the parser makes a `String` of it while the scanner only
/// checks it. Its hot members are inlined into each reader, so it costs neither a call.
struct JSONCursor: ~Copyable {
  let bytes: UnsafeBufferPointer<UInt8>
  /// The offset of the next byte to read.
  var index: Int
  /// How many containers the cursor is in.
  private(set) var depth = 0
  /// For each level of nesting from 1, a mark the reader keeps for what is being read there
  /// (where a member's key is, or an element's position), from which it spells out a path.
  private(set) var levels: UnsafeMutablePointer<Int>?

  init(bytes: UnsafeBufferPointer<UInt8>, index: Int = 0) {
    self.bytes = bytes
    self.index = index
  }

  deinit {
    levels?.deallocate()
  }

  // MARK: The document and its values

  /// Steps past a byte-order mark and the whitespace before the root value; throws if there
  /// is nothing else.
  mutating func startDocument() throws(JSONSyntaxError) {
    if bytes.starts(with: JSONParser.byteOrderMark) { index = JSONParser.byteOrderMark.count }
    skipWhitespace()
    if index == bytes.count {
      throw JSONSyntaxError(offset: 0, message: "the file is empty; expected a JSON object")
    }
  }

  /// Steps over the whitespace after the root value; throws if anything else follows it.
  mutating func endDocument() throws(JSONSyntaxError) {
    skipWhitespace()
    if index != bytes.count {
      throw unexpected(" after the end of the document")
    }
  }

  /// Steps over whitespace to the first byte of a value, and returns it (not stepping past).
  @inline(__always)
  mutating func valueStart() throws(JSONSyntaxError) -> UInt8 {
    skipWhitespace()
    guard index < bytes.count else {
      throw JSONSyntaxError(offset: index, message: "unexpected end of file; expected a value")
    }
    return bytes[index]
  }

  /// Steps over whitespace; returns whether a string starts there.
  @inline(__always)
  mutating func atString() -> Bool {
    skipWhitespace()
    return index < bytes.count && bytes[index] == UInt8(ascii: "\"")
  }

  /// The error for a value that cannot start with the byte at `index`.
  @inline(never)
  func notAValue() -> JSONSyntaxError {
    unexpected("; expected a value")
  }

  // MARK: Containers

  /// Steps into the container whose opening bracket is at `index`: returns where the mark of
  /// its level is kept, or `nil` when it is empty, and already stepped past `closer` and left.
  @inline(__always)
  mutating func enter(closedBy closer: UInt8) throws(JSONSyntaxError)
    -> UnsafeMutablePointer<Int>?
  {
    depth += 1
    if depth > JSONParser.maximumDepth {
      throw JSONSyntaxError(
        offset: index, message: "nesting is deeper than \(JSONParser.maximumDepth) levels")
    }
    let level: UnsafeMutablePointer<Int>
    if let levels { level = levels + depth } else { level = allocateLevels() + depth }
    index += 1
    skipWhitespace()
    guard peek() == closer else { return level }
    index += 1
    depth -= 1
    return nil
  }

  private mutating func allocateLevels() -> UnsafeMutablePointer<Int> {
    let allocated = UnsafeMutablePointer<Int>.allocate(capacity: JSONParser.maximumDepth + 1)
    levels = allocated
    return allocated
  }

  /// The path of the container being read, spelled out from the marks of the levels above it:
  /// a mark `>= 0` is a member's, its key given by `key` (once for all the duplicates below
  /// one member, kept in `keys`, a level each); `-1 - i` is the element at index `i`.
  func path(keys: inout [(mark: Int, key: String)], key: (_ mark: Int) -> String)
    -> JSONPath
  {
    guard let levels else { return .root }
    var components: [JSONPath.Component] = []
    components.reserveCapacity(depth - 1)
    for level in stride(from: 1, to: depth, by: 1) {
      let mark = levels[level]
      guard mark >= 0 else {
        components.append(.index(-1 - mark))
        continue
      }
      while keys.count < level { keys.append((-1, "")) }
      if keys[level - 1].mark != mark { keys[level - 1] = (mark, key(mark)) }
      components.append(.key(keys[level - 1].key))
    }
    return JSONPath(components: components)
  }

  /// Steps over whitespace to an object's key; throws if no string starts there.
  @inline(__always)
  mutating func expectKey() throws(JSONSyntaxError) {
    skipWhitespace()
    guard peek() == UInt8(ascii: "\"") else {
      throw unexpected("; expected a key in double quotes")
    }
  }

  /// Steps past whitespace and the colon after a key; returns `false`, not stepping past
  /// anything else, when there is none (``missingColon(after:)`` is the error).
  @inline(__always)
  mutating func skipColon() -> Bool {
    skipWhitespace()
    guard peek() == UInt8(ascii: ":") else { return false }
    index += 1
    return true
  }

  /// The error for what is at `index` where the colon after `key` belongs.
  @inline(never)
  func missingColon(after key: String) -> JSONSyntaxError {
    unexpected("; expected ':' after the key '\(key)'")
  }

  /// After a member or element, `what`: skips the comma before the next one and returns
  /// `false`, or steps past `closer`, leaves the container and returns `true`.
  @inline(__always)
  mutating func closes(_ closer: UInt8, after what: StaticString) throws(JSONSyntaxError) -> Bool {
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

  // MARK: Strings

  /// Where the plain run of the string whose opening quote is at `start` ends (at its first
  /// quote, backslash or control character, or the end of the bytes), and whether the run is
  /// all ASCII. A plain string ends at a quote there; ``readEscapedString(start:plainUpTo:)``
  /// reads any other.
  ///
  /// Eight bytes at a time while eight remain, the first quote, backslash or control
  /// character in a word ending the scan there.
  @inline(__always)
  func plainRun(from start: Int) -> (end: Int, isASCII: Bool) {
    var scan = start &+ 1
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
    return (scan, high & Self.highBits == 0)
  }

  /// The string of the `count` plain bytes after the quote at `start`.
  func makeString(start: Int, count: Int, isASCII: Bool) throws(JSONSyntaxError) -> String {
    let content = UnsafeBufferPointer(rebasing: bytes[start + 1..<start + 1 + count])
    if isASCII { return String(decoding: content, as: UTF8.self) }
    guard let string = String(validating: content, as: UTF8.self) else {
      throw Self.invalidUTF8(at: start)
    }
    return string
  }

  /// Checks that the `count` plain bytes after the quote at `start`, not all ASCII, are UTF-8.
  @inline(never)
  func checkUTF8(start: Int, count: Int) throws(JSONSyntaxError) {
    let content = UnsafeBufferPointer(rebasing: bytes[start + 1..<start + 1 + count])
    guard String(validating: content, as: UTF8.self) != nil else {
      throw Self.invalidUTF8(at: start)
    }
  }

  private static func invalidUTF8(at start: Int) -> JSONSyntaxError {
    JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
  }

  private static let highBits: UInt64 = 0x8080_8080_8080_8080

  /// The eight bytes at `offset`, the first in the lowest bits.
  @inline(__always)
  static func word(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
    UInt64(
      littleEndian: UnsafeRawPointer(bytes.baseAddress.unsafelyUnwrapped + offset)
        .loadUnaligned(as: UInt64.self))
  }

  /// The high bit of each byte of `word` that is a quote, a backslash or a control
  /// character; exact up to the first of them (beyond it, borrows may set others).
  @inline(__always)
  static func stops(in word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let isQuote = (quotes &- ones) & ~quotes
    let isBackslash = (backslashes &- ones) & ~backslashes
    let isControl = (word &- ones &* 0x20) & ~word
    return (isQuote | isBackslash | isControl) & 0x8080_8080_8080_8080
  }

  /// The string whose opening quote is at `start`, which has an escape, a control character
  /// or no end; the bytes before `plainUpTo` are plain. Leaves `index` after its closing quote.
  mutating func readEscapedString(start: Int, plainUpTo plain: Int) throws(JSONSyntaxError)
    -> String
  {
    var scalars: [UInt8] = []
    var run = start + 1
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
          throw Self.invalidUTF8(at: start)
        }
        return string
      case UInt8(ascii: "\\"):
        scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
        try readEscape(into: &scalars)
        run = index
      case 0..<0x20:
        throw JSONSyntaxError(
          offset: index, message: "a control character must be escaped inside a string")
      default:
        index += 1
      }
    }
  }

  private mutating func readEscape(into scalars: inout [UInt8]) throws(JSONSyntaxError) {
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
    var code = try readHex4(escapeStart: escapeStart)
    if (0xD800...0xDBFF).contains(code) {
      guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
        bytes[index + 1] == UInt8(ascii: "u")
      else {
        throw JSONSyntaxError(offset: escapeStart, message: "unpaired UTF-16 surrogate in a string")
      }
      index += 2
      let low = try readHex4(escapeStart: escapeStart)
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

  private mutating func readHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
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

  // MARK: Numbers and literals

  /// Reads the number at `index`, and returns its value and its text.
  mutating func readNumber() throws(JSONSyntaxError) -> (Double, String) {
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

  /// Steps past `literal` (`true`, `false` or `null`) at `index`; throws if it is not there.
  mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
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

  private mutating func skipDigits() {
    while let byte = peek(), isDigit(byte) { index += 1 }
  }

  // MARK: Bytes

  @inline(__always)
  mutating func skipWhitespace() {
    // Anything above a space, the usual case, is told in one comparison.
    while index < bytes.count, bytes[index] <= UInt8(ascii: " ") {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
      default: return
      }
    }
  }

  @inline(__always)
  func peek() -> UInt8? {
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
