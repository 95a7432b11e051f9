import Foundation
import LaunchJSON
import Testing

@testable import LaunchOrchestrator

@Suite("JSON value decoder")
struct JSONValueDecoderTests {
  private struct Retry: Decodable, Equatable {
    var attempts: Int
    var backoff: String?
  }

  private struct Settings: Decodable, Equatable {
    var name: String
    var retry: Retry?
    var tags: [String]?
  }

  private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> (
    value: T, unused: [String]
  ) {
    let root = try JSONParser.parse(Array(json.utf8)).root
    let (value, unused) = try JSONValueDecoder.decode(type, from: root)
    return (value, unused.map { "\($0.path.appending($0.key)) known: \($0.knownKeys)" })
  }

  @Test func decodesNestedValuesAndReportsNoUnusedKeysWhenEveryKeyIsRead() throws {
    let (value, unused) = try decode(
      Settings.self, #"{ "name": "a", "retry": { "attempts": 2 }, "tags": ["x", "y"] }"#)
    #expect(value == Settings(name: "a", retry: Retry(attempts: 2), tags: ["x", "y"]))
    #expect(unused.isEmpty)
  }

  @Test func reportsUnusedKeysAtEveryLevelWithTheKeysTheTypeAskedFor() throws {
    let (_, unused) = try decode(
      Settings.self, #"{ "name": "a", "nmae": 1, "retry": { "attempts": 2, "bakcoff": "1s" } }"#)
    #expect(
      unused == [
        "nmae known: [\"name\", \"retry\", \"tags\"]",
        "retry.bakcoff known: [\"attempts\", \"backoff\"]",
      ])
  }

  @Test func tracksReadsBeyondTheSixtyFourthMember() throws {
    struct Wide: Decodable {
      var values: [String: Int]
      init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        var values: [String: Int] = [:]
        for index in 0..<100 where index != 70 {
          values["k\(index)"] = try container.decode(Int.self, forKey: AnyKey("k\(index)"))
        }
        self.values = values
      }
    }
    let members = (0..<100).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
    let (value, unused) = try decode(Wide.self, "{ \(members) }")
    #expect(value.values.count == 99)
    #expect(unused.map { $0.prefix(4) } == ["k70 "])
  }

  @Test func poolsReadsOfTheSameObjectThroughSeveralContainers() throws {
    struct Split: Decodable {
      init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self).decode(Int.self, forKey: AnyKey("a"))
        _ = try decoder.container(keyedBy: AnyKey.self).decode(Int.self, forKey: AnyKey("b"))
      }
    }
    #expect(try decode(Split.self, #"{ "a": 1, "b": 2 }"#).unused.isEmpty)
    #expect(
      try decode(Split.self, #"{ "a": 1, "b": 2, "c": 3 }"#).unused == [#"c known: ["a", "b"]"#])
  }

  @Test func namesTheParameterOfATypeMismatch() throws {
    #expect {
      _ = try decode(Settings.self, #"{ "name": "a", "retry": { "attempts": "two" } }"#)
    } throws: { error in
      guard case DecodingError.typeMismatch(_, let context) = error else { return false }
      return JSONPath(codingPath: context.codingPath).description == "retry.attempts"
    }
  }
}

@Suite("JSON value decoder scalars")
struct JSONValueDecoderScalarTests {
  /// `value` written by Foundation's `JSONEncoder` (base64 data, ISO 8601 or Unix dates),
  /// then parsed and decoded here: a round trip through real JSON text.
  private func roundTrip<T: Codable & Equatable>(
    _ value: T, dates: JSONEncoder.DateEncodingStrategy = .iso8601
  ) throws -> T {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = dates
    let text = try encoder.encode([value])
    let root = try JSONParser.parse(Array(text)).root
    return try JSONValueDecoder.decode([T].self, from: root).value[0]
  }

  private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONValueDecoder.decode(type, from: try JSONParser.parse(Array(json.utf8)).root).value
  }

  private func failure<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
    do {
      _ = try decode(type, json)
      return nil
    } catch let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context) {
      return context.debugDescription
    } catch {
      return "\(error)"
    }
  }

  @Test func roundTripsEveryFixedWidthIntegerAtItsLimits() throws {
    func check<T: FixedWidthInteger & Codable>(_ type: T.Type) throws {
      for value in [T.min, T.max, 0, 1, T.max / 3] {
        #expect(try roundTrip(value) == value, "\(T.self) \(value)")
      }
    }
    try check(Int.self)
    try check(Int8.self)
    try check(Int16.self)
    try check(Int32.self)
    try check(Int64.self)
    try check(UInt.self)
    try check(UInt8.self)
    try check(UInt16.self)
    try check(UInt32.self)
    try check(UInt64.self)
    #expect(try decode(Int128.self, "170141183460469231731687303715884105727") == .max)
    #expect(try decode(UInt128.self, "340282366920938463463374607431768211455") == .max)
    struct Wide: Decodable, Equatable {
      var signed: Int128
      var unsigned: [UInt128]
      var optional: Int128?
    }
    #expect(
      try decode(Wide.self, #"{ "signed": -5, "unsigned": [7], "optional": 9 }"#)
        == Wide(signed: -5, unsigned: [7], optional: 9))
  }

  @Test func readsIntegersBeyondTwoToThe53Exactly() throws {
    #expect(try decode(Int64.self, "9007199254740993") == 9_007_199_254_740_993)
    #expect(try decode(UInt64.self, "18446744073709551615") == .max)
    #expect(try decode(Int.self, "1e3") == 1000)
    // From the text, an exponent keeps every digit too.
    #expect(try decode(Int64.self, "9.007199254740993e15") == 9_007_199_254_740_993)
    #expect(try decode(UInt64.self, "1.8446744073709551615E+19") == .max)
    #expect(try decode(Int64.self, "-9223372036854775808") == .min)
    #expect(try decode(Int.self, "-2.50e1") == -25)
    #expect(try decode(UInt8.self, "-0") == 0)
    #expect(
      try decode(Int128.self, "1.7e38") == 170_000_000_000_000_000_000_000_000_000_000_000_000)
  }

  @Test func rejectsIntegersOutOfRangeNamingTheNumberAsWritten() {
    #expect(failure(Int8.self, "128") == "expected a whole number between -128 and 127, found 128")
    #expect(failure(UInt8.self, "-1") == "expected a whole number between 0 and 255, found -1")
    #expect(failure(Int8.self, "1e3") == "expected a whole number between -128 and 127, found 1e3")
    #expect(
      failure(Int64.self, "9223372036854775808")
        == "expected a whole number between -9223372036854775808 and 9223372036854775807, found 9223372036854775808"
    )
    #expect(
      failure(Int64.self, "-9223372036854775809")
        == "expected a whole number between -9223372036854775808 and 9223372036854775807, found -9223372036854775809"
    )
    #expect(
      failure(UInt64.self, "1e30")
        == "expected a whole number between 0 and 18446744073709551615, found 1e30")
  }

  @Test func rejectsNumbersWithAFractionNamingTheNumberAsWritten() {
    #expect(failure(Int16.self, "1.5") == "expected a whole number, found 1.5")
    #expect(failure(Int.self, "1e-3") == "expected a whole number, found 1e-3")
    #expect(
      failure(UInt64.self, "9007199254740993.5")
        == "expected a whole number, found 9007199254740993.5")
    #expect(failure(Int.self, "12.345e2") == "expected a whole number, found 12.345e2")
  }

  @Test func roundTripsFloatingPointAndDecimalNumbers() throws {
    for value: Double in [0.1, 1e-7, -2.5e300, .pi, .leastNonzeroMagnitude] {
      #expect(try roundTrip(value) == value)
    }
    for value: Float in [0.1, 1e-7, .greatestFiniteMagnitude, .pi] {
      #expect(try roundTrip(value) == value)
    }
    #expect(
      try decode(Decimal.self, "0.1000000000000000055511151231257827")
        == Decimal(
          string: "0.1000000000000000055511151231257827"))
    #expect(failure(Float.self, "1e39") == "the number 1e39 is too large for a Float")
  }

  @Test func roundTripsDataAsBase64() throws {
    let bytes = Data((0...255).map { UInt8($0) })
    #expect(try roundTrip(bytes) == bytes)
    #expect(try roundTrip(Data()) == Data())
    #expect(try decode(Data.self, #""aGVsbG8=""#) == Data("hello".utf8))
    #expect(failure(Data.self, #""not base64!""#) == "expected base64, found 'not base64!'")
  }

  @Test func decodesURLsAsFoundationDoesFromAString() throws {
    let url = try #require(URL(string: "https://example.com/a%20b?q=1#top"))
    #expect(try roundTrip(url) == url)
    #expect(try decode(URL.self, #""data/images""#) == URL(string: "data/images"))
    let foundation = try JSONDecoder().decode(URL.self, from: Data(#""data/images""#.utf8))
    #expect(try decode(URL.self, #""data/images""#) == foundation)
  }

  @Test func decodesDatesFromISO8601OrSecondsSince1970() throws {
    let date = Date(timeIntervalSince1970: 1_795_441_500)
    #expect(try roundTrip(date, dates: .iso8601) == date)
    #expect(try roundTrip(date, dates: .secondsSince1970) == date)
    #expect(try decode(Date.self, #""2026-11-23T13:45:00Z""#) == date)
    #expect(try decode(Date.self, #""2026-11-23T14:45:00+01:00""#) == date)
    #expect(
      try decode(Date.self, #""2026-11-23T13:45:00.250Z""#) == date.addingTimeInterval(0.25))
    #expect(try decode(Date.self, "1795441500.5") == date.addingTimeInterval(0.5))
    #expect(
      failure(Date.self, #""23/11/2026""#)
        == "expected an ISO 8601 date such as '2026-11-23T13:45:00Z', found '23/11/2026'")
  }

  @Test func decodesTypesThatDecodeThemselvesFromAScalar() throws {
    let id = UUID()
    #expect(try roundTrip(id) == id)
    #expect(try roundTrip("é\u{1F600}\n") == "é\u{1F600}\n")
    #expect(try roundTrip(true) == true)
  }

  /// Asks its decoder for a single value of its own type, as a scalar with no case in a
  /// decoder does: it must fail, not recurse until the stack runs out.
  private struct Opaque: Decodable {
    init(from decoder: any Decoder) throws {
      self = try decoder.singleValueContainer().decode(Opaque.self)
    }
  }

  @Test func aTypeWithNoJSONFormIsAnErrorNotARecursion() {
    #expect(
      failure(Opaque.self, "1")?.hasPrefix("Opaque has no JSON form this decoder knows") == true)
  }
}

private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
