import Foundation
import Testing

@testable import LaunchJSON

/// The tape a manifest is read off (``JSONTape``) against ``JSONParser``, which its own
/// suites check against the reference parser: on tricky, generated, damaged and hostile
/// documents, and the repository's manifests, the tape must give the same values at the same
/// offsets, the same duplicate keys and the same errors; and reading it in place (kinds,
/// strings, members, elements, paths) must find what reading the values finds.
@Suite("JSON tape against the parser")
struct JSONTapeTests {
  /// The document as the tape gives it, made into values.
  private static func tapeDocument(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONDocument {
    let tape = try JSONTape.parse(bytes)
    return JSONDocument(root: tape.value(at: tape.root), duplicateKeys: tape.duplicateKeys)
  }

  private func expectSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    // An array of exactly its size: under the address sanitizer, a read past the end is caught.
    let exact =
      bytes.isEmpty
      ? []
      : [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
        count = buffer.initialize(fromContentsOf: bytes)
      }
    let expected = JSONParseOutcome.of(JSONParser.parse, exact)
    let actual = JSONParseOutcome.of(Self.tapeDocument, exact)
    #expect(actual == expected, "input \(bytes)", sourceLocation: sourceLocation)
    guard let tape = try? JSONTape.parse(exact), let root = try? JSONParser.parse(exact).root
    else { return }
    var locator = JSONTapeLocator(tape: tape)
    // One cache for the whole document, as a manifest's reader keeps one for all its steps:
    // a string found in it must be the one the parser made.
    let strings = JSONStringCache()
    expectSameReading(
      tape, tape.root, root, at: .root, locator: &locator, strings: strings, sourceLocation)
  }

  /// Reads the value at `index` of `tape` in place, and every value in it, and expects what
  /// `value` (the same, parsed into values) holds, at `path`.
  private func expectSameReading(
    _ tape: JSONTape, _ index: JSONTape.Index, _ value: JSONValue, at path: JSONPath,
    locator: inout JSONTapeLocator, strings: JSONStringCache, _ sourceLocation: SourceLocation
  ) {
    #expect(tape.offset(of: index) == value.offset, sourceLocation: sourceLocation)
    #expect(tape.value(at: index, cachedIn: strings) == value, sourceLocation: sourceLocation)
    #expect(
      locator.index(at: path).map(tape.offset(of:)) == value.offset, "\(path)",
      sourceLocation: sourceLocation)
    switch value.kind {
    case .null: #expect(tape.kind(of: index) == .null, sourceLocation: sourceLocation)
    case .bool(let bool):
      #expect(tape.kind(of: index) == (bool ? .true : .false), sourceLocation: sourceLocation)
    case .number: #expect(tape.kind(of: index) == .number, sourceLocation: sourceLocation)
    case .string(let string):
      #expect(tape.kind(of: index) == .string, sourceLocation: sourceLocation)
      #expect(tape.string(at: index).hasSameBytes(as: string), sourceLocation: sourceLocation)
      #expect(tape.isEmptyString(at: index) == string.isEmpty, sourceLocation: sourceLocation)
    case .array(let elements):
      #expect(tape.kind(of: index) == .array, sourceLocation: sourceLocation)
      #expect(tape.count(of: index) == elements.count, sourceLocation: sourceLocation)
      let indices = Array(tape.elements(of: index))
      #expect(indices == tape.elementIndices(of: index), sourceLocation: sourceLocation)
      #expect(indices.count == elements.count, sourceLocation: sourceLocation)
      // An array's strings read at once, when it holds nothing else (a step's `dependsOn`).
      let texts = elements.compactMap(\.stringValue)
      if let strings = tape.strings(inArray: index) {
        #expect(texts.count == elements.count, sourceLocation: sourceLocation)
        #expect(
          strings.count == texts.count
            && zip(strings, texts).allSatisfy { $0.hasSameBytes(as: $1) },
          sourceLocation: sourceLocation)
      } else {
        #expect(texts.count < elements.count, sourceLocation: sourceLocation)
      }
      for (position, element) in zip(indices, elements).enumerated() {
        expectSameReading(
          tape, element.0, element.1, at: path.appending(position), locator: &locator,
          strings: strings, sourceLocation)
      }
    case .object(let members):
      #expect(tape.kind(of: index) == .object, sourceLocation: sourceLocation)
      #expect(tape.count(of: index) == members.count, sourceLocation: sourceLocation)
      let read = Array(tape.members(of: index))
      #expect(read.count == members.count, sourceLocation: sourceLocation)
      // The members visited at once, each with its value's kind and which of a few keys it has.
      var visited: [(member: JSONTape.Member, kind: JSONTape.Kind, known: Int?)] = []
      tape.forEachMember(of: index, keyedAmong: ["id", "dependsOn"]) {
        visited.append(($0, $1, $2))
      }
      #expect(visited.map(\.member.key) == read.map(\.key), sourceLocation: sourceLocation)
      for (visit, expected) in zip(visited, members) {
        #expect(visit.kind == tape.kind(of: visit.member.value), sourceLocation: sourceLocation)
        let known =
          expected.key.hasSameBytes(as: "id")
          ? 0 : expected.key.hasSameBytes(as: "dependsOn") ? 1 : nil
        #expect(visit.known == known, sourceLocation: sourceLocation)
      }
      for (member, expected) in zip(read, members) {
        #expect(tape.kind(of: member.key) == .key, sourceLocation: sourceLocation)
        #expect(
          tape.string(at: member.key).hasSameBytes(as: expected.key),
          sourceLocation: sourceLocation)
        #expect(tape.offset(of: member.key) == expected.keyOffset, sourceLocation: sourceLocation)
        #expect(
          tape.member(member).key.hasSameBytes(as: expected.key), sourceLocation: sourceLocation)
        // The key found by its bytes is the first with them, as the values' subscript finds.
        #expect(
          tape.member(expected.key, of: index).map(tape.offset(of:)) == value[expected.key]?.offset,
          sourceLocation: sourceLocation)
        #expect(
          tape.string(at: member.key, is: "id") == expected.key.hasSameBytes(as: "id"),
          sourceLocation: sourceLocation)
        #expect(
          tape.string(at: member.key, is: "dependsOn")
            == expected.key.hasSameBytes(as: "dependsOn"), sourceLocation: sourceLocation)
        #expect(
          tape.hasSameText(member.key, read[0].key)
            == expected.key.hasSameBytes(as: members[0].key), sourceLocation: sourceLocation)
        expectSameReading(
          tape, member.value, expected.value, at: path.appending(expected.key),
          locator: &locator, strings: strings, sourceLocation)
      }
    }
  }

  @Test func trickyDocuments() {
    let documents = [
      "", " ", "{}", "[]", "{ }", "[ ]", "\"\"", "0", "-0", "-", "01", "1.", "1.5e", "1e+", "1E-2",
      "9007199254740993", "1e999", "-1e999", "1e-999", "0.1000000000000000055511151231257827",
      "true", "false", "null", "tru", "nul", "falsey", "truex", "[true false]", "{\"a\" 1}",
      "{\"a\":}", "{\"a\":1,}", "[1,]", "[,1]", "[1,,2]", "{,}", "{\"a\":1 \"b\":2}", "[1 2]",
      "{1:2}", "{\"a\":1}x", "{\"a\":1} ", "\n\t\r {\"a\" :\n[ 1 , 2 ]\r}\n",
      "{\"a\":[{\"b\":{}}]}", "[[[[[]]]]]", "{\"\":1,\"\":2}", "{\"a\":1,\"a\":2,\"a\":3}",
      "{\"k\": 1, \"o\": {\"k\": 2, \"k\": 3}}",
      "[{\"x\": [0, {\"d\": 1, \"d\": 2}]}, [[{\"e\": 1, \"e\": {\"f\": 1, \"f\": 2}}]]]",
      "{\"a\\u0062\": 1, \"ab\": 2, \"a\\/\": 3, \"a/\": 4}",
      "{\"a\": {\"b\": 1, \"b\": 2}, \"a\": {\"c\": 1, \"c\": 2}}",
      "{\"\\u00e9\": 1, \"é\": 2, \"e\\u0301\": 3, \"é\": 4}",
      "{\"\\u212A\": 1, \"K\": 2, \"\\u0069d\": 3, \"id\": 4, \"i\\u0064\": 5}",
      "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800\\udbff\"",
      "\"\\ud83d\\ude80\"",
      "\"\\u0000\"", "\"\\uD83D\\uDE80\"", "\"\\uZZZZ\"", "\"\\", "\"\\u", "\"abc", "\"a\nb\"",
      "[\"\u{FEFF}\"]", "\u{FEFF}{}", "\u{FEFF}", "\u{FEFF}\u{FEFF}{}", "{\"a\": \u{FEFF}1}",
      "{\"a\": 1", "[1", "{\"a\"", "{\"a\":", "{", "[", "]", "}", "\u{7F}", "\u{1}",
      "{//\n}", "[1 /* x */]", "{} //", "/", "[/]", "{\"a\" /", "/*",
      "{\"steps\": [{\"id\": \"a\", \"plugin\": \"simulate\", \"params\": {\"duration\": \"1ms\"}}]}",
    ]
    for document in documents {
      expectSame(Array(document.utf8))
    }
    for bytes: [UInt8] in [
      [0xFE, 0xFF], [0xFF, 0xFE, 0x7B, 0x00], [0xEF, 0xBB], [0xEF], [0xFF], [0x7B, 0x00],
      [0x00, 0x7B], [0x00], [0x00, 0x00, 0x00, 0x7B], [0x7B, 0x00, 0x00, 0x00], [0x00, 0x80],
      Array("{\"\u{0}\":1}".utf8), [0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
    ] {
      expectSame(bytes)
    }
  }

  /// The keys of generated documents' members, as written between their quotes.
  private static let generatedKeys = [
    "id", "plugin", "params", "dependsOn", "k", "", "a\\\"b", "\\u0069d", "é", "duration",
    "\\u212A", "K", "steps",
  ]

  /// Strings and keys of every length around the scan's eight-byte steps, ending at the end of
  /// the document or not, plain, non-ASCII, broken and escaped.
  @Test func stringsOfEveryLengthAndEnding() {
    JSONComparisonDocuments.stringsOfEveryLength(0...24) { expectSame($0) }
  }

  /// Objects below, at and beyond the 16 members from which keys are hashed, repeating keys
  /// written plainly and with escapes.
  @Test func largeObjectsWithDuplicates() {
    JSONComparisonDocuments.largeObjectsWithDuplicates(
      more: [#""\u006b1": [1, {"y": 1, "\u0079": 2}]"#]
    ) { expectSame($0) }
  }

  @Test func deepNesting() {
    JSONComparisonDocuments.deepNesting { expectSame($0) }
  }

  /// Generated documents, and the same with a byte changed, dropped, added or the end cut off.
  @Test func generatedAndDamagedDocuments() {
    JSONComparisonDocuments.generatedAndDamaged(seed: 2126, keys: Self.generatedKeys) {
      expectSame($0)
    }
  }

  /// The repository's manifests, whole, damaged at random, and the smallest cut at every byte.
  @Test func theRepositorysManifestsWholeCutAndDamaged() throws {
    try JSONComparisonDocuments.repositorysManifests(seed: 8260, damages: 50) {
      expectSame($0)
    }
  }

  /// A key spelled out for the path of each duplicate below it is the one member's key, as
  /// the parser gives it, however many duplicates there are.
  @Test func duplicatesBelowOneMemberNameItsKey() throws {
    let outer = String(repeating: "o", count: 1_000)
    let inner = #"\u0069"# + String(repeating: "i", count: 1_000)
    let document = #"{"\#(outer)": [{"\#(inner)": {"a": 0, "a": 1, "a": 2}}]}"#
    let tape = try JSONTape.parse(Array(document.utf8))
    let expected = JSONPath(components: [
      .key(outer), .index(0), .key("i" + String(repeating: "i", count: 1_000)),
    ])
    #expect(tape.duplicateKeys.map(\.path) == [expected, expected])
    #expect(tape.duplicateKeys == (try JSONParser.parse(Array(document.utf8)).duplicateKeys))
  }
}
