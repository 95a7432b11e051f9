import Foundation
import Testing

@testable import OrchestrateCLI

@Suite("Times and figures as text")
struct TimeTextTests {
  /// Values of every size a launch's times and changes take, the ties `%f` rounds to even
  /// and the doubles on either side of them, zeros and negatives.
  private static func values(places: Int) -> [Double] {
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [0, -0.0, 1, -1, 0.5, 1.5, 2.5, 123_456.789, 1e-7, -1e-7, 4e12]
    let unit = pow(10, -Double(places))
    for whole in 0..<2_000 {
      let tie = (Double(whole) + 0.5) * unit
      values += [tie, tie.nextUp, tie.nextDown, -tie]
    }
    for exponent in -7...6 {
      for _ in 0..<2_000 {
        values.append(Double.random(in: -1...1, using: &generator) * pow(10, Double(exponent)))
      }
    }
    return values
  }

  @Test(arguments: 0...6)
  func writesWhatStringFormatWrites(places: Int) {
    var differing: [String] = []
    for value in Self.values(places: places) {
      let expected = String(format: "%.\(places)f", value) + "s"
      let written = TimeText.fixed(value, places: places, unit: "s")
      if written != expected { differing.append("\(value): \(written), not \(expected)") }
    }
    #expect(differing.prefix(5) == [])
  }

  @Test(arguments: 0...6)
  func appendsWhatItWrites(places: Int) {
    var differing: [String] = []
    for value in Self.values(places: places) + [.infinity, -.infinity, .nan, 1e300] {
      var bytes: [UInt8] = Array("<".utf8)
      TimeText.appendFixed(value, places: places, unit: "s", to: &bytes)
      let expected = "<" + TimeText.fixed(value, places: places, unit: "s")
      let appended = String(decoding: bytes, as: UTF8.self)
      if appended != expected { differing.append("\(value): \(appended), not \(expected)") }
    }
    #expect(differing.prefix(5) == [])
    var seconds: [UInt8] = []
    TimeText.appendSeconds(.milliseconds(1_500), to: &seconds)
    #expect(String(decoding: seconds, as: UTF8.self) == "1.500s")
  }

  @Test(arguments: 0...6)
  func saysWhatRoundsToZeroAsStringFormatShowsIt(places: Int) {
    var differing: [Double] = []
    for value in Self.values(places: places) {
      let shown = String(format: "%.\(places)f", value)
      let showsZero = !shown.contains { $0 != "0" && $0.isNumber }
      if TimeText.roundsToZero(value, places: places) != showsZero { differing.append(value) }
    }
    #expect(differing.prefix(5) == [])
  }

  @Test func writesThePercentSignAsAUnit() {
    #expect(TimeText.fixed(12.345, places: 1, unit: "%") == "12.3%")
    #expect(TimeText.fixed(.infinity, places: 1, unit: "%") == "inf%")
    #expect(TimeText.seconds(.milliseconds(1_500)) == "1.500s")
  }
}
