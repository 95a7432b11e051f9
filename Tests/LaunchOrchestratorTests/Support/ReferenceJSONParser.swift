@testable import LaunchJSON

/// `JSONParser` as it was before it read through a pointer (version 4e82b44), kept as the
/// reference the parser's results are compared with: plain array code, simple to trust.
struct ReferenceJSONParser {
  static let maximumDepth = JSONParser.maximumDepth
  static let byteOrderMark = JSONParser.byteOrderMark

  private let bytes: [UInt8]
  private var index = 0
  private var depth = 0
  private var duplicateKeys: [JSONDocument.DuplicateKey] = []
  private var path: [JSONPath.Component] = []

  /// Parses a whole document.
  static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONDocument {
    var parser = ReferenceJSONParser(bytes: bytes)
    // Which encoding a file is in is no part of reading it: the parser's own test stands.
    if let encoding = JSONParser.wideEncoding(of: bytes) {
      throw JSONSyntaxError(
        offset: 0, message: "the file is \(encoding) text; save it as UTF-8, which JSON requires")
    }
    if bytes.starts(with: Self.byteOrderMark) { parser.index = Self.byteOrderMark.count }
    parser.skipWhitespace()
    if parser.index == bytes.count {
      throw JSONSyntaxError(offset: 0, message: "the file is empty; expected a JSON object")
    }
    let root = try parser.parseValue()
    parser.skipWhitespace()
    if parser.index != bytes.count {
      throw parser.unexpected(" after the end of the document")
    }
    return JSONDocument(root: root, duplicateKeys: parser.duplicateKeys)
  }

  private init(bytes: [UInt8]) {
    self.bytes = bytes
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
    case UInt8(ascii: "\""): return JSONValue(.string(try parseString()), offset: start)
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

  private mutating func enterContainer() throws(JSONSyntaxError) {
    depth += 1
    if depth > Self.maximumDepth {
      throw JSONSyntaxError(
        offset: index, message: "nesting is deeper than \(Self.maximumDepth) levels")
    }
  }

  private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    try enterContainer()
    index += 1
    var members: [JSONMember] = []
    // Keys are compared as the bytes they are: Swift's `String ==` also equates keys that
    // only Unicode normalisation makes equal ('é' and 'e' with a combining accent).
    var seen: Set<[UInt8]> = []
    if closesEmpty(UInt8(ascii: "}")) { return JSONValue(.object(members), offset: start) }
    while true {
      skipWhitespace()
      guard peek() == UInt8(ascii: "\"") else {
        throw unexpected("; expected a key in double quotes")
      }
      let keyOffset = index
      let key = try parseString()
      skipWhitespace()
      guard peek() == UInt8(ascii: ":") else {
        throw unexpected("; expected ':' after the key '\(key)'")
      }
      index += 1
      path.append(.key(key))
      let value = try parseValue()
      path.removeLast()
      // Most objects are small, and a scan beats hashing until they are not.
      let isNew: Bool
      if members.count < 16 {
        isNew = !members.contains { $0.key.hasSameBytes(as: key) }
      } else {
        if seen.isEmpty { seen = Set(members.map { Array($0.key.utf8) }) }
        isNew = seen.insert(Array(key.utf8)).inserted
      }
      if isNew {
        members.append(JSONMember(key: key, keyOffset: keyOffset, value: value))
      } else {
        duplicateKeys.append(.init(key: key, path: JSONPath(components: path), offset: keyOffset))
      }
      if try closes(UInt8(ascii: "}"), after: "an object member") {
        return JSONValue(.object(members), offset: start)
      }
    }
  }

  private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    try enterContainer()
    index += 1
    var elements: [JSONValue] = []
    if closesEmpty(UInt8(ascii: "]")) { return JSONValue(.array(elements), offset: start) }
    while true {
      path.append(.index(elements.count))
      elements.append(try parseValue())
      path.removeLast()
      if try closes(UInt8(ascii: "]"), after: "an array element") {
        return JSONValue(.array(elements), offset: start)
      }
    }
  }

  /// At the start of a container: steps past `closer` and leaves the container when it is
  /// empty; returns whether it was.
  private mutating func closesEmpty(_ closer: UInt8) -> Bool {
    skipWhitespace()
    guard peek() == closer else { return false }
    index += 1
    depth -= 1
    return true
  }

  /// After a member or element, `what`: skips the comma before the next one and returns
  /// `false`, or steps past `closer`, leaves the container and returns `true`.
  private mutating func closes(_ closer: UInt8, after what: String) throws(JSONSyntaxError)
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
      throw unexpected("; expected ',' or '\(Character(Unicode.Scalar(closer)))' after \(what)")
    }
  }

  private mutating func parseString() throws(JSONSyntaxError) -> String {
    let start = index
    index += 1
    // Fast path, the usual case: no escapes, so the string is the bytes between the quotes.
    var scan = index
    var isASCII = true
    while scan < bytes.count, bytes[scan] != UInt8(ascii: "\""), bytes[scan] != UInt8(ascii: "\\"),
      bytes[scan] >= 0x20
    {
      if bytes[scan] >= 0x80 { isASCII = false }
      scan += 1
    }
    if scan < bytes.count, bytes[scan] == UInt8(ascii: "\"") {
      let content = bytes[index..<scan]
      index = scan + 1
      if isASCII { return String(decoding: content, as: UTF8.self) }
      guard let string = String(validating: content, as: UTF8.self) else {
        throw JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
      }
      return string
    }
    var scalars: [UInt8] = []
    var runStart = index
    while true {
      guard index < bytes.count else {
        throw JSONSyntaxError(offset: start, message: "unterminated string")
      }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        scalars.append(contentsOf: bytes[runStart..<index])
        index += 1
        guard let string = String(validating: scalars, as: UTF8.self) else {
          throw JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
        }
        return string
      case UInt8(ascii: "\\"):
        scalars.append(contentsOf: bytes[runStart..<index])
        try parseEscape(into: &scalars)
        runStart = index
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
    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
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
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw JSONSyntaxError(offset: start, message: "the number \(text.prefix(40)) is out of range")
    }
    return (value, text)
  }

  private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
    let start = index
    let count = literal.utf8CodeUnitCount
    let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
    guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(expected) else {
      throw JSONSyntaxError(
        offset: start, message: "unexpected \(describeCurrent()); expected a value")
    }
    index += count
  }

  /// Steps over a comma between members or elements, naming a trailing comma (allowed in
  /// Swift and JavaScript, not in JSON) rather than calling what follows it unexpected.
  private mutating func skipComma(before closing: UInt8) throws(JSONSyntaxError) {
    let comma = index
    index += 1
    skipWhitespace()
    if peek() == closing {
      throw JSONSyntaxError(
        offset: comma,
        message:
          "a trailing comma before '\(Character(Unicode.Scalar(closing)))'; remove it, as JSON allows no comma after the last item"
      )
    }
  }

  private mutating func skipDigits() {
    while let byte = peek(), isDigit(byte) { index += 1 }
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
      default: return
      }
    }
  }

  private func peek() -> UInt8? {
    index < bytes.count ? bytes[index] : nil
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  private func unexpected(_ expectation: String) -> JSONSyntaxError {
    if bytes[index...].starts(with: Array("//".utf8)) {
      return JSONSyntaxError(
        offset: index, message: "a comment ('//'); remove it, as JSON allows no comments")
    }
    if bytes[index...].starts(with: Array("/*".utf8)) {
      return JSONSyntaxError(
        offset: index, message: "a comment ('/* */'); remove it, as JSON allows no comments")
    }
    return JSONSyntaxError(offset: index, message: "unexpected \(describeCurrent())\(expectation)")
  }

  private func describeCurrent() -> String {
    guard index < bytes.count else { return "end of file" }
    if bytes[index...].starts(with: Self.byteOrderMark) {
      return "byte-order mark (U+FEFF)"
    }
    let byte = bytes[index]
    if byte >= 0x20 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x\(String(byte, radix: 16, uppercase: true))"
  }
}
