import Foundation
import Testing

@testable import LaunchJSON
@testable import LaunchOrchestrator

@Suite("JSON")
struct JSONParserTests {
  private func parse(_ text: String) throws -> JSONValue {
    try JSONParser.parse(Array(text.utf8)).root
  }

  private func error(_ text: String) -> String? {
    do {
      _ = try JSONParser.parse(Array(text.utf8))
      return nil
    } catch {
      return "\(error.offset): \(error.message)"
    }
  }

  @Test func parsesEveryKindOfValue() throws {
    let value = try parse(#"{"a": [1, -2.5e2, true, false, null], "b": {"c": "d"}}"#)
    #expect(value == ["a": [1, -250, true, false, nil], "b": ["c": "d"]])
    #expect(value["a"]?.offset == 6)
  }

  /// Offsets are kept without an optional's byte: set, cleared and read back as optionals.
  @Test func offsetsAreOptionalAndSettable() throws {
    var value = try parse(#"{"key": [7]}"#)
    #expect(value.offset == 0)
    var member = try #require(value.members?.first)
    #expect(member.keyOffset == 1 && member.value.offset == 8)
    #expect(member.value.elements?.first?.offset == 9)
    member.keyOffset = nil
    member.value.offset = 0
    #expect(member.keyOffset == nil && member.value.offset == 0)
    member.keyOffset = Int.max
    #expect(member.keyOffset == Int.max)
    value.offset = nil
    #expect(value.offset == nil)
    value.offset = -3
    #expect(value.offset == -3)
    #expect(JSONValue(.null).offset == nil && JSONValue(.null, offset: 5).offset == 5)
    #expect(JSONValue(number: 1, text: "1").offset == nil)
    #expect(JSONMember(key: "k", value: JSONValue(.null)).keyOffset == nil)
    #expect(JSONMember(key: "k", keyOffset: 4, value: JSONValue(.null)).keyOffset == 4)
    // The one offset no source has stands for none.
    #expect(JSONValue(.null, offset: Int.min).offset == nil)
  }

  @Test func decodesEscapesAndSurrogatePairs() throws {
    #expect(
      try parse(#""tab\there \"q\" \\ \/ \u00e9 \ud83d\ude80""#) == "tab\there \"q\" \\ / é 🚀")
  }

  @Test func rejectsMalformedInputWithItsOffset() {
    #expect(
      error("[1,]")
        == "2: a trailing comma before ']'; remove it, as JSON allows no comma after the last item")
    #expect(error("01") == "0: a number cannot have leading zeros")
    #expect(error("\"abc") == "0: unterminated string")
    #expect(error("\"\\ud800\"") == "1: unpaired UTF-16 surrogate in a string")
    #expect(error("1e999") == "0: the number 1e999 is out of range")
    #expect(error("{} x") == "3: unexpected character 'x' after the end of the document")
    #expect(error("\"a\u{01}\"") == "2: a control character must be escaped inside a string")
    #expect(error("tru") == "0: unexpected character 't'; expected a value")
  }

  @Test func namesATrailingCommaAtTheComma() {
    #expect(
      error("{\"a\": 1 , \n}")
        == "8: a trailing comma before '}'; remove it, as JSON allows no comma after the last item")
    #expect(
      error("[[1,], 2]")
        == "3: a trailing comma before ']'; remove it, as JSON allows no comma after the last item")
    #expect(error("[1,,2]") == "3: unexpected character ','; expected a value")
  }

  @Test func skipsAUTF8ByteOrderMarkAtTheStartOnly() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let document = try JSONParser.parse(bom + Array(#"{"a": 1}"#.utf8))
    #expect(document.root == ["a": 1])
    #expect(document.root["a"]?.offset == 9, "offsets still count the mark's bytes")
    #expect(
      throws: JSONSyntaxError(offset: 0, message: "the file is empty; expected a JSON object")
    ) { try JSONParser.parse(bom) }
    #expect(
      throws: JSONSyntaxError(
        offset: 6, message: "unexpected byte-order mark (U+FEFF); expected a value")
    ) { try JSONParser.parse(Array(#"{"a": "#.utf8) + bom + Array("1}".utf8)) }
    #expect(try parse("\"\u{FEFF}\"") == "\u{FEFF}", "inside a string it is a character like any")
  }

  @Test func asksForUTF8WhenTheFileIsUTF16() {
    let message = "the file is UTF-16 text; save it as UTF-8, which JSON requires"
    for bom: [UInt8] in [[0xFF, 0xFE], [0xFE, 0xFF]] {
      #expect(throws: JSONSyntaxError(offset: 0, message: message)) {
        try JSONParser.parse(bom + Array("{}".utf16).flatMap { [UInt8($0 & 0xFF), 0] })
      }
    }
    // Without a mark, as Windows tools write it: told by the NUL byte of the first character.
    let text = Array(" {\"version\": 1}".utf16)
    let littleEndian = text.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    let bigEndian = text.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    for bytes in [littleEndian, bigEndian, Array(littleEndian.prefix(2))] {
      #expect(throws: JSONSyntaxError(offset: 0, message: message)) { try JSONParser.parse(bytes) }
    }
  }

  @Test func asksForUTF8WhenTheFileIsUTF32() {
    let message = "the file is UTF-32 text; save it as UTF-8, which JSON requires"
    let scalars = "\u{FEFF}{}".unicodeScalars.map(\.value)
    let littleEndian = scalars.flatMap { value in (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) }
    }
    let bigEndian = scalars.flatMap { value in
      (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) }
    }
    // With the mark (the little-endian one starts as UTF-16's does) and without it.
    for bytes in [
      littleEndian, bigEndian, Array(littleEndian.dropFirst(4)), Array(bigEndian.dropFirst(4)),
    ] {
      #expect(throws: JSONSyntaxError(offset: 0, message: message)) { try JSONParser.parse(bytes) }
    }
  }

  @Test func namesACommentWhereAKeyValueOrSeparatorBelongs() {
    let message = "remove it, as JSON allows no comments"
    #expect(error("{\n  // the launch\n  \"a\": 1 }") == "4: a comment ('//'); \(message)")
    #expect(error("[ /* none */ ]") == "2: a comment ('/* */'); \(message)")
    #expect(error("{\"a\": /* seconds */ 1}") == "6: a comment ('/* */'); \(message)")
    #expect(error("{\"a\": 1 // one\n}") == "8: a comment ('//'); \(message)")
    #expect(error("{\"a\" /* key */ : 1}") == "5: a comment ('/* */'); \(message)")
    #expect(error("{} // end") == "3: a comment ('//'); \(message)")
    // A lone slash is no comment.
    #expect(error("[/]") == "1: unexpected character '/'; expected a value")
    #expect(error("{\"a\": 1}/") == "8: unexpected character '/' after the end of the document")
  }

  @Test func keepsTheFirstOfDuplicateKeysAndReportsTheRest() throws {
    let document = try JSONParser.parse(Array(#"{"k": 1, "o": {"k": 2, "k": 3}}"#.utf8))
    #expect(document.root["o"]?["k"] == 2)
    #expect(document.duplicateKeys.map(\.path.description) == ["o"])
  }

  @Test func findsDuplicateKeysInLargeObjectsToo() throws {
    let members = (0..<40).map { #""k\#($0)": \#($0)"# } + [#""k3": -1"#, #""k39": -1"#]
    let document = try JSONParser.parse(Array("{ \(members.joined(separator: ", ")) }".utf8))
    #expect(document.root.members?.count == 40)
    #expect(document.root["k3"] == JSONValue(.number(3)))
    #expect(document.duplicateKeys.map(\.key) == ["k3", "k39"])
  }

  @Test func comparesKeysAsTheirBytesNotTheirNormalisedText() throws {
    // "é" precomposed and "e" with a combining accent: equal as Swift strings, two keys in
    // JSON. In small and large objects alike, neither is a duplicate of the other.
    let composed = "\u{E9}"
    let decomposed = "e\u{301}"
    for padding in [0, 40] {
      let members =
        (0..<padding).map { #""k\#($0)": 0"# } + [#""\#(composed)": 1"#, #""\#(decomposed)": 2"#]
      let document = try JSONParser.parse(Array("{ \(members.joined(separator: ", ")) }".utf8))
      #expect(document.duplicateKeys.isEmpty, "with \(padding) other keys")
      #expect(document.root.members?.count == padding + 2)
      #expect(document.root[composed] == 1)
      #expect(document.root[decomposed] == 2)
    }
  }

  @Test func writesWhatItParses() throws {
    let text = #"{"name": "a\"b", "list": [1, 2.5, null], "empty": {}, "none": []}"#
    #expect(try parse(JSONWriter.compact(try parse(text))) == (try parse(text)))
    #expect(JSONWriter.prettyPrinted(["a": [1]]) == "{\n  \"a\": [\n    1\n  ]\n}\n")
  }

  @Test func writesParsedNumbersAsTheyWereWritten() throws {
    let text = "[9007199254740993, 1e-7, 1.50, -0]"
    #expect(JSONWriter.compact(try parse(text)) == text)
    // Built in code, a number has no text: the writer formats its Double.
    #expect(JSONWriter.compact([2.5, 3]) == "[2.5, 3]")
  }

  @Test func keepsEachNumbersTextAsWritten() throws {
    let root = try parse(
      #"[1e-7, 9007199254740993, -0.0, 1E+2, 0.1000000000000000055511151231257827]"#)
    #expect(
      root.elements?.map(\.numberText) == [
        "1e-7", "9007199254740993", "-0.0", "1E+2", "0.1000000000000000055511151231257827",
      ])
    // The kind stays a Double, as before, and equality still compares values.
    #expect(root.elements?[1].kind == .number(9_007_199_254_740_992))
    #expect(try parse("1.0") == 1)
  }

  @Test func readsIntegersExactlyBeyondTwoToThe53() throws {
    #expect(try parse("9007199254740993").exactInteger(Int64.self) == 9_007_199_254_740_993)
    #expect(try parse("18446744073709551615").exactInteger(UInt64.self) == .max)
    #expect(try parse("-9223372036854775808").exactInteger(Int64.self) == .min)
    #expect(try parse("1e2").exactInteger(Int.self) == 100)
    #expect(try parse("1.0").exactInteger(Int8.self) == 1)
    #expect(try parse("128").exactInteger(Int8.self) == nil)
    #expect(try parse("1.5").exactInteger(Int.self) == nil)
    // Read from the text, a number written with an exponent keeps its digits too.
    #expect(try parse("9.007199254740993e15").exactInteger(Int64.self) == 9_007_199_254_740_993)
    #expect(try parse("1e-2").exactInteger(Int.self) == nil)
    #expect(try parse("0.0e5").exactInteger(UInt8.self) == 0)
    // Built in code, a value has no text; a Double up to 2^53 is still exact.
    #expect(JSONValue(.number(42)).exactInteger(Int.self) == 42)
    #expect(try parse(#""1""#).exactInteger(Int.self) == nil)
  }

  /// Up to 15 digits the integer is read from the `Double` the parser made; from 16, where a
  /// `Double` no longer holds every integer, from the text.
  @Test func readsShortIntegersAsExactlyAsLongOnes() throws {
    #expect(try parse("999999999999999").exactInteger(Int64.self) == 999_999_999_999_999)
    #expect(try parse("-999999999999999").exactInteger(Int64.self) == -999_999_999_999_999)
    #expect(try parse("9999999999999999").exactInteger(Int64.self) == 9_999_999_999_999_999)
    #expect(try parse("-0").exactInteger(Int.self) == 0)
    #expect(try parse("-5").integer(UInt8.self) == .outOfRange)
    #expect(try parse("300").integer(UInt8.self) == .outOfRange)
    #expect(try parse("-128").integer(Int8.self) == .exact(-128))
    #expect(try parse("7").integer(Int.self) == .exact(7))
    // The text is what is read, as for longer numbers, whatever the value beside it says.
    #expect(JSONValue(number: 1.5, text: "2").integer(Int.self) == .exact(2))
    var changed = try parse("5")
    changed.kind = .number(7)
    #expect(changed.integer(Int.self) == .exact(5))
  }

  @Test func writesIntegersBuiltInCodeAsTheirDigits() throws {
    let large = JSONValue(integer: Int64.max)
    #expect(JSONWriter.compact(large) == "9223372036854775807")
    #expect(try parse(JSONWriter.compact(large)).exactInteger(Int64.self) == .max)
    #expect(JSONValue(integer: UInt64.max).exactInteger(UInt64.self) == .max)
    let literal: JSONValue = 3
    #expect(literal.numberText == "3")
  }
}

@Suite("Durations")
struct DurationTextTests {
  @Test(arguments: [
    ("250ms", Duration.milliseconds(250)), ("2s", .seconds(2)), ("1.5m", .seconds(90)),
    ("24h", .seconds(86_400)),
    ("0s", .zero), ("100us", .microseconds(100)), ("1d", .seconds(86_400)),
  ])
  func parsesDurationsWithUnits(text: String, expected: Duration) {
    #expect(DurationText.parse(text) == expected)
  }

  @Test(arguments: ["", "5", "5 seconds", "-1s", "1.2.3s", "s", "1sec", "ms"])
  func rejectsWhatIsNotADuration(text: String) {
    #expect(DurationText.parse(text) == nil)
  }

  /// The schema's pattern for a duration string and the parser are one fact: an editor
  /// that flags what validation accepts (`.5s`), or the reverse, misleads.
  @Test func theSchemasPatternAcceptsWhatTheParserAccepts() throws {
    let schema = ManifestSchema.json(for: .testKinds)
    let pattern = try #require(
      schema.value(
        at: JSONPath.root.appending("$defs").appending("duration").appending("oneOf")
          .appending(0).appending("pattern"))?.stringValue)
    let expression = try NSRegularExpression(pattern: pattern)
    for text in [
      "250ms", "2s", " 1.5 m ", ".5s", "5.s", "0s", "100us", "1d", "", "5", "5 seconds", "-1s",
      "1.2.3s", "s", "1sec", "ms", ".s", "1..5s", "1e3s", "1,5s", "2 h", "3H",
    ] {
      let matches =
        expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
      #expect(matches == (DurationText.parse(text) != nil), "'\(text)'")
    }
  }

  @Test func formatsCompactly() {
    #expect(DurationText.format(.milliseconds(250)) == "250ms")
    #expect(DurationText.format(.milliseconds(1500)) == "1.5s")
    #expect(DurationText.format(.seconds(90)) == "1.5m")
    #expect(DurationText.format(.seconds(7200)) == "2h")
    #expect(DurationText.format(.zero) == "0s")
  }
}
