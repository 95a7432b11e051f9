/// The parser's state for one document, over its bytes: it checks the document and writes
/// its ``JSONTape``, the tokens read by its ``JSONCursor``.
///
/// Strings are checked, not made: a plain string is its bytes, found again by its entry; only
/// a string with escapes is decoded, once, into the tape's list of such texts. The path of the
/// value being read is kept as one number a level (a key's entry or an element's position)
/// and spelled out only when a duplicate key needs it.
struct JSONScanner: ~Copyable {
  /// The bytes and the nesting; the mark of each level (``JSONCursor/levels``) is the entry
  /// of a member's key (`>= 0`), or `-1 - i` for the element at position `i`.
  private var cursor: JSONCursor
  private var entries: EntryList
  /// The texts of numbers, and of strings and keys with escapes (``JSONTape/texts``).
  private var texts: [String] = []
  private var duplicateKeys: [JSONDocument.DuplicateKey] = []
  /// For each level from 1, the key last spelled out for a duplicate's path and the entry it
  /// was read from: every duplicate below one member shares its key, as it would have shared
  /// it had it been kept all along, instead of reading it again into a string of its own (a
  /// key of 100 KB over 10,000 duplicates would take a gigabyte).
  private var pathKeys: [(mark: Int, key: String)] = []
  init(bytes: UnsafeBufferPointer<UInt8>) {
    cursor = JSONCursor(bytes: bytes)
    // One entry for every 4 bytes, more than any but the densest document needs (a manifest
    // has one for every 7): the list is not copied as it grows, and the pages of a large
    // allocation that are never written are never taken from the system.
    entries = EntryList(capacity: bytes.count / 4)
  }

  deinit {
    entries.deallocate()
  }

  /// What was read, for the tape, which takes the entries over.
  consuming func finish() -> (
    UnsafeMutableBufferPointer<JSONTape.Entry>, [String], [JSONDocument.DuplicateKey]
  ) {
    (entries.take(), texts, duplicateKeys)
  }

  mutating func scanDocument() throws(JSONSyntaxError) {
    try cursor.startDocument()
    try scanValue()
    try cursor.endDocument()
  }

  private mutating func scanValue() throws(JSONSyntaxError) {
    let byte = try cursor.valueStart()
    let start = cursor.index
    switch byte {
    case UInt8(ascii: "{"): try scanObject()
    case UInt8(ascii: "["): try scanArray()
    case UInt8(ascii: "\""): try scanString(as: .string)
    case UInt8(ascii: "t"):
      try cursor.expectLiteral("true")
      entries.append(JSONTape.Entry(.true, offset: start))
    case UInt8(ascii: "f"):
      try cursor.expectLiteral("false")
      entries.append(JSONTape.Entry(.false, offset: start))
    case UInt8(ascii: "n"):
      try cursor.expectLiteral("null")
      entries.append(JSONTape.Entry(.null, offset: start))
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      let (number, text) = try cursor.readNumber()
      entries.append(
        JSONTape.Entry(
          .number, offset: start, end: cursor.index, payload: number.bitPattern,
          text: texts.count))
      texts.append(text)
    default:
      throw cursor.notAValue()
    }
  }

  /// A member's value or an array's element: a string read here, the commonest, without
  /// the general call.
  @inline(__always)
  private mutating func scanMemberOrElement() throws(JSONSyntaxError) {
    if cursor.atString() {
      try scanString(as: .string)
      return
    }
    try scanValue()
  }

  /// Writes the entry of the container at the cursor, of `kind`, and steps into it: returns
  /// the entry and where the mark of its level is kept, or `nil` when it is empty, and closed.
  @inline(__always)
  private mutating func open(_ kind: JSONTape.Kind, closedBy closer: UInt8)
    throws(JSONSyntaxError) -> (container: Int, level: UnsafeMutablePointer<Int>)?
  {
    let container = entries.count
    entries.append(JSONTape.Entry(kind, offset: cursor.index))
    guard let level = try cursor.enter(closedBy: closer) else {
      close(container, count: 0)
      return nil
    }
    return (container, level)
  }

  /// Ends the container whose entry is `container`, holding `count` members or elements.
  @inline(__always)
  private mutating func close(_ container: Int, count: Int) {
    entries[container].end = entries.count
    entries[container].payload = UInt64(count)
  }

  private mutating func scanObject() throws(JSONSyntaxError) {
    guard case (let container, let level)? = try open(.object, closedBy: UInt8(ascii: "}")) else {
      return
    }
    var kept = 0
    // Keys are compared as the bytes they are: Swift's `String ==` also equates keys that
    // only Unicode normalisation makes equal ('é' and 'e' with a combining accent).
    var seen: Set<[UInt8]>?
    while true {
      try cursor.expectKey()
      let key = entries.count
      let keyOffset = cursor.index
      try scanString(as: .key)
      guard cursor.skipColon() else { throw cursor.missingColon(after: text(ofKey: key)) }
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
      if try cursor.closes(UInt8(ascii: "}"), after: "an object member") {
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
      guard
        JSONCursor.word(bytes, at: first + offset) == JSONCursor.word(bytes, at: second + offset)
      else {
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
    guard case (let container, let level)? = try open(.array, closedBy: UInt8(ascii: "]")) else {
      return
    }
    var count = 0
    while true {
      level.pointee = -1 - count
      try scanMemberOrElement()
      count += 1
      if try cursor.closes(UInt8(ascii: "]"), after: "an array element") {
        close(container, count: count)
        return
      }
    }
  }

  /// The path of the container being read at the current depth.
  private mutating func path() -> JSONPath {
    // The keys are moved out while `text(ofKey:)` reads the scanner, and back after.
    var keys = pathKeys
    pathKeys = []
    defer { pathKeys = keys }
    return cursor.path(keys: &keys) { text(ofKey: $0) }
  }

  /// Checks the string (or key) whose opening quote is at the cursor, and writes its entry: a
  /// plain one is its bytes; one with escapes is decoded, its text kept.
  @inline(__always)
  private mutating func scanString(as kind: JSONTape.Kind) throws(JSONSyntaxError) {
    let start = cursor.index
    let (end, isASCII) = cursor.plainRun(from: start)
    guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else {
      let text = try cursor.readEscapedString(start: start, plainUpTo: end)
      entries.append(
        JSONTape.Entry(
          kind, offset: start, end: cursor.index - 1, text: texts.count,
          flags: JSONTape.Entry.escaped))
      texts.append(text)
      return
    }
    if !isASCII {
      try cursor.checkUTF8(start: start, count: end - start - 1)
    }
    cursor.index = end &+ 1
    entries.append(JSONTape.Entry(kind, offset: start, end: end))
  }

  /// The document's bytes.
  @inline(__always)
  private var bytes: UnsafeBufferPointer<UInt8> { cursor.bytes }
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
