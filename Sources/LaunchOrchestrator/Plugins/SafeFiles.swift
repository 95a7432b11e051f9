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
    do {
      try FileManager.default.moveItem(at: url, to: destination)
    } catch {
      throw explain(error, writing: url, doing: "move '\(url.path)' aside")
    }
    return destination
  }

  /// Writes `data` to a temporary file beside `url` and renames it over `url`, so a reader
  /// (or a crash) sees the old file or the new one, never a partial one.
  public static func writeAtomically(_ data: Data, to url: URL) throws {
    do {
      try data.write(to: url, options: .atomic)
    } catch {
      throw explain(error, writing: url, doing: "rewrite '\(url.path)'")
    }
  }

  /// Foundation's errors name a permission or an errno, not the folder; a folder that cannot
  /// be written or a full disk is what people can fix, so it is named. Other errors pass
  /// through.
  private static func explain(_ error: any Error, writing url: URL, doing action: String)
    -> any Error
  {
    guard let problem = writeProblem(in: url.deletingLastPathComponent()) else { return error }
    return StepFailure(
      "cannot \(action): \(problem.reason), so the file was left as it was; \(problem.advice)")
  }

  /// Why files cannot be written in `folder`, when the reason is one people can act on: the
  /// folder is not writable, or the disk holding it is full (under 1 MiB free).
  public static func writeProblem(in folder: URL) -> (reason: String, advice: String)? {
    let path = folder.path
    if !FileManager.default.isWritableFile(atPath: path) {
      return ("its folder '\(path)' is not writable", "make the folder writable")
    }
    let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path)
    if let free = (attributes?[.systemFreeSize] as? NSNumber)?.int64Value, free < 1 << 20 {
      return (
        "the disk holding its folder '\(path)' is full (\(free / 1024) KiB free)",
        "free some space on it"
      )
    }
    return nil
  }
}
