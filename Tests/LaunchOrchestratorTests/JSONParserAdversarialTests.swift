import Foundation
import Testing

@testable import LaunchJSON

/// The parser against ``ReferenceJSONParser`` on documents made to break it: strings ending
/// at every distance from the end of the document, the bytes its eight-byte scan must tell
/// apart side by side, short strings met again with one byte changed, keys written escaped
/// and verbatim, nesting at its limit, containers large enough to grow its stacks, and random
/// documents of all of these, damaged.
///
/// `LAUNCH_JSON_SOAK=<count>` reads that many random documents instead of 4,000 (300,000 take
/// about a minute in a debug build with the address sanitizer); `LAUNCH_JSON_SOAK_SEED`
/// picks others.
@Suite("JSON parser against its reference, on hostile documents")
struct JSONParserAdversarialTests {
  /// Bytes the scan stops at, bytes just beside them, and bytes of broken UTF-8.
  private static let nastyBytes: [UInt8] = [
    0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xC3, 0xDC,
    0xED, 0xFF,
  ]

  /// Whether both parsers give the same outcome for `bytes`, copied into an array of exactly
  /// their size so that, under the address sanitizer, a read past the end is caught.
  private static func sameOutcome(_ bytes: [UInt8]) -> Bool {
    // Not for no bytes: given a capacity of 0, the initializer writes the count into the one
    // empty array all threads share.
    let exact =
      bytes.isEmpty
      ? []
      : [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
        count = buffer.initialize(fromContentsOf: bytes)
      }
    return JSONParseOutcome.of(ReferenceJSONParser.parse, exact)
      == JSONParseOutcome.of(JSONParser.parse, exact)
  }

  /// The documents among `documents` on which the parsers differ, the first few in full.
  private static func differences(_ documents: some Sequence<[UInt8]>) -> [String] {
    var found: [String] = []
    for document in documents where !sameOutcome(document) {
      found.append(
        "input \(document)\n  reference: \(JSONParseOutcome.of(ReferenceJSONParser.parse, document))"
          + "\n  parser:    \(JSONParseOutcome.of(JSONParser.parse, document))")
      if found.count == 5 { break }
    }
    return found
  }

  private static func joined(_ parts: [[UInt8]]) -> [UInt8] { Array(parts.joined()) }

  private static func quoted(_ content: [UInt8]) -> [UInt8] {
    [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
  }

  /// A string of every length up to 24 whose closing quote is 0 to 20 bytes before the end
  /// of the document, alone, as the last of enough strings to be cached (met again in the
  /// same document), and cut off at each of those bytes; with a stop byte at its start or end.
  @Test func stringsEndingAtEveryDistanceFromTheEnd() {
    var documents: [[UInt8]] = []
    for length in 0...24 {
      for filling: UInt8? in [nil, 0x22, 0x5C, 0x1F, 0x80, 0xFF, 0x7F] {
        for position in Set([0, max(length - 1, 0)]) {
          var content = [UInt8](repeating: UInt8(ascii: "q"), count: length)
          if let filling, length > 0 { content[position] = filling }
          let string = Self.quoted(content)
          let cached = Self.joined(
            [[0x5B]] + Array(repeating: string + [0x2C], count: 17) + [string, [0x5D]])
          for tail in 0...20 {
            let spaces = [UInt8](repeating: UInt8(ascii: " "), count: tail)
            documents.append(string + spaces)
            documents.append(cached + spaces)
            documents.append(Array(cached.dropLast(tail)))
            documents.append(Array(string.dropLast(min(tail, string.count))))
          }
        }
      }
    }
    documents += [[], [0x22], [0x22, 0x22], [0x22, 0x5C], [0x22, 0x5C, 0x22], [0x5B, 0x22]]
    #expect(Self.differences(documents) == [])
  }

  /// Two of the bytes the eight-byte scan must tell apart, at every pair of nearby places in
  /// a string of a length around its words, alone and after the string was cached.
  @Test func stopBytesSideBySide() {
    var documents: [[UInt8]] = []
    let others: [UInt8] = [0x00, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0xFF]
    for length in [1, 2, 7, 8, 9, 15, 16, 17] {
      for first in 0..<length {
        for second in Set([first, min(first + 1, length - 1), length - 1]) {
          for byte in Self.nastyBytes {
            for other in others {
              var content = [UInt8](repeating: UInt8(ascii: "w"), count: length)
              content[first] = byte
              content[second] = other
              let string = Self.quoted(content)
              documents.append(string)
              let after = Array(#", "0123456789abcdef"]"#.utf8)
              documents.append(
                Self.joined(
                  [[0x5B]] + Array(repeating: string + [0x2C], count: 17) + [string, after]))
            }
          }
        }
      }
    }
    #expect(Self.differences(documents) == [])
  }

  /// A short string cached once it was met, then met again with one byte changed: into
  /// broken UTF-8, a control character, a quote or a backslash, at its start, middle or end.
  @Test func cachedStringsMetAgainWithOneByteChanged() {
    var documents: [[UInt8]] = []
    let valid: [[UInt8]] = [
      Array("é".utf8), Array("aé".utf8), Array("abcdefé".utf8), Array("abcdefgé".utf8),
      Array("abcdefghijklmé".utf8), Array("abcdefghijklmnoé".utf8), Array("🚀🚀🚀".utf8),
      Array("abcdefghijklmno".utf8), Array("abcdefghijklmnop".utf8), Array("a".utf8), [],
    ]
    let elements = Array((0..<17).map { Self.quoted(Array("p\($0)".utf8)) + [0x2C] }.joined())
    let members = Array(
      (0..<17).map { Self.quoted(Array("p\($0)".utf8)) + [0x3A, 0x30, 0x2C] }.joined())
    for content in valid {
      for position in Set([0, content.count / 2, max(content.count - 1, 0)]) {
        for byte: UInt8 in [0x00, 0x1F, 0x22, 0x5C, 0x80, 0xBF, 0xC3, 0xED, 0xFF] {
          var changed = content
          if changed.isEmpty { changed = [byte] } else { changed[position] = byte }
          let (original, damaged) = (Self.quoted(content), Self.quoted(changed))
          for trailer in ["", #", "0123456789abcdefghij""#] {
            let end = Array(trailer.utf8)
            documents.append(
              Self.joined([
                [0x5B], elements, original, [0x2C], original, [0x2C], damaged, end, [0x5D],
              ]))
            documents.append(
              Self.joined([
                [0x7B], members, original, [0x3A, 0x31, 0x2C], damaged, [0x3A, 0x32], end, [0x7D],
              ])
            )
          }
        }
      }
    }
    #expect(Self.differences(documents) == [])
  }

  /// Keys that are the same bytes written differently, or differ only by escaped NUL bytes
  /// or normalisation, in objects of 1, 15, 16, 17 and 40 members, nested in arrays.
  @Test func keysWrittenEscapedAndVerbatim() {
    let spellings: [[String]] = [
      ["a", #"\u0061"#], ["ab", #"ab\u0000"#, #"a\u0000b"#, #"\u0000ab"#], ["", #"\u0000"#],
      ["é", #"\u00e9"#, #"\u00E9"#, "e\u{301}", #"e\u0301"#], ["/", #"\/"#], [#"\""#, #"\u0022"#],
      ["abcdefghijklmnop", #"abcdefghijklmno\u0070"#, #"\u0061bcdefghijklmnop"#],
      ["abcdefghijklmnopq", #"abcdefghijklmnop\u0000"#, "abcdefghijklmnop"],
      ["abcdefgh", #"abcdefgh\u0000"#, "abcdefg", #"abcdefg\u0000"#],
      ["🚀", #"\ud83d\ude80"#, #"\uD83D\uDE80"#],
    ]
    var documents: [[UInt8]] = []
    for group in spellings {
      for before in [0, 14, 15, 16, 17, 40] {
        var members = (0..<before).map { #""m\#($0)": \#($0)"# }
        for (index, key) in group.enumerated() {
          members.append(#""\#(key)": \#(index)"#)
          members.append(#""\#(key)": {"\#(key)": 1, "\#(group[0])": 2}"#)
        }
        let object = "{\(members.joined(separator: ", "))}"
        documents.append(Array(object.utf8))
        documents.append(Array(#"[0, [{"x": \#(object)}, \#(object)]]"#.utf8))
        documents.append(Array(#"{"\#(group.last!)": [\#(object)], "k": \#(object)}"#.utf8))
      }
    }
    #expect(Self.differences(documents) == [])
  }

  /// Arrays and objects nested to one level short of the limit, at it and past it, with a
  /// repeated key at every level so that each duplicate's path runs through all of them.
  @Test func nestingAtTheLimitWithDuplicatesEverywhere() {
    var documents: [[UInt8]] = []
    for depth in [254, 255, 256, 257] {
      var opening = ""
      var closing = ""
      for level in 0..<depth {
        switch level % 3 {
        case 0:
          opening += #"{"k\#(level)": 0, "k\#(level)": 1, "\u006b\#(level)": "#
          closing = "}" + closing
        case 1:
          opening += "[0, \"s\", "
          closing = "]" + closing
        default:
          opening += #"{"\u0061": 0, "a": "#
          closing = "}" + closing
        }
      }
      documents.append(Array((opening + "null" + closing).utf8))
      documents.append(Array((opening + "{}" + closing).utf8))
      documents.append(Array((opening + "[]" + closing).utf8))
      documents.append(Array((opening + "null" + closing.dropLast()).utf8))
    }
    #expect(Self.differences(documents) == [])
  }

  /// Containers large enough to grow the parser's stacks several times, side by side and
  /// nested, with duplicates past the 16 members an object is scanned for.
  @Test func containersThatGrowTheStacks() {
    let numbers = (0..<60_000).map { String($0) }.joined(separator: ",")
    let strings = (0..<20_000).map { #""s\#($0 % 300)""# }.joined(separator: ",")
    let members = (0..<5_000).map { #""k\#($0 % 4_000)": [\#($0)]"# }.joined(separator: ",")
    let chunk = (0..<1_000).map { String($0) }.joined(separator: ",")
    let nested = (0..<200).map { _ in "[\(chunk)]" }.joined(separator: ",")
    let documents = [
      "[\(numbers)]", "[\(strings)]", "{\(members)}", "[[\(numbers)],{\(members)},[\(strings)]]",
      "[\(nested), [\(nested)], {\"a\": [\(nested)], \"a\": 1}]", "[\(numbers),]", "{\(members),}",
    ]
    #expect(Self.differences(documents.map { Array($0.utf8) }) == [])
  }

  /// Random documents of strings of every length made of the bytes above, escapes whole and
  /// broken, keys written both ways, numbers and literals, cut, changed and extended.
  @Test func randomHostileDocuments() {
    let environment = ProcessInfo.processInfo.environment
    let count = environment["LAUNCH_JSON_SOAK"].flatMap { Int($0) } ?? 4_000
    let seed = environment["LAUNCH_JSON_SOAK_SEED"].flatMap { UInt64($0) } ?? 2_027
    var generator = HostileDocuments(seed: seed)
    #expect(Self.differences((0..<count).lazy.map { _ in generator.next() }) == [])
  }

  /// Every duplicate found under one member names that member's key in its path: the same
  /// string each time, as the reference keeps it, not a copy made again for each duplicate.
  /// Copies made a document of 160 KB (a key of 100,000 bytes over 10,000 repeated keys)
  /// take a gigabyte of memory, as the key's length times the number of duplicates: one of
  /// 1.6 MB (a key of 1 MB over 100,000) would take 100 GB.
  @Test func duplicatesUnderOneMemberShareTheirPathsKeys() throws {
    let outer = String(repeating: "o", count: 1_000)
    let inner = #"\u0069"# + String(repeating: "i", count: 1_000)
    let document = #"{"\#(outer)": [{"\#(inner)": {"a": 0, "a": 1, "a": 2}}]}"#
    let parsed = try JSONParser.parse(Array(document.utf8))
    let paths = parsed.duplicateKeys.map(\.path)
    let expected = JSONPath(components: [
      .key(outer), .index(0), .key("i" + String(repeating: "i", count: 1_000)),
    ])
    #expect(paths == [expected, expected])
    for level in [0, 2] {
      let storages = Set(
        paths.map { path -> UInt? in
          guard case .key(let key) = path.components[level] else { return nil }
          return key.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
        })
      #expect(storages.count == 1, "level \(level): the key is stored \(storages.count) times")
    }
  }
}

/// Random documents meant to break a parser: see ``JSONParserAdversarialTests``.
private struct HostileDocuments {
  private var state: UInt64
  /// Strings met lately, so that many are met again and found in the parser's cache.
  private var pool: [[UInt8]] = []
  private static let keys: [[UInt8]] = [
    "a", #"\u0061"#, "ab", #"ab\u0000"#, #"a\u0000b"#, #"\u0000"#, "", "id", #"i\u0064"#,
    "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop",
    "abcdefghijklmnopq", #"abcdefghijklmn\u006f"#, #"abcdefghijklmnop\u0000"#, "é", #"\u00e9"#,
    "e\u{301}", #"\/"#, "/", #"\""#, #"a\"b"#, "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
    "k8", "k9", "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17",
  ].map { Array($0.utf8) }
  private static let pieces: [[UInt8]] =
    [
      "a", "b", "é", "🚀", "\u{FEFF}", "\u{7FF}", "\u{FFFF}", "\u{10FFFF}", #"\n"#, #"\""#, #"\\"#,
      #"\/"#, #"\u0061"#, #"\u0000"#, #"\u00e9"#, #"\ud83d\ude80"#, #"\uD83D\uDE80"#, #"\ud800"#,
      #"\udc00"#, #"\ud800\u0041"#, #"\ud800\udbff"#, #"\x"#, #"\u12"#, #"\uZZZZ"#, #"\"#, #"\u"#,
      #"\ud800\"#, #"\ud800\u"#, "\"",
    ].map { Array($0.utf8) } + [
      [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x9F], [0xF4, 0x90, 0x80],
    ]
  private static let bytes: [UInt8] = [
    0x00, 0x01, 0x08, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x2F, 0x5B, 0x5C, 0x5D, 0x7E,
    0x7F, 0x80, 0x81, 0xA2, 0xBF, 0xC0, 0xC2, 0xDC, 0xE0, 0xE9, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
    0xFE, 0xFF, 0x61, 0x75, 0x30,
  ]

  init(seed: UInt64) { state = seed }

  private mutating func random() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  private mutating func below(_ bound: Int) -> Int { Int(random() % UInt64(bound)) }
  private mutating func oneIn(_ bound: Int) -> Bool { below(bound) == 0 }
  private mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

  mutating func next() -> [UInt8] {
    if oneIn(40) { pool.removeAll() }
    var document: [UInt8] = oneIn(30) ? [0xEF, 0xBB, 0xBF] : []
    if oneIn(4) {
      string(into: &document)
      document += [UInt8](repeating: UInt8(ascii: " "), count: oneIn(3) ? below(10) : 0)
    } else {
      value(into: &document, depth: 0)
    }
    if oneIn(3) {
      for _ in 0...below(3) { damage(&document) }
    }
    return document
  }

  private mutating func content() -> [UInt8] {
    if !pool.isEmpty && !oneIn(3) { return pick(pool) }
    var content: [UInt8] = []
    let length = oneIn(4) ? below(40) : below(18)
    let mode = oneIn(5) ? 3 + below(3) : below(3)
    while content.count < length {
      switch mode {
      case 0: content.append(UInt8(ascii: "a") + UInt8(below(3)))
      case 1: content.append(oneIn(12) ? pick(Self.bytes) : UInt8(ascii: "a") + UInt8(below(26)))
      case 2: content += oneIn(5) ? pick(Self.pieces) : [UInt8(ascii: "a") + UInt8(below(4))]
      case 3: content.append(pick(Self.bytes))
      case 4: content.append(UInt8(truncatingIfNeeded: random()))
      default: content += oneIn(3) ? pick(Self.pieces) : [pick(Self.bytes)]
      }
    }
    if oneIn(3) && pool.count < 600 { pool.append(content) }
    return content
  }

  private mutating func string(into document: inout [UInt8]) {
    document += [UInt8(ascii: "\"")] + content() + [UInt8(ascii: "\"")]
  }

  private mutating func whitespace(into document: inout [UInt8]) {
    guard oneIn(4) else { return }
    for _ in 0..<below(3) {
      document.append(oneIn(50) ? pick([0x0C, 0x0B, 0x00]) : pick([0x20, 0x0A, 0x0D, 0x09]))
    }
  }

  private mutating func number(into document: inout [UInt8]) {
    let fixed = [
      "0", "-0", "1", "-", "01", "1.", "1.5", "1e", "1e+", "1E-2", "9007199254740993", "1e999",
      "-1e999", "1e-999", "0.1000000000000000055511151231257827", "-0.0e-0",
    ]
    if oneIn(2) {
      document += Array(pick(fixed).utf8)
      return
    }
    var text = (oneIn(3) ? "-" : "") + String(below(100_000))
    if oneIn(3) { text += "." + String(below(1_000)) }
    if oneIn(4) { text += pick(["e", "E"]) + pick(["", "+", "-"]) + String(below(400)) }
    document += Array(text.utf8)
  }

  private mutating func value(into document: inout [UInt8], depth: Int) {
    whitespace(into: &document)
    let kind = below(10)
    if depth < 6 && kind < 3 {
      let count = oneIn(5) ? below(40) : below(6)
      let isObject = kind == 0 || oneIn(2)
      document.append(UInt8(ascii: isObject ? "{" : "["))
      for index in 0..<count {
        if index > 0 {
          whitespace(into: &document)
          document.append(UInt8(ascii: ","))
        }
        if isObject {
          whitespace(into: &document)
          if oneIn(3) {
            string(into: &document)
          } else {
            document += [UInt8(ascii: "\"")] + pick(Self.keys) + [UInt8(ascii: "\"")]
          }
          whitespace(into: &document)
          document.append(UInt8(ascii: ":"))
        }
        value(into: &document, depth: depth + 1)
      }
      whitespace(into: &document)
      document.append(UInt8(ascii: isObject ? "}" : "]"))
    } else if kind < 7 {
      string(into: &document)
    } else if kind < 8 {
      number(into: &document)
    } else {
      let broken = oneIn(20)
      document += Array(
        (broken ? pick(["tru", "nul", "fals"]) : pick(["true", "false", "null"])).utf8)
    }
    whitespace(into: &document)
  }

  private mutating func damage(_ document: inout [UInt8]) {
    guard !document.isEmpty else { return }
    switch below(6) {
    case 0: document.removeSubrange(below(document.count)...)
    case 1: document.removeSubrange((document.count - 1 - below(min(document.count, 20)))...)
    case 2: document[below(document.count)] = pick(Self.bytes)
    case 3: document.remove(at: below(document.count))
    case 4: document.insert(pick(Self.bytes), at: below(document.count + 1))
    default: document.insert(contentsOf: pick(Self.pieces), at: below(document.count))
    }
  }
}
