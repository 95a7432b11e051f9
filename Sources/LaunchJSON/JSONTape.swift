/// A parsed JSON document as one flat list of entries, one for each value and each key, in
/// source order, over the document's bytes: no node is allocated for a value, and a string's
/// text is made only when it is asked for.
///
/// The parser checks the whole document as it writes the list (every syntax error, invalid
/// UTF-8, escapes and surrogates, numbers a `Double` cannot hold, the nesting limit, keys
/// written twice), so a tape holds only what a ``JSONValue`` would; ``value(at:)`` makes that
/// value. A reader that wants a few members of a large document (a manifest's thousands of
/// steps, each read once into its declaration) reads them here instead, without building and
/// then freeing a tree of the whole.
///
/// An entry is found by its index in the list (a ``JSONTape/Index``): a container is followed
/// by its contents (an object's as key, value, key, value), and knows the index after them.
///
/// ``JSONScanner`` writes it, reading the grammar's tokens with the ``JSONCursor`` that
/// ``JSONParser``'s reader reads them with: the same checks and the same errors at the same
/// offsets (`JSONTapeTests` compares the two on tricky, generated, damaged and hostile
/// documents). The parser keeps its own reader of the structure, which makes values as it
/// goes: values made from a tape cost a report of 10,000 steps 17% more.
///
/// A class, so that a reader keeps a tape for one reference; its entries are one allocation of
/// its own, read through a pointer.
package final class JSONTape: @unchecked Sendable {
  // Never changed after `init`: the entries are written by the scanner before the tape holds
  // them, and freed with it.

  /// An entry's position in the tape.
  package typealias Index = Int

  /// What an entry is.
  package enum Kind: UInt8, Sendable {
    case null, `false`, `true`, number, string, array, object
    /// An object member's key; its value is the next entry.
    case key
  }

  /// One value or key: a plain record, which the scanner appends to a list without a retain.
  struct Entry {
    /// The byte offset of its first character (a string's or key's opening quote).
    var offset: Int
    /// A string's or key's closing quote; the offset after a number's last byte; for a
    /// container, the index of the entry after its contents.
    var end: Int
    /// A number's `Double`, as its bit pattern; how many members (keys written twice left
    /// out) or elements a container holds.
    var payload: UInt64
    /// For a number, and a string or key with escapes, the index of its text in
    /// ``JSONTape/texts``: made when it was read, and not made again. (32 bits, in the padding
    /// of the 32 bytes an entry takes; a document would need some 8 GB of numbers to have more.)
    var text: UInt32
    var kind: Kind
    var flags: UInt8

    /// The string or key has escapes: its text is not its bytes, and was kept when read.
    static let escaped: UInt8 = 1
    /// The key repeats an earlier key of its object: the member is not part of the object.
    static let duplicate: UInt8 = 2

    init(
      _ kind: Kind, offset: Int, end: Int = 0, payload: UInt64 = 0, text: Int = 0,
      flags: UInt8 = 0
    ) {
      self.kind = kind
      self.offset = offset
      self.end = end
      self.payload = payload
      self.text = UInt32(text)
      self.flags = flags
    }

    /// Whether it is an array or an object.
    var isContainer: Bool { kind == .array || kind == .object }
  }

  /// The document's bytes: strings, numbers' texts and keys are read from them.
  package let bytes: [UInt8]
  /// The entries, the tape's own.
  private let entries: UnsafeMutableBufferPointer<Entry>
  /// The text of each number, and of each string and key that has escapes, in the order
  /// they were read.
  let texts: [String]
  /// Keys repeated within one object, as ``JSONDocument/duplicateKeys`` lists them.
  package let duplicateKeys: [JSONDocument.DuplicateKey]

  /// A tape of `bytes` that takes `entries` over.
  init(
    bytes: [UInt8], entries: UnsafeMutableBufferPointer<Entry>, texts: [String],
    duplicateKeys: [JSONDocument.DuplicateKey]
  ) {
    self.bytes = bytes
    self.entries = entries
    self.texts = texts
    self.duplicateKeys = duplicateKeys
  }

  deinit {
    entries.deallocate()
  }

  /// Parses a whole document, with the checks and errors of ``JSONParser/parse(_:)``.
  package static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONTape {
    if let encoding = JSONParser.wideEncoding(of: bytes) {
      throw JSONSyntaxError(
        offset: 0, message: "the file is \(encoding) text; save it as UTF-8, which JSON requires")
    }
    // The bytes are read through a pointer for the whole parse: no bounds checks, no
    // retains of the array, in the loops that look at every byte.
    let (entries, texts, duplicateKeys) = try bytes.withUnsafeBufferPointer {
      (buffer) throws(JSONSyntaxError) in
      var scanner = JSONScanner(bytes: buffer)
      try scanner.scanDocument()
      return scanner.finish()
    }
    return JSONTape(
      bytes: bytes, entries: entries, texts: texts, duplicateKeys: duplicateKeys)
  }

  /// The entry at `index`, which must be one of the tape's.
  private func entry(_ index: Index) -> Entry {
    precondition(UInt(bitPattern: index) < UInt(entries.count), "no entry \(index) in the tape")
    return entries[index]
  }

  /// Calls `body` with the entries and the bytes.
  func withEntries<Result>(
    _ body: (UnsafeBufferPointer<Entry>, UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(entries), $0) }
  }

  /// The document's root value.
  package var root: Index { 0 }

  /// What the entry at `index` is.
  package func kind(of index: Index) -> Kind { entry(index).kind }

  /// The byte offset of the first character of the value or key at `index`.
  package func offset(of index: Index) -> Int { entry(index).offset }

  /// The index after the value at `index` and everything it contains.
  package func after(_ index: Index) -> Index {
    let entry = entry(index)
    return entry.isContainer ? entry.end : index + 1
  }

  /// How many members (keys written twice left out) or elements the container at `index`
  /// holds.
  package func count(of index: Index) -> Int {
    let entry = entry(index)
    precondition(entry.isContainer, "entry \(index) is not an array or an object")
    return Int(entry.payload)
  }

  /// The text of the string or key at `index`.
  package func string(at index: Index) -> String {
    let entry = entry(index)
    precondition(entry.kind == .string || entry.kind == .key, "entry \(index) is not a string")
    if entry.flags & Entry.escaped != 0 { return texts[Int(entry.text)] }
    return bytes.withUnsafeBufferPointer {
      String(
        decoding: UnsafeBufferPointer(rebasing: $0[entry.offset + 1..<entry.end]), as: UTF8.self)
    }
  }

  /// The value of the number at `index`: its nearest `Double`, as ``value(at:)`` holds it.
  package func number(at index: Index) -> Double {
    let entry = entry(index)
    precondition(entry.kind == .number, "entry \(index) is not a number")
    return Double(bitPattern: entry.payload)
  }

  /// Whether the string or key at `index` is the empty string.
  package func isEmptyString(at index: Index) -> Bool {
    let entry = entry(index)
    return entry.flags & Entry.escaped == 0 && entry.end == entry.offset + 1
  }

  /// Whether the text of the string or key at `index` is `text`, byte for byte (as
  /// ``JSONValue/subscript(_:)`` compares keys).
  package func string(at index: Index, is text: StaticString) -> Bool {
    let entry = entry(index)
    let count = text.utf8CodeUnitCount
    let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
    if entry.flags & Entry.escaped != 0 {
      return texts[Int(entry.text)].utf8.elementsEqual(expected)
    }
    guard entry.end - entry.offset - 1 == count else { return false }
    return bytes.withUnsafeBufferPointer { bytes in
      Self.same(UnsafeBufferPointer(rebasing: bytes[entry.offset + 1..<entry.end]), expected)
    }
  }

  /// Whether `one` and `other` are the same bytes: compared a word at a time while eight
  /// remain (a generic `elementsEqual` goes through both sequences' iterators).
  private static func same(_ one: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    guard one.count == other.count else { return false }
    var position = 0
    while position + 8 <= one.count {
      let left = UnsafeRawPointer(one.baseAddress! + position).loadUnaligned(as: UInt64.self)
      let right = UnsafeRawPointer(other.baseAddress! + position).loadUnaligned(as: UInt64.self)
      guard left == right else { return false }
      position += 8
    }
    while position < one.count {
      guard one[position] == other[position] else { return false }
      position += 1
    }
    return true
  }

  /// Whether the strings or keys at `first` and `second` have the same text, byte for byte.
  package func hasSameText(_ first: Index, _ second: Index) -> Bool {
    let (one, other) = (entry(first), entry(second))
    if (one.flags | other.flags) & Entry.escaped == 0 {
      guard one.end - one.offset == other.end - other.offset else { return false }
      return bytes.withUnsafeBufferPointer { bytes in
        Self.same(
          UnsafeBufferPointer(rebasing: bytes[one.offset + 1..<one.end]),
          UnsafeBufferPointer(rebasing: bytes[other.offset + 1..<other.end]))
      }
    }
    return withBytes(ofStringAt: first) { one in
      withBytes(ofStringAt: second) { Self.same(one, $0) }
    }
  }

  /// Calls `body` with the UTF-8 bytes of the text of the string or key at `index`.
  func withBytes<Result>(
    ofStringAt index: Index, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    let entry = entry(index)
    if entry.flags & Entry.escaped != 0 {
      var text = texts[Int(entry.text)]
      return text.withUTF8(body)
    }
    return bytes.withUnsafeBufferPointer {
      body(UnsafeBufferPointer(rebasing: $0[entry.offset + 1..<entry.end]))
    }
  }

  /// The members of the object at `index`, in source order, keys written twice left out.
  package func members(of index: Index) -> Members {
    let entry = entry(index)
    precondition(entry.kind == .object, "entry \(index) is not an object")
    return Members(tape: self, position: index + 1, end: entry.end)
  }

  /// The elements of the array at `index`.
  package func elements(of index: Index) -> Elements {
    let entry = entry(index)
    precondition(entry.kind == .array, "entry \(index) is not an array")
    return Elements(tape: self, position: index + 1, end: entry.end)
  }

  /// Calls `body` with each member of the object at `index` (keys written twice left out), in
  /// source order, with what its value is and the position in `keys` of its key's text, byte
  /// for byte (`nil` for none of them): one call for an object whose members a reader tells
  /// apart by a few keys (a manifest's thousands of steps), not several across the module
  /// boundary for each member.
  package func forEachMember(
    of index: Index, keyedAmong keys: [StaticString], _ body: (Member, Kind, Int?) -> Void
  ) {
    let object = entry(index)
    precondition(object.kind == .object, "entry \(index) is not an object")
    bytes.withUnsafeBufferPointer { bytes in
      var position = index + 1
      // An object's entries are its keys, each followed by its value and what that holds.
      while position < object.end {
        let key = entries[position]
        let value = entries[position + 1]
        let member = Member(key: position)
        position = value.isContainer ? value.end : position + 2
        guard key.flags & Entry.duplicate == 0 else { continue }
        var known: Int?
        if key.flags & Entry.escaped != 0 {
          known = keys.firstIndex { string(at: member.key, is: $0) }
        } else {
          // Compared in place, the length first: most keys are none of them, or of one length.
          let text = UnsafeBufferPointer(rebasing: bytes[key.offset + 1..<key.end])
          known = keys.firstIndex {
            $0.utf8CodeUnitCount == text.count
              && Self.same(text, UnsafeBufferPointer(start: $0.utf8Start, count: text.count))
          }
        }
        body(member, value.kind, known)
      }
    }
  }

  /// One member of an object: the indices of its key and its value.
  package struct Member {
    package var key: Index
    package var value: Index { key + 1 }
  }

  /// An object's members, read off the tape.
  package struct Members: Sequence, IteratorProtocol {
    let tape: JSONTape
    var position: Index
    let end: Index

    package mutating func next() -> Member? {
      while position < end {
        let key = position
        position = tape.after(key + 1)
        if tape.entry(key).flags & Entry.duplicate == 0 { return Member(key: key) }
      }
      return nil
    }
  }

  /// An array's elements, read off the tape.
  package struct Elements: Sequence, IteratorProtocol {
    let tape: JSONTape
    var position: Index
    let end: Index

    package mutating func next() -> Index? {
      guard position < end else { return nil }
      defer { position = tape.after(position) }
      return position
    }
  }

  /// The indices of the elements of the array at `index`.
  package func elementIndices(of index: Index) -> [Index] {
    var indices: [Index] = []
    indices.reserveCapacity(count(of: index))
    indices.append(contentsOf: elements(of: index))
    return indices
  }

  /// The value of the member of the object at `index` whose key is `key` byte for byte, as
  /// ``JSONValue/subscript(_:)`` finds it; `nil` when `index` is not an object or has none.
  package func member(_ key: String, of index: Index) -> Index? {
    guard kind(of: index) == .object else { return nil }
    var key = key
    return key.withUTF8 { key in
      members(of: index).first { withBytes(ofStringAt: $0.key) { $0.elementsEqual(key) } }?.value
    }
  }
}

/// Finds values of a tape by their paths, as ``JSONValue/value(at:)`` finds them in the tree:
/// for diagnostics, which name a path. An array's elements are found by walking the tape, so
/// the positions of each array looked into are kept: a manifest's thousands of diagnostics
/// each name an element of its `steps`.
package struct JSONTapeLocator {
  package let tape: JSONTape
  /// The arrays looked into, each with its elements' indices. A list, not a dictionary keyed
  /// by index: a load looks into a handful (a manifest's `steps`), and the first dictionary
  /// keyed by `Int` looks up `Int`'s `Hashable` conformance at run time, a search through
  /// every conformance the process has loaded, on a launch's cold path.
  private var arrays: [(array: JSONTape.Index, elements: [JSONTape.Index])] = []

  package init(tape: JSONTape) {
    self.tape = tape
  }

  /// The value found by following `path` from the root.
  package mutating func index(at path: JSONPath) -> JSONTape.Index? {
    var current = tape.root
    for component in path.components {
      switch component {
      case .key(let key):
        guard let next = tape.member(key, of: current) else { return nil }
        current = next
      case .index(let position):
        guard tape.kind(of: current) == .array else { return nil }
        let known = arrays.firstIndex { $0.array == current }
        if known == nil { arrays.append((current, tape.elementIndices(of: current))) }
        let elements = arrays[known ?? arrays.count - 1].elements
        guard elements.indices.contains(position) else { return nil }
        current = elements[position]
      }
    }
    return current
  }
}
