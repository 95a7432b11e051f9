import Foundation
import LaunchOrchestrator

/// Where the CLI writes: standard output and standard error, unbuffered, line by line.
struct Console: Sendable {
  static let standard = Console()

  func out(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
  }

  /// Writes `text` as it is, without a newline.
  func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
  }

  /// Whether stdout is an interactive terminal that is not a CI log.
  static var isInteractive: Bool {
    isatty(STDOUT_FILENO) == 1
      && ProcessInfo.processInfo.environment["CI"].map { $0.isEmpty || $0 == "false" } ?? true
  }

  func err(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }
}

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
