import Foundation
import LaunchOrchestrator

/// Formats times for people: `1.234s`.
enum TimeText {
  /// The seconds to three decimals, as `String(format: "%.3fs")` writes them.
  static func seconds(_ duration: Duration) -> String {
    fixed(duration.seconds, places: 3, unit: "s")
  }

  /// `value` to `places` decimals (at most 6), then `unit`, as `String(format:)` writes it
  /// with `%.<places>f` (`%` as a unit is written as it is, not as a format's `%%`).
  ///
  /// Written here, digit by digit, for what a launch's times are: `String(format:)` goes
  /// through NSString's formatter, and `plan` on 10,000 steps spent a seventh of its time
  /// there, `compare` as much.
  static func fixed(_ value: Double, places: Int, unit: StaticString = "") -> String {
    guard let units = units(of: value, places: places) else {
      return String(format: "%.\(places)f", value) + unit.description
    }
    // Bytes written in place, not interpolated: `plan` writes three times for each step.
    return String(unsafeUninitializedCapacity: 24 + unit.utf8CodeUnitCount) { text in
      write(units, negative: value.sign == .minus, places: places, unit: unit, into: text)
    }
  }

  /// Appends ``seconds(_:)`` of `duration` to `bytes`, without making a `String`: `plan`
  /// writes three times for each step of its table and timeline.
  static func appendSeconds(_ duration: Duration, to bytes: inout [UInt8]) {
    appendFixed(duration.seconds, places: 3, unit: "s", to: &bytes)
  }

  /// Appends ``fixed(_:places:unit:)`` to `bytes`.
  static func appendFixed(
    _ value: Double, places: Int, unit: StaticString = "", to bytes: inout [UInt8]
  ) {
    guard let units = units(of: value, places: places) else {
      bytes.append(contentsOf: fixed(value, places: places, unit: unit).utf8)
      return
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24 + unit.utf8CodeUnitCount) {
      let count = write(units, negative: value.sign == .minus, places: places, unit: unit, into: $0)
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count]))
    }
  }

  /// `value`'s magnitude in units of its last decimal place, rounded as `%f` rounds; `nil`
  /// when it is not finite or those units are no longer whole (beyond 2^52 of them).
  private static func units(of value: Double, places: Int) -> Int? {
    let scale = powersOfTen[places]
    guard value.isFinite, value.magnitude < 0x1p52 / Double(scale) else { return nil }
    return roundedUnits(value.magnitude, scale: scale)
  }

  /// Writes `units` (of `places` decimals) as `%f` writes them, then `unit`, into `text`,
  /// which has room for them; returns how many bytes it wrote.
  private static func write(
    _ units: Int, negative: Bool, places: Int, unit: StaticString,
    into text: UnsafeMutableBufferPointer<UInt8>
  ) -> Int {
    let scale = powersOfTen[places]
    var count = 0
    // `%f` keeps the sign of a negative value that rounds to zero: `-0.000`.
    if negative {
      text[count] = UInt8(ascii: "-")
      count += 1
    }
    var digits = 1
    var power = 10
    while units / scale >= power {
      digits += 1
      power *= 10
    }
    var whole = units / scale
    for position in (count..<count + digits).reversed() {
      text[position] = UInt8(ascii: "0") + UInt8(whole % 10)
      whole /= 10
    }
    count += digits
    if places > 0 {
      text[count] = UInt8(ascii: ".")
      var fraction = units % scale
      for position in (count + 1...count + places).reversed() {
        text[position] = UInt8(ascii: "0") + UInt8(fraction % 10)
        fraction /= 10
      }
      count += places + 1
    }
    for byte in UnsafeBufferPointer(start: unit.utf8Start, count: unit.utf8CodeUnitCount) {
      text[count] = byte
      count += 1
    }
    return count
  }

  /// Whether `value` shows as zero (or minus zero) to `places` decimals.
  static func roundsToZero(_ value: Double, places: Int) -> Bool {
    let scale = powersOfTen[places]
    guard value.isFinite, value.magnitude < 0x1p52 / Double(scale) else { return false }
    return roundedUnits(value.magnitude, scale: scale) == 0
  }

  private static let powersOfTen = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

  /// `value` in units of `1 / scale`, rounded as `%f` rounds: the exact binary value to the
  /// nearest, a tie to even.
  private static func roundedUnits(_ value: Double, scale: Int) -> Int {
    let factor = Double(scale)
    let scaled = value * factor
    var rounded = scaled.rounded(.toNearestOrEven)
    if scaled - scaled.rounded(.down) == 0.5 {
      // The product itself may have been rounded onto the tie: what it left out (exact, by a
      // fused multiply-add) says which side of the tie the value really lies on.
      let error = (-scaled).addingProduct(value, factor)
      if error > 0 { rounded = scaled.rounded(.up) }
      if error < 0 { rounded = scaled.rounded(.down) }
    }
    return Int(rounded)
  }

  static func padded(_ duration: Duration, width: Int = 8) -> String {
    let text = seconds(duration)
    return String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
