import Foundation
import LaunchJSON
import LaunchOrchestrator

/// The launches `export` reads from its report files, one at a time: a file's report (or
/// history entry) when it is asked for the next launch, a JSON Lines file's lines one by one
/// through a fixed buffer. What it holds between launches does not grow with the reports:
/// the first few notes and skips and their counts, and the trace id of each launch given
/// (a report given twice is exported once).
struct ExportReader {
  /// The first ``shown`` lines of a kind, and how many there were.
  struct Lines {
    /// How many are kept to be shown.
    static let shown = 5

    private(set) var first: [String] = []
    private(set) var count = 0

    mutating func append(_ line: String) {
      if first.count < Self.shown { first.append(line) }
      count += 1
    }
  }

  /// Reports that could not be read, each with why.
  private(set) var skipped = Lines()
  /// What people should know of the launches given: a duplicate, a report placed in time by
  /// its file.
  private(set) var notes = Lines()
  /// How many launches were given.
  private(set) var count = 0

  private let files: [String]
  private var nextFile = 0
  /// The JSON Lines file being read.
  private var lines: (file: String, reader: JSONLinesReader, modified: Date)?
  /// The place of the first of each trace, by its id.
  private var seen: [String: String] = [:]
  /// The longest line of a JSON Lines file that is read: longer than any report.
  private let lineLimit: Int

  /// Reads `files` in order; `skipped` are what was passed over in folders, each with why.
  init(files: [String], skipped: [String], lineLimit: Int = StatsReader.documentLimit) {
    self.files = files
    self.lineLimit = lineLimit
    for line in skipped { self.skipped.append(line) }
  }

  /// The next launch, or `nil` when every file has been read.
  ///
  /// Each text is first read by the scanner `stats` reads with, so that both commands refuse
  /// the same reports (an impossible time, a milestone that is not a number) with the same
  /// reason; then decoded whole.
  mutating func next() -> OTLPTrace.Launch? {
    while let (place, bytes, modified) = nextText() {
      if let launch = launch(bytes, at: place, modified: modified) {
        count += 1
        return launch
      }
    }
    return nil
  }

  /// The next report text (a file's, or a JSON Lines line that is not blank), where it is
  /// (`'file' line 3`), and its file's date.
  private mutating func nextText() -> (String, [UInt8], Date)? {
    while true {
      if let (file, reader, modified) = lines {
        do throws(JSONLinesReader.Failure) {
          while let line = try reader.next() {
            let place = "'\(file)' line \(reader.number)"
            guard case .text(let bytes) = line else {
              skipped.append(
                "\(place): it is longer than \(lineLimit) bytes, which no report is")
              continue
            }
            // Blank as `stats` sees it: any other line, a non-breaking space say, is refused.
            if StatsReader.isBlankLine(bytes) { continue }
            // As a whole file is read: its text, invalid UTF-8 repaired.
            return (place, Array(String(decoding: bytes, as: UTF8.self).utf8), modified)
          }
        } catch {
          skipped.append("'\(file)': \(error)")
        }
        self.lines = nil
      }
      guard nextFile < files.count else { return nil }
      let file = files[nextFile]
      nextFile += 1
      if StatsReader.isJSONLines(file) {
        do throws(SafeFiles.ReadProblem) {
          guard let descriptor = try SafeFiles.openRegularFile(followingLinksAt: file) else {
            skipped.append("'\(file)': it is gone")
            continue
          }
          lines = (
            file, JSONLinesReader(descriptor: descriptor, limit: lineLimit),
            Self.modified(file)
          )
        } catch {
          skipped.append("'\(file)': \(error)")
        }
        continue
      }
      let data: Data
      do {
        guard
          let read = try SafeFiles.contentsOfRegularFile(
            followingLinksAt: URL(fileURLWithPath: file), limit: StatsReader.documentLimit)
        else {
          skipped.append("'\(file)': it is gone")
          continue
        }
        data = read
      } catch {
        skipped.append("'\(file)': \(error)")
        continue
      }
      // An empty file is refused ("it is empty"), as `stats` refuses it.
      let text = String(decoding: data, as: UTF8.self)
      return ("'\(file)'", Array(text.utf8), Self.modified(file))
    }
  }

  /// When `file` was last changed, for a report that does not say when its launch started.
  private static func modified(_ file: String) -> Date {
    (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
      ?? Date()
  }

  /// The launch of the report or history entry `bytes`, found at `place` in a file dated
  /// `modified`; `nil` when it is skipped or a duplicate, which is noted.
  private mutating func launch(_ bytes: [UInt8], at place: String, modified: Date)
    -> OTLPTrace.Launch?
  {
    let scanned = bytes.withUnsafeBufferPointer { buffer in
      Result { () throws(ReportScanner.Refusal) in try ReportScanner.scan(buffer) }
    }
    if case .failure(let refusal) = scanned {
      skipped.append("\(place): \(refusal.reason)")
      return nil
    }
    do {
      let root = try JSONParser.parse(bytes).root
      let launch: OTLPTrace.Launch
      let start: String
      if let entry = try HistoryEntry.read(root) {
        // Recorded when the run ended: it started its real duration before.
        let recorded = ReportDate.date(entry.recordedAt) ?? modified
        launch = OTLPTrace.Launch(
          report: entry.report,
          fallbackStart: recorded.addingTimeInterval(-entry.report.wallDuration.seconds))
        start = "the time its history entry was recorded"
      } else {
        let report = try LaunchReport(json: root)
        launch = OTLPTrace.Launch(
          report: report,
          fallbackStart: modified.addingTimeInterval(-report.wallDuration.seconds))
        start = "the file's modification time, less the launch's duration"
      }
      if let problem = OTLPTrace.refusal(of: launch.report) {
        skipped.append("\(place): \(problem)")
        return nil
      }
      let id = launch.traceID
      if let first = seen[id] {
        notes.append("\(place) is the same launch as \(first); it is exported once.")
        return nil
      }
      seen[id] = place
      if launch.report.startedAt == nil {
        notes.append(
          "\(place) has no 'startedAt' (a report before format 6); its launch is placed at \(start)."
        )
      }
      return launch
    } catch {
      skipped.append("\(place): it is not a launch report (\(error))")
      return nil
    }
  }
}
