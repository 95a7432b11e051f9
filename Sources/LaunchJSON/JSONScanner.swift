/// The parser's state for one document, over its bytes: it checks the document and writes
/// its ``JSONTape``.
///
/// Strings are checked, not made: a plain string is its bytes, found again by its entry; only
/// a string with escapes is decoded, once, into the tape's list of such texts. The path of the
/// value being read is kept as one number a level (a key's entry or an element's position)
/// and spelled out only when a duplicate key needs it.
struct JSONScanner: ~Copyable {
  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  private var depth = 0
  private var entries: EntryList
  /// The texts of numbers, and of strings and keys with escapes (``JSONTape/texts``).
  private var texts: [String] = []
  private var duplicateKeys: [JSONDocument.DuplicateKey] = []
  /// For each level of nesting from 1, what is being read there: the entry of a member's key
  /// (`>= 0`), or `-1 - i` for the element at position `i`.
  private var levels: UnsafeMutablePointer<Int>?
  /// For each level from 1, the key last spelled out for a duplicate's path and the entry it
  /// was read from: every duplicate below one member shares its key, as it would have shared
  /// it had it been kept all along, instead of reading it again into a string of its own (a
  /// key of 100 KB over 10,000 duplicates would take a gigabyte).
  private var pathKeys: [(entry: Int, key: String)] = []
  init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
    // One entry for every 4 bytes, more than any but the densest document needs (a manifest
    // has one for every 7): the list is not copied as it grows, and the pages of a large
    // allocation that are never written are never taken from the system.
    entries = EntryList(capacity: bytes.count / 4)
  }

  deinit {
    levels?.deallocate()
    entries.deallocate()
  }

  /// What was read, for the tape, which takes the entries over.
  consuming func finish() -> (
    UnsafeMutableBufferPointer<JSONTape.Entry>, [String], [JSONDocument.DuplicateKey]
  ) {
    (entries.take(), texts, duplicateKeys)
  }

  mutating func scanDocument() throws(JSONSyntaxError) {
    if bytes.starts(with: JSONParser.byteOrderMark) { index = JSONParser.byteOrderMark.count }
    skipWhitespace()
    if index == bytes.count {
      throw JSONSyntaxError(offset: 0, message: "the file is empty; expected a JSON object")
    }
    try scanValue()
    skipWhitespace()
    if index != bytes.count {
      throw unexpected(" after the end of the document")
    }
  }

  private mutating func scanValue() throws(JSONSyntaxError) {
    skipWhitespace()
    guard index < bytes.count else {
      throw JSONSyntaxError(offset: index, message: "unexpected end of file; expected a value")
    }
    let start = index
    switch bytes[index] {
    case UInt8(ascii: "{"): try scanObject()
    case UInt8(ascii: "["): try scanArray()
    case UInt8(ascii: "\""): try scanString(as: .string)
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      entries.append(JSONTape.Entry(.true, offset: start))
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      entries.append(JSONTape.Entry(.false, offset: start))
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      entries.append(JSONTape.Entry(.null, offset: start))
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      let (number, text) = try scanNumber()
      entries.append(
        JSONTape.Entry(
          .number, offset: start, end: index, payload: number.bitPattern, text: texts.count))
      texts.append(text)
    default:
      throw unexpected("; expected a value")
    }
  }

  /// A member's value or an array's element: a string read here, the commonest, without
  /// the general call.
  @inline(__always)
  private mutating func scanMemberOrElement() throws(JSONSyntaxError) {
    skipWhitespace()
    if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
      try scanString(as: .string)
      return
    }
    try scanValue()
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

  /// Ends the container whose entry is `container`, holding `count` members or elements.
  @inline(__always)
  private mutating func close(_ container: Int, count: Int) {
    entries[container].end = entries.count
    entries[container].payload = UInt64(count)
  }

  private mutating func scanObject() throws(JSONSyntaxError) {
    let container = entries.count
    entries.append(JSONTape.Entry(.object, offset: index))
    let level = try enterContainer()
    index += 1
    if closesEmpty(UInt8(ascii: "}")) {
      close(container, count: 0)
      return
    }
    var kept = 0
    // Keys are compared as the bytes they are: Swift's `String ==` also equates keys that
    // only Unicode normalisation makes equal ('é' and 'e' with a combining accent).
    var seen: Set<[UInt8]>?
    while true {
      skipWhitespace()
      guard peek() == UInt8(ascii: "\"") else {
        throw unexpected("; expected a key in double quotes")
      }
      let key = entries.count
      let keyOffset = index
      try scanString(as: .key)
      skipWhitespace()
      guard peek() == UInt8(ascii: ":") else {
        throw unexpected("; expected ':' after the key '\(text(ofKey: key))'")
      }
      index += 1
      level.pointee = key
      try scanMemberOrElement()
      // Most objects are small, and a scan beats hashing until they are not: a report's step
      // has some 20 keys, each of which the set would copy into an array of its own.
      let isNew: Bool
      if kept < 32 {
        isNew = !hasKept(key, in: container)
      } else {
        if seen == nil {
          var keys = Set<[UInt8]>()
          for kept in keptKeys(in: container, before: key) { keys.insert(bytes(ofKey: kept)) }
          seen = keys
        }
        isNew = seen!.insert(bytes(ofKey: key)).inserted
      }
      if isNew {
        kept += 1
      } else {
        entries[key].flags |= JSONTape.Entry.duplicate
        duplicateKeys.append(.init(key: text(ofKey: key), path: path(), offset: keyOffset))
      }
      if try closes(UInt8(ascii: "}"), after: "an object member") {
        close(container, count: kept)
        return
      }
    }
  }

  /// The keys the object at `container` keeps, before the key at `end`.
  private func keptKeys(in container: Int, before end: Int) -> [Int] {
    var keys: [Int] = []
    var position = container + 1
    while position < end {
      if entries[position].flags & JSONTape.Entry.duplicate == 0 { keys.append(position) }
      position = after(position + 1)
    }
    return keys
  }

  /// Whether a member the object at `container` keeps, before `key`, has `key`'s text: the
  /// object's members are walked on the tape, over each one's value.
  @inline(__always)
  private func hasKept(_ key: Int, in container: Int) -> Bool {
    let new = entries[key]
    var position = container + 1
    while position < key {
      let other = entries[position]
      if other.flags & JSONTape.Entry.duplicate == 0 {
        if (new.flags | other.flags) & JSONTape.Entry.escaped == 0 {
          // Both keys are their source bytes: compared there, without reading either.
          if new.end - new.offset == other.end - other.offset
            && sameBytes(at: new.offset + 1, and: other.offset + 1, count: new.end - new.offset - 1)
          {
            return true
          }
        } else if bytes(ofKey: position) == bytes(ofKey: key) {
          return true
        }
      }
      position = after(position + 1)
    }
    return false
  }

  /// The index after the value at `position` and all it contains.
  @inline(__always)
  private func after(_ position: Int) -> Int {
    let entry = entries[position]
    return entry.kind == .array || entry.kind == .object ? entry.end : position + 1
  }

  /// Whether the `count` bytes at `first` and at `second` are the same: a word at a time
  /// while eight remain.
  private func sameBytes(at first: Int, and second: Int, count: Int) -> Bool {
    var offset = 0
    while offset + 8 <= count {
      guard Self.word(bytes, at: first + offset) == Self.word(bytes, at: second + offset) else {
        return false
      }
      offset += 8
    }
    while offset < count {
      guard bytes[first + offset] == bytes[second + offset] else { return false }
      offset += 1
    }
    return true
  }

  /// The UTF-8 bytes of the text of the key at `entry`.
  private func bytes(ofKey entry: Int) -> [UInt8] {
    let key = entries[entry]
    if key.flags & JSONTape.Entry.escaped != 0 { return Array(texts[Int(key.text)].utf8) }
    return Array(bytes[key.offset + 1..<key.end])
  }

  /// The text of the key at `entry`.
  private func text(ofKey entry: Int) -> String {
    let key = entries[entry]
    if key.flags & JSONTape.Entry.escaped != 0 { return texts[Int(key.text)] }
    return String(
      decoding: UnsafeBufferPointer(rebasing: bytes[key.offset + 1..<key.end]), as: UTF8.self)
  }

  private mutating func scanArray() throws(JSONSyntaxError) {
    let container = entries.count
    entries.append(JSONTape.Entry(.array, offset: index))
    let level = try enterContainer()
    index += 1
    if closesEmpty(UInt8(ascii: "]")) {
      close(container, count: 0)
      return
    }
    var count = 0
    while true {
      level.pointee = -1 - count
      try scanMemberOrElement()
      count += 1
      if try closes(UInt8(ascii: "]"), after: "an array element") {
        close(container, count: count)
        return
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
        components.append(.key(pathKey(at: level, entry: mark)))
      } else {
        components.append(.index(-1 - mark))
      }
    }
    return JSONPath(components: components)
  }

  /// The key at `entry`, the member being read at `level`: made once for all the duplicates
  /// below that member.
  private mutating func pathKey(at level: Int, entry: Int) -> String {
    while pathKeys.count < level { pathKeys.append((-1, "")) }
    if pathKeys[level - 1].entry == entry { return pathKeys[level - 1].key }
    let key = text(ofKey: entry)
    pathKeys[level - 1] = (entry, key)
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

  /// Checks the string (or key) whose opening quote is at `index`, and writes its entry: a
  /// plain one is its bytes; one with escapes is decoded, its text kept.
  ///
  /// Eight bytes at a time while eight remain, the first quote, backslash or control
  /// character in a word ending the scan there.
  @inline(__always)
  private mutating func scanString(as kind: JSONTape.Kind) throws(JSONSyntaxError) {
    let start = index
    let content = start &+ 1
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
      index = content
      let text = try scanEscapedString(start: start, plainUpTo: scan)
      entries.append(
        JSONTape.Entry(
          kind, offset: start, end: index - 1, text: texts.count, flags: JSONTape.Entry.escaped))
      texts.append(text)
      return
    }
    if high & Self.highBits != 0 {
      try checkUTF8(start: start, count: scan - content)
    }
    index = scan &+ 1
    entries.append(JSONTape.Entry(kind, offset: start, end: scan))
  }

  /// Checks that the `count` plain bytes after the quote at `start`, not all ASCII, are UTF-8.
  @inline(never)
  private func checkUTF8(start: Int, count: Int) throws(JSONSyntaxError) {
    let content = UnsafeBufferPointer(rebasing: bytes[start + 1..<start + 1 + count])
    guard String(validating: content, as: UTF8.self) != nil else {
      throw JSONSyntaxError(offset: start, message: "the string is not valid UTF-8")
    }
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
  private mutating func scanEscapedString(start: Int, plainUpTo plain: Int)
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
        try scanEscape(into: &scalars)
        run = index
      case 0..<0x20:
        throw JSONSyntaxError(
          offset: index, message: "a control character must be escaped inside a string")
      default:
        index += 1
      }
    }
  }

  private mutating func scanEscape(into scalars: inout [UInt8]) throws(JSONSyntaxError) {
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
    var code = try scanHex4(escapeStart: escapeStart)
    if (0xD800...0xDBFF).contains(code) {
      guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
        bytes[index + 1] == UInt8(ascii: "u")
      else {
        throw JSONSyntaxError(offset: escapeStart, message: "unpaired UTF-16 surrogate in a string")
      }
      index += 2
      let low = try scanHex4(escapeStart: escapeStart)
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

  private mutating func scanHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
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

  /// Checks the number at `index` and returns its value and its text.
  private mutating func scanNumber() throws(JSONSyntaxError) -> (Double, String) {
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

/// The entries the scanner has written, in memory of their own: appending is a store, without
/// the uniqueness and capacity checks of an array's. The scanner frees it (``deallocate()``)
/// unless the tape takes it (``take()``); its indices are the scanner's own, not checked.
struct EntryList {
  private var base: UnsafeMutablePointer<JSONTape.Entry>?
  private var capacity: Int
  private(set) var count = 0

  init(capacity: Int) {
    self.capacity = max(capacity, 16)
    base = .allocate(capacity: self.capacity)
  }

  subscript(index: Int) -> JSONTape.Entry {
    get { base.unsafelyUnwrapped[index] }
    nonmutating _modify { yield &base.unsafelyUnwrapped[index] }
  }

  @inline(__always)
  mutating func append(_ entry: JSONTape.Entry) {
    if count == capacity { grow() }
    (base.unsafelyUnwrapped + count).initialize(to: entry)
    count += 1
  }

  private mutating func grow() {
    let larger = UnsafeMutablePointer<JSONTape.Entry>.allocate(capacity: capacity * 2)
    larger.moveInitialize(from: base.unsafelyUnwrapped, count: count)
    base.unsafelyUnwrapped.deallocate()
    base = larger
    capacity *= 2
  }

  /// The entries, which the caller now owns and frees. Not moved into memory of their exact
  /// number: a tape lives as long as one load or parse.
  mutating func take() -> UnsafeMutableBufferPointer<JSONTape.Entry> {
    let taken = base.unsafelyUnwrapped
    base = nil
    return UnsafeMutableBufferPointer(start: taken, count: count)
  }

  /// Frees the entries, unless they were taken.
  func deallocate() {
    base?.deallocate()
  }
}
