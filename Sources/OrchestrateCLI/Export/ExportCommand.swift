import Foundation
import LaunchOrchestrator

/// `orchestrate export otlp REPORT... [-o FILE]`: launches as OpenTelemetry traces.
struct ExportCommand: Command {
  let options: ExportOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    var launches: [OTLPTrace.Launch] = []
    var skipped: [String] = []
    for file in try files() {
      read(file, into: &launches, skipped: &skipped)
    }
    for line in skipped.prefix(5) { console.err("Note: skipped \(line)") }
    if skipped.count > 5 { console.err("Note: and \(skipped.count - 5) more skipped") }
    guard !launches.isEmpty else {
      throw CLIError(
        message:
          "No report could be read from \(options.reports.map { "'\($0)'" }.joined(separator: ", ")); nothing was exported.",
        exitCode: .invalidManifest)
    }
    let text = JSONWriter.compact(OTLPTrace.request(launches)) + "\n"
    guard let output = options.output, output != "-" else {
      console.data(Data(text.utf8))
      return .success
    }
    do {
      try SafeFiles.writeAtomically(Data(text.utf8), to: URL(fileURLWithPath: output))
    } catch {
      throw CLIError(message: "Cannot write '\(output)': \(error).", exitCode: .cannotCreate)
    }
    console.err(
      "Exported \(Grammar.count(launches.count, "launch", plural: "launches")) to '\(output)'.")
    return .success
  }

  /// The files named, and the `.json` and `.jsonl` files in the folders named, sorted.
  private func files() throws(CLIError) -> [String] {
    let (items, others) = try StatsReader.items(for: options.reports)
    _ = others
    var files: [String] = []
    for item in items {
      switch item {
      case .document(let path): files.append(path)
      case .lines(let path, _): if files.last != path { files.append(path) }
      }
    }
    return files
  }

  /// Reads the reports of `file`: a report, a history entry, or one per line.
  private func read(
    _ file: String, into launches: inout [OTLPTrace.Launch], skipped: inout [String]
  ) {
    let url = URL(fileURLWithPath: file)
    guard let data = try? Data(contentsOf: url) else {
      skipped.append("'\(file)': it cannot be read")
      return
    }
    let modified =
      (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
      ?? Date()
    let texts =
      file.hasSuffix(".jsonl")
      ? data.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        .filter { !$0.allSatisfy(\.isWhitespace) }
      : [String(decoding: data, as: UTF8.self)]
    for (index, text) in texts.enumerated() {
      let place = file.hasSuffix(".jsonl") ? "'\(file)' line \(index + 1)" : "'\(file)'"
      do {
        let root = try JSONParser.parse(Array(text.utf8)).root
        if let entry = try HistoryEntry.read(root) {
          // Recorded when the run ended: it started its real duration before.
          let recorded = ReportDate.date(entry.recordedAt) ?? modified
          launches.append(
            OTLPTrace.Launch(
              report: entry.report,
              fallbackStart: recorded.addingTimeInterval(-entry.report.wallDuration.seconds)))
        } else {
          let report = try LaunchReport(jsonText: text)
          launches.append(
            OTLPTrace.Launch(
              report: report,
              fallbackStart: modified.addingTimeInterval(-report.wallDuration.seconds)))
        }
      } catch {
        skipped.append("\(place): \(error)")
      }
    }
  }
}
