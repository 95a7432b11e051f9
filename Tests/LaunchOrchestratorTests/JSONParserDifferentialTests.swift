import Foundation
import Testing

@testable import LaunchJSON

/// The parser against ``ReferenceJSONParser``, the plain version it replaced: on tricky and
/// generated documents, valid and broken, both must give the same values at the same offsets,
/// the same duplicate keys and the same errors.
@Suite("JSON parser against its reference")
struct JSONParserDifferentialTests {
  private func expectSameOutcome(
    _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let expected = JSONParseOutcome.of(ReferenceJSONParser.parse, bytes)
    let actual = JSONParseOutcome.of(JSONParser.parse, bytes)
    #expect(actual == expected, "input \(bytes)", sourceLocation: sourceLocation)
  }

  /// `document` (not empty) with a byte of `alphabet` put in place of one, one taken out, one
  /// put in, or (`mayCut`) cut off there, at random.
  private func damage(
    _ document: [UInt8], from alphabet: [UInt8], mayCut: Bool, random: inout SplitMix
  ) -> [UInt8] {
    var damaged = document
    let position = Int(random.next() % UInt64(damaged.count))
    let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
    switch random.next() % (mayCut ? 4 : 3) {
    case 0: damaged[position] = byte
    case 1: damaged.remove(at: position)
    case 2: damaged.insert(byte, at: position)
    default: damaged.removeSubrange(position...)
    }
    return damaged
  }

  /// Strings of every length around the parser's eight-byte steps and the 16 bytes of its
  /// cache, ending at the end of the document or not, plain, non-ASCII, broken and escaped.
  @Test func stringsOfEveryLengthAndEnding() {
    let fillings: [[UInt8]] = [
      Array("a".utf8), Array("é".utf8), Array("🚀".utf8), [0xFF], [0x80], [0xC0, 0x80],
      [0xED, 0xA0, 0x80], [0x01], [0x1F], [0x7F], Array("\\n".utf8), Array("\\u00e9".utf8),
      Array("\\ud83d\\ude80".utf8), Array("\\".utf8), Array("\\x".utf8), Array("\\u12".utf8),
    ]
    for length in 0...40 {
      for filling in fillings {
        for position in [0, length / 2, length] {
          var content = [UInt8](repeating: UInt8(ascii: "k"), count: length)
          content.insert(contentsOf: filling, at: position)
          let string = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
          expectSameOutcome(string)
          expectSameOutcome(Array(string.dropLast()))
          expectSameOutcome(Array("[".utf8) + string + Array(", 1]".utf8))
          expectSameOutcome(Array("{".utf8) + string + Array(": ".utf8) + string + Array("}".utf8))
          expectSameOutcome(
            Array("{".utf8) + string + Array(":1, ".utf8) + string + Array(":2}".utf8))
        }
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
      "{\"a\":[{\"b\":{}}]}",
      "[[[[[]]]]]", "{\"\":1,\"\":2}", "{\"a\":1,\"a\":2,\"a\":3}",
      "{\"k\": 1, \"o\": {\"k\": 2, \"k\": 3}}",
      "[{\"x\": [0, {\"d\": 1, \"d\": 2}]}, [[{\"e\": 1, \"e\": {\"f\": 1, \"f\": 2}}]]]",
      "{\"a\\u0062\": 1, \"ab\": 2, \"a\\/\": 3, \"a/\": 4}",
      "{\"a\": {\"b\": 1, \"b\": 2}, \"a\": {\"c\": 1, \"c\": 2}}",
      "{\"\\u00e9\": 1, \"é\": 2, \"e\\u0301\": 3, \"é\": 4}",
      "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800\\udbff\"",
      "\"\\ud83d\\ude80\"",
      "\"\\u0000\"", "\"\\uD83D\\uDE80\"", "\"\\uZZZZ\"", "\"\\", "\"\\u", "\"abc", "\"a\nb\"",
      "[\"\u{FEFF}\"]", "\u{FEFF}{}", "\u{FEFF}", "\u{FEFF}\u{FEFF}{}", "{\"a\": \u{FEFF}1}",
      "{\"a\": 1", "[1", "{\"a\"", "{\"a\":", "{", "[", "]", "}", "\u{7F}", "\u{1}",
      "{//\n}", "[1 /* x */]", "{} //", "/", "[/]", "{\"a\" /", "/*",
    ]
    for document in documents {
      expectSameOutcome(Array(document.utf8))
    }
    for bytes: [UInt8] in [
      [0xFE, 0xFF], [0xFF, 0xFE, 0x7B, 0x00], [0xEF, 0xBB], [0xEF], [0xFF], [0x7B, 0x00],
      [0x00, 0x7B], [0x00], [0x00, 0x00, 0x00, 0x7B], [0x7B, 0x00, 0x00, 0x00], [0x00, 0x80],
    ] {
      expectSameOutcome(bytes)
    }
  }

  @Test func largeObjectsWithDuplicates() {
    for count in [14, 15, 16, 17, 40] {
      var members = (0..<count).map { #""k\#($0)": \#($0)"# }
      members += [
        #""k3": -1"#, #""k\#(count - 1)": -1"#, #""k\u0033": 0"#, #""k0": {"z": 1, "z": 2}"#,
      ]
      expectSameOutcome(Array("[{ \(members.joined(separator: ", ")) }]".utf8))
    }
  }

  @Test func deepNesting() {
    for depth in [255, 256, 257] {
      expectSameOutcome(
        Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
      let objects =
        String(repeating: "{\"a\":", count: depth) + "{\"d\":1,\"d\":2}"
        + String(repeating: "}", count: depth)
      expectSameOutcome(Array(objects.utf8))
    }
  }

  /// Generated documents, and the same with a byte changed, dropped, added or the end cut off.
  @Test func generatedAndDamagedDocuments() {
    var random = SplitMix(seed: 2026)
    let alphabet = Array("{}[]:,\" \\u0aé1-.eE+tfn\n".utf8) + [0x00, 0x1F, 0x80, 0xBF, 0xEF, 0xFF]
    for _ in 0..<3_000 {
      var document: [UInt8] = []
      generateValue(into: &document, depth: 0, random: &random)
      expectSameOutcome(document)
      guard !document.isEmpty else { continue }
      for _ in 0..<3 {
        expectSameOutcome(damage(document, from: alphabet, mayCut: true, random: &random))
      }
    }
  }

  /// The repository's manifests and schema, whole, cut off at every byte of the smallest,
  /// and damaged at random.
  @Test func theRepositorysManifestsWholeCutAndDamaged() throws {
    let folder = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("manifests")
    let files = try #require(
      FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects
        as? [URL]
    )
    .filter { $0.pathExtension == "json" }
    .sorted { $0.path < $1.path }
    #expect(files.count >= 5)
    var random = SplitMix(seed: 8259)
    let alphabet = Array("{}[]:,\" \\u0aé1-.eE+tfn\n".utf8) + [0x00, 0x1F, 0x80, 0xFF]
    for file in files {
      let document = try [UInt8](Data(contentsOf: file))
      expectSameOutcome(document)
      for _ in 0..<100 {
        expectSameOutcome(damage(document, from: alphabet, mayCut: false, random: &random))
      }
    }
    let smallest = try #require(
      try files.map { try [UInt8](Data(contentsOf: $0)) }.min { $0.count < $1.count })
    for end in 0..<smallest.count {
      expectSameOutcome(Array(smallest[..<end]))
    }
  }

  private func generateValue(into document: inout [UInt8], depth: Int, random: inout SplitMix) {
    let keys = [
      "id", "plugin", "params", "dependsOn", "k", "", "a\\\"b", "\\u0069d", "é", "duration",
    ]
    let strings = [
      "s1", "simulate", "1ms", "", "a much longer string than sixteen bytes", "ünïcödé", "tab\\t",
      "\\ud83d\\ude80", "exactly16bytes!!", "fifteen-bytes..", "seventeen-bytes!!",
    ]
    let numbers = ["0", "-0", "12", "-3.25", "1e3", "2E-2", "9007199254740993", "0.5"]
    if depth < 5, random.next() % 3 == 0 {
      let count = Int(random.next() % 5)
      let isObject = random.next() % 2 == 0
      document += Array((isObject ? "{" : "[").utf8)
      for index in 0..<count {
        if index > 0 { document += Array((random.next() % 2 == 0 ? "," : " , ").utf8) }
        if isObject {
          document += Array("\"\(keys[Int(random.next() % UInt64(keys.count))])\":".utf8)
        }
        generateValue(into: &document, depth: depth + 1, random: &random)
      }
      document += Array((isObject ? "}" : "]").utf8)
      return
    }
    switch random.next() % 4 {
    case 0: document += Array("\"\(strings[Int(random.next() % UInt64(strings.count))])\"".utf8)
    case 1: document += Array(numbers[Int(random.next() % UInt64(numbers.count))].utf8)
    case 2: document += Array(["true", "false", "null"][Int(random.next() % 3)].utf8)
    default: document += Array("\"s\(random.next() % 1000)\"".utf8)
    }
  }
}
