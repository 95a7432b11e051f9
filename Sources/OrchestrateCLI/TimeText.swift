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
    let whole = thousandths / 1000
    let fraction = thousandths % 1000
    let digits = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
    // `%f` keeps the sign of a negative value that rounds to zero: `-0.000`.
    return "\(value.sign == .minus ? "-" : "")\(whole).\(digits)\(fraction)s"
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
