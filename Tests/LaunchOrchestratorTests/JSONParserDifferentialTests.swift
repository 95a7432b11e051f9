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

  /// The keys of generated documents' members, as written between their quotes.
  private static let generatedKeys = [
    "id", "plugin", "params", "dependsOn", "k", "", "a\\\"b", "\\u0069d", "é", "duration",
  ]

  /// Strings of every length around the parser's eight-byte steps and the 16 bytes of its
  /// cache, ending at the end of the document or not, plain, non-ASCII, broken and escaped.
  @Test func stringsOfEveryLengthAndEnding() {
    JSONComparisonDocuments.stringsOfEveryLength(0...40) { expectSameOutcome($0) }
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
    JSONComparisonDocuments.largeObjectsWithDuplicates { expectSameOutcome($0) }
  }

  @Test func deepNesting() {
    JSONComparisonDocuments.deepNesting { expectSameOutcome($0) }
  }

  /// Generated documents, and the same with a byte changed, dropped, added or the end cut off.
  @Test func generatedAndDamagedDocuments() {
    JSONComparisonDocuments.generatedAndDamaged(seed: 2026, keys: Self.generatedKeys) {
      expectSameOutcome($0)
    }
  }

  /// The repository's manifests and schema, whole, cut off at every byte of the smallest,
  /// and damaged at random.
  @Test func theRepositorysManifestsWholeCutAndDamaged() throws {
    try JSONComparisonDocuments.repositorysManifests(seed: 8259, damages: 100) {
      expectSameOutcome($0)
    }
  }
}
