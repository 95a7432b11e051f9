import Foundation
import LaunchJSON
import LaunchOrchestrator

/// Where `compare` and `plan --durations` take times from: one report (a `--report` file or
/// one entry of a history folder) or a history folder, for its medians.
enum TimesSource {
  case report(LaunchReport)
  case history(HistoryFolder)

  /// Reads `path`, given to `option` (for messages: `--durations`, `<baseline>`); a folder
  /// is read as a history.
  /// - Throws: a ``CLIError``: 66 when it cannot be read, 65 when it is not a report.
  static func read(_ path: String, for option: String) throws(CLIError) -> TimesSource {
    if HistoryFolder.isFolder(path) {
      let folder = try HistoryFolder(reading: path)
      if folder.entries.isEmpty, folder.unreadable.isEmpty, !folder.others.isEmpty {
        throw notAHistory(folder, for: option)
      }
      return .history(folder)
    }
    return .report(try readReport(path, for: option))
  }

  /// The error for a folder that holds files but no run of a history: a report store's
  /// folder, say, whose reports are many launches of many manifests, not rehearsals of one.
  private static func notAHistory(_ folder: HistoryFolder, for option: String) -> CLIError {
    let stored = folder.others.filter { $0.hasPrefix("report-") && $0.hasSuffix(".json") }
    let what =
      stored.isEmpty
      ? "none of its \(Grammar.count(folder.others.count, "file")) is a run recorded by 'orchestrate run --history' (named 'launch-….json'); name a history folder or a report file"
      : "it holds no run recorded by 'orchestrate run --history' (named 'launch-….json') but \(Grammar.count(stored.count, "stored report")) ('report-….json', as a LaunchReportStore keeps them); 'orchestrate stats \(folder.path)' summarises those, and one of them can be the baseline"
    return CLIError(
      message: "'\(folder.path)' given to '\(option)' is not a history folder: \(what).",
      exitCode: .invalidManifest)
  }

  /// The largest report read, as for a history entry: far beyond any launch's.
  private static let maximumSize = 1 << 30

  /// Reads a report file, or the report in a history entry.
  static func readReport(_ path: String, for option: String) throws(CLIError) -> LaunchReport {
    try readRun(path, for: option).report
  }

  /// Reads a report file, or a history entry and the report in it.
  static func readRun(_ path: String, for option: String) throws(CLIError) -> (
    report: LaunchReport, entry: HistoryEntry?
  ) {
    if HistoryFolder.isFolder(path) {
      throw CLIError(
        message:
          "'\(path)' given to '\(option)' is a folder; name a report file (a history folder can only be the baseline).",
        exitCode: .usage)
    }
    func unreadable(_ reason: String) -> CLIError {
      CLIError(
        message: "Cannot read the report '\(path)' given to '\(option)': \(reason).",
        exitCode: .missingInput)
    }
    // A link is followed to the file it names, and what is read is one regular file: a FIFO
    // would block the command and a device never end.
    let contents: Data?
    do {
      contents = try SafeFiles.contentsOfRegularFile(
        followingLinksAt: URL(fileURLWithPath: path), limit: maximumSize)
    } catch {
      switch error.reason {
      case .notRegular(let what): throw unreadable("it is \(what), not a regular file")
      case .tooLarge(let limit): throw unreadable("it is over \(limit) bytes")
      case .unreadable(let why): throw unreadable(why.lowercased())
      }
    }
    guard let data = contents else { throw unreadable("it does not exist") }
    func refuse(_ problem: String) -> CLIError {
      CLIError(
        message:
          "The file '\(path)' given to '\(option)' is not a launch report (\(problem)); write one with 'orchestrate run --report'.",
        exitCode: .invalidManifest)
    }
    // Parsed once, whether it is a history entry or a report: parsing is most of the cost.
    guard let root = try? JSONParser.parse(Array(data)).root else {
      // Not JSON: the report reader says where, as it would for any report.
      do {
        return (try LaunchReport(jsonText: String(decoding: data, as: UTF8.self)), nil)
      } catch {
        throw refuse("\(error)")
      }
    }
    do {
      if let entry = try HistoryEntry.read(root) { return (entry.report, entry) }
    } catch {
      throw refuse(error.message)
    }
    do {
      return (try LaunchReport(json: root), nil)
    } catch {
      throw refuse("\(error)")
    }
  }
}
