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

private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
