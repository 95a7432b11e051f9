import Foundation

/// File operations that never lose user data, for plugins that touch user files.
public enum SafeFiles {
  /// Renames `url` to `<name>.<label>-<UTC timestamp>` beside it (adding `-2`, `-3`, ... when
  /// that name is taken) and returns the new location. Nothing is ever deleted.
  public static func moveAside(_ url: URL, label: String, now: Date = Date()) throws -> URL {
    let stamp = now.formatted(
      Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateTimeSeparator(.standard)
        .time(
          includingFractionalSeconds: false)
    ).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
    let base = "\(url.lastPathComponent).\(label)-\(stamp)"
    var destination = url.deletingLastPathComponent().appendingPathComponent(base)
    var counter = 2
    while FileManager.default.fileExists(atPath: destination.path) {
      destination = url.deletingLastPathComponent().appendingPathComponent("\(base)-\(counter)")
      counter += 1
    }
    try FileManager.default.moveItem(at: url, to: destination)
    return destination
  }

  /// Writes `data` to a temporary file beside `url` and renames it over `url`, so a reader
  /// (or a crash) sees the old file or the new one, never a partial one.
  public static func writeAtomically(_ data: Data, to url: URL) throws {
    try data.write(to: url, options: .atomic)
  }
}
