import Foundation
import LaunchOrchestrator

/// Formats times for people: `1.234s`.
enum TimeText {
  /// The seconds to three decimals, as `String(format: "%.3fs")` writes them.
  static func seconds(_ duration: Duration) -> String {
    let value = duration.seconds
    // Written here, digit by digit, for what a launch's times are: `String(format:)` goes
    // through NSString's formatter, and `plan` on 10,000 steps spent a seventh of its time
    // there. Beyond 2^52 thousandths, thousandths are no longer whole.
    guard value.isFinite, value.magnitude < 0x1p52 / 1000 else {
      return String(format: "%.3fs", value)
    }
    let thousandths = roundedThousandths(value.magnitude)
    // Bytes written in place, not interpolated: `plan` writes three times for each step.
    return String(unsafeUninitializedCapacity: 24) { text in
      var count = 0
      // `%f` keeps the sign of a negative value that rounds to zero: `-0.000`.
      if value.sign == .minus {
        text[count] = UInt8(ascii: "-")
        count += 1
      }
      var digits = 1
      var power = 10
      while thousandths / 1000 >= power {
        digits += 1
        power *= 10
      }
      var whole = thousandths / 1000
      for position in (count..<count + digits).reversed() {
        text[position] = UInt8(ascii: "0") + UInt8(whole % 10)
        whole /= 10
      }
      count += digits
      text[count] = UInt8(ascii: ".")
      let fraction = thousandths % 1000
      text[count + 1] = UInt8(ascii: "0") + UInt8(fraction / 100)
      text[count + 2] = UInt8(ascii: "0") + UInt8(fraction / 10 % 10)
      text[count + 3] = UInt8(ascii: "0") + UInt8(fraction % 10)
      text[count + 4] = UInt8(ascii: "s")
      return count + 5
    }
  }

  /// `value` in thousandths, rounded as `%.3f` rounds: the exact binary value to the nearest,
  /// a tie to even.
  private static func roundedThousandths(_ value: Double) -> Int {
    let scaled = value * 1000
    var rounded = scaled.rounded(.toNearestOrEven)
    if scaled - scaled.rounded(.down) == 0.5 {
      // The product itself may have been rounded onto the tie: what it left out (exact, by a
      // fused multiply-add) says which side of the tie the value really lies on.
      let error = (-scaled).addingProduct(value, 1000)
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
