import Foundation
import LaunchOrchestrator

/// `orchestrate export otlp REPORT... [-o FILE]`: launches as OpenTelemetry traces.
///
/// The request is written as the reports are read, one launch at a time (``ExportReader``,
/// ``OTLPTrace/writeRequest(_:to:)``): a day of reports from thousands of devices takes the
/// memory of its largest report, not of all of them. Nothing is written before a first
/// launch is read, so an export that reads none writes nothing.
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
    var reader = ExportReader(files: files, skipped: passedOver)
    // The first launch is read before the output is opened; it is handed on, not kept.
    var first = reader.next()
    var failure: CLIError?
    if first != nil {
      do {
        try outputs.stream(outputs.outputs[0], console: console) {
          sink throws(OutputFiles.Sink.Failure) in
          try OTLPTrace.writeRequest(
            {
              if let launch = first {
                first = nil
                return launch
              }
              return reader.next()
            }, to: { text throws(OutputFiles.Sink.Failure) in try sink.write(text) })
        }
      } catch {
        failure = error
      }
    }
    Self.print(reader.skipped, as: "skipped", more: "more skipped", console: console)
    Self.print(reader.notes, as: nil, more: "more notes like these", console: console)
    if let failure { throw failure }
    guard reader.count > 0 else {
      throw CLIError(
        message:
          "No report could be read from \(options.reports.map { "'\($0)'" }.joined(separator: ", ")); nothing was exported.",
        exitCode: .invalidManifest)
    }
    if let output = options.output, output != "-" {
      console.err(
        "Exported \(Grammar.count(reader.count, "launch", plural: "launches")) to '\(output)'.")
    }
    return .success
  }

  /// Prints the first of `lines` as notes (`Note: skipped ...` with `kind`), then how many
  /// more there were.
  private static func print(
    _ lines: ExportReader.Lines, as kind: String?, more: String, console: Console
  ) {
    for line in lines.first { console.err("Note: \(kind.map { "\($0) " } ?? "")\(line)") }
    if lines.count > lines.first.count {
      console.err("Note: and \(lines.count - lines.first.count) \(more)")
    }
  }
}
