import Foundation
import LaunchJSON
import LaunchOrchestrator

/// `orchestrate export otlp REPORT... [-o FILE]`: launches as OpenTelemetry traces.
struct ExportCommand: Command {
  let options: ExportOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    // The output is judged before any report is read, by the rules `run --report` follows.
    let outputs = try OutputFiles(
      [(.otlp, options.output ?? "-", options.$output)], json: nil,
      command: ExportOptions.spec, moment: "before reading any report")
    let (items, passedOver) = try StatsReader.items(for: options.reports)
    try outputs.refuse(options.reports.map { ($0, "which 'export' reads") })
    let files = StatsReader.files(items)
    try outputs.refuseHardLinks(to: files, owner: "which 'export' reads")
    for note in outputs.notes { console.err(note) }
    var launches: [OTLPTrace.Launch] = []
    var skipped = passedOver
    var notes: [String] = []
    var seen: [String: String] = [:]
    for file in files {
      read(file, into: &launches, skipped: &skipped, notes: &notes, seen: &seen)
    }
    for line in skipped.prefix(5) { console.err("Note: skipped \(line)") }
    if skipped.count > 5 { console.err("Note: and \(skipped.count - 5) more skipped") }
    for line in notes.prefix(5) { console.err("Note: \(line)") }
    if notes.count > 5 { console.err("Note: and \(notes.count - 5) more notes like these") }
    guard !launches.isEmpty else {
      throw CLIError(
        message:
          "No report could be read from \(options.reports.map { "'\($0)'" }.joined(separator: ", ")); nothing was exported.",
        exitCode: .invalidManifest)
    }
    let text = JSONWriter.compact(OTLPTrace.request(launches)) + "\n"
    try outputs.write({ _ in text }, console: console)
    if let output = options.output, output != "-" {
      console.err(
        "Exported \(Grammar.count(launches.count, "launch", plural: "launches")) to '\(output)'.")
    }
    return .success
  }

  /// Reads the reports of `file`: a report, a history entry, or one per line.
  ///
  /// Each text is first read by the scanner `stats` reads with, so that both commands refuse
  /// the same reports (an impossible time, a milestone that is not a number) with the same
  /// reason; then decoded whole.
  private func read(
    _ file: String, into launches: inout [OTLPTrace.Launch], skipped: inout [String],
    notes: inout [String], seen: inout [String: String]
  ) {
    let url = URL(fileURLWithPath: file)
    let data: Data
    do {
      guard
        let read = try SafeFiles.contentsOfRegularFile(
          followingLinksAt: url, limit: StatsReader.documentLimit)
      else {
        skipped.append("'\(file)': it is gone")
        return
      }
      data = read
    } catch {
      skipped.append("'\(file)': \(error)")
      return
    }
    let modified =
      (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
      ?? Date()
    let isLines = StatsReader.isJSONLines(file)
    let texts =
      isLines
      ? data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
      }
      : [String(decoding: data, as: UTF8.self)]
    for (index, text) in texts.enumerated() where !text.allSatisfy(\.isWhitespace) {
      let place = isLines ? "'\(file)' line \(index + 1)" : "'\(file)'"
      let bytes = Array(text.utf8)
      let scanned = bytes.withUnsafeBufferPointer { buffer in
        Result { () throws(ReportScanner.Refusal) in try ReportScanner.scan(buffer) }
      }
      if case .failure(let refusal) = scanned {
        skipped.append("\(place): \(refusal.reason)")
        continue
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
          continue
        }
        let id = OTLPTrace.traceID(of: launch.report)
        if let first = seen[id] {
          notes.append("\(place) is the same launch as \(first); it is exported once.")
          continue
        }
        seen[id] = place
        if launch.report.startedAt == nil {
          notes.append(
            "\(place) has no 'startedAt' (a report before format 6); its launch is placed at \(start)."
          )
        }
        launches.append(launch)
      } catch {
        skipped.append("\(place): it is not a launch report (\(error))")
      }
    }
  }
}
