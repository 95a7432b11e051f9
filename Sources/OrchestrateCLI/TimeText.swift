import Foundation
import LaunchOrchestrator

/// Formats times for people: `1.234s`.
enum TimeText {
  static func seconds(_ duration: Duration) -> String {
    String(format: "%.3fs", duration.seconds)
  }

  static func padded(_ duration: Duration, width: Int = 8) -> String {
    let text = seconds(duration)
    return String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
