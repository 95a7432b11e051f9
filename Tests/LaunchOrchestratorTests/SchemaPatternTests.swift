import Testing

@testable import LaunchOrchestrator

/// The JSON Schema's patterns say what the manifest's reader reads: a string an editor passes
/// is one `orchestrate validate` accepts, and the other way round.
@Suite("Schema patterns", .timeLimit(.minutes(10)))
struct SchemaPatternTests {
  /// The units the patterns spell out are those durations are read with, of the same length.
  @Test func theDurationPatternsUnitsAreTheReadersOwn() {
    for unit in DurationPattern.units {
      #expect(DurationText.parse("3\(unit.name)") == DurationText.seconds(3 * unit.seconds.value))
    }
    for other in ["ns", "sec", "min", "w", "y", "S"] {
      #expect(DurationText.parse("3\(other)") == nil, "\(other)")
    }
  }

  /// A string matches the duration pattern when the reader reads it as a duration under its
  /// limit (about a century), and the positive one when that duration is also above zero (a
  /// `timeout`, a `maxAge`): near each unit's limits, at half a nanosecond, and at random.
  @Test func theDurationPatternsMatchWhatTheReaderReads() throws {
    let any = try Regex(DurationPattern.pattern(positive: false))
    let positive = try Regex(DurationPattern.pattern(positive: true))
    var generator = SplitMix(seed: 0x5eed)
    let texts = Self.boundaries + (0..<3000).map { _ in Self.duration(&generator) }
    for text in texts {
      let read = DurationText.parse(text)
      #expect((text.wholeMatch(of: any) != nil) == (read != nil), "'\(text)'")
      #expect(
        (text.wholeMatch(of: positive) != nil) == (read.map { $0 > .zero } ?? false), "'\(text)'")
    }
  }

  /// The version pattern matches the versions `app.version` takes (`1.10.0`, `2.3-beta.2`),
  /// and nothing the reader refuses (`x`, `1..0`, `1.`).
  @Test func theVersionPatternMatchesWhatTheReaderCallsAVersion() throws {
    let pattern = try Regex(AppInfo.versionPattern)
    var generator = SplitMix(seed: 0x7e25)
    let alphabet = Array("0123456789aZ.-+ _é")
    let texts =
      ["1.10.0", "2.3", "1.2.0-beta.2", "1a", "x", "1..0", "1.", "1.-2", "-1", "", ".1", "1 .0"]
      + (0..<3000).map { _ in
        String(
          (0..<Int.random(in: 0...7, using: &generator)).map { _ in
            alphabet.randomElement(using: &generator)!
          })
      }
    for text in texts {
      #expect(
        (text.wholeMatch(of: pattern) != nil) == AppInfo.looksLikeVersion(text), "'\(text)'")
    }
  }

  /// Durations at each unit's limits, written up to them, past them, and around them.
  private static let boundaries = [
    "3200000000s", "3199999999s", "3199999999.999999s", " 3199999999.5 s ", "3200000000000ms",
    "3199999999999.99ms", "3200000000000000us", "3199999999999999us", "53333334m",
    "53333333.34m", "53333333.333m", "53333333.3333333m", "888888.889h", "888888.888h",
    "888889h", "37037.0371d", "37037.037d", "37037.0370d", "37037.03703d", "37037.03704d",
    "37038d", "0.0005us", "0.0004999us", "0.0000005ms", "0.00000049ms", "0.0000000005s",
    "0.0000000004999s", ".0000000005s", "0.000000000008333m", "0.000000000008334m",
    "0.0000000000001388h", "0.0000000000001389h", "0.00000000000000578703d",
    "0.00000000000000578704d", "0s", "00.000ms", "0.s", ".0s", "0", ".5s", "5.s", ".s", "1..2s",
    "2 ms", "2sec", "-1s", "1e3s", "", "s", "1.5m", "24h", "250ms",
  ]

  /// A string a manifest might hold for a duration: a whole part and a fraction of random
  /// digits, leading zeros and all, spaces around, a unit or another word.
  private static func duration(_ generator: inout SplitMix) -> String {
    func digits(_ most: Int) -> String {
      String(
        (0..<Int.random(in: 0...most, using: &generator)).map { _ in
          "0123456789".randomElement(using: &generator)!
        })
    }
    func spaces() -> String {
      String(repeating: " ", count: [0, 0, 0, 1, 2].randomElement(using: &generator)!)
    }
    let units = DurationPattern.units.map(\.name) + ["", "x", "ns"]
    var number = digits(12)
    if Bool.random(using: &generator) { number += "." + digits(12) }
    return spaces() + number + spaces() + units.randomElement(using: &generator)! + spaces()
  }
}
