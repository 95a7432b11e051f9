import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

/// `export otlp` writes its request as it reads the reports, one launch at a time: the same
/// bytes, notes and refusals as when it held them all.
@Suite("orchestrate export otlp, streamed", .timeLimit(.minutes(10)))
struct ExportStreamTests {
  /// The folder of mixed inputs under `Golden/export-mixed`: reports with and without
  /// `startedAt`, history entries, a JSON Lines file with blank, broken, refused, duplicated
  /// and CRLF lines and no newline at its end, a manifest, a text file, an empty file, a
  /// hidden one, and names with a bidirectional override and a C1 control character.
  private static var mixed: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("Golden/export-mixed")
  }

  /// A copy of the mixed inputs in `folder`, every file dated the same moment (a report
  /// without `startedAt` is placed by its file's date).
  private static func copyMixed(into folder: TemporaryFolder) throws -> String {
    let copy = folder.path("in")
    try FileManager.default.copyItem(atPath: mixed.path, toPath: copy)
    let moment = Date(timeIntervalSince1970: 1_795_521_600)  // 2026-11-24T12:00:00Z
    for case let relative as String in FileManager.default.enumerator(atPath: copy) ?? .init() {
      try FileManager.default.setAttributes(
        [.modificationDate: moment],
        ofItemAtPath: (copy as NSString).appendingPathComponent(relative))
    }
    return copy
  }

  /// `text` with the test's folder and this build's version in the scope written as
  /// placeholders, so that the golden files hold neither.
  private static func placeheld(_ text: String, folder: TemporaryFolder) async throws -> String {
    let version = try await Orchestrate.run(["--version"]).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)
    return text.replacingOccurrences(of: folder.url.path, with: "<folder>")
      .replacingOccurrences(
        of: #""name": "LaunchOrchestrator", "version": "\#(version)""#,
        with: #""name": "LaunchOrchestrator", "version": "<version>""#)
  }

  @Test func writesTheSameBytesAndNotesAsBeforeItStreamed() async throws {
    let folder = try TemporaryFolder()
    let input = try Self.copyMixed(into: folder)
    // The folder, and one of its files again: a duplicate across arguments.
    let arguments = [
      "export", "otlp", input, (input as NSString).appendingPathComponent("b-undated.json"),
    ]
    let toFile = try await Orchestrate.run(arguments + ["-o", folder.path("out.json")])
    #expect(toFile.status == 0, "\(toFile.stderr)")
    let written = try String(contentsOfFile: folder.path("out.json"), encoding: .utf8)
    try expectMatchesGolden(
      try await Self.placeheld(written, folder: folder), "export-mixed.otlp.json")
    try expectMatchesGolden(
      try await Self.placeheld(toFile.stderr, folder: folder), "export-mixed.stderr.txt")
    // Standard output gets the same request, with what a terminal would act on escaped.
    let toStandardOutput = try await Orchestrate.run(arguments)
    #expect(toStandardOutput.status == 0, "\(toStandardOutput.stderr)")
    try expectMatchesGolden(
      try await Self.placeheld(toStandardOutput.stdout, folder: folder), "export-mixed.stdout.json")
    #expect(
      toStandardOutput.stderr + "Exported 11 launches to '\(folder.path("out.json"))'.\n"
        == toFile.stderr)
    #expect(!FileManager.default.fileExists(atPath: folder.path("-")))
  }

  @Test func writesNothingWhenNoReportCanBeRead() async throws {
    let folder = try TemporaryFolder()
    let input = try Self.copyMixed(into: folder)
    let kept = try folder.write("out.json", "keep")
    let unreadable = ["notes.txt", "manifest.json", "z-empty.json"].map {
      (input as NSString).appendingPathComponent($0)
    }
    for output in [["-o", kept], []] {
      let result = try await Orchestrate.run(["export", "otlp"] + unreadable + output)
      #expect(result.status == 65, "\(result.stderr)")
      #expect(result.stdout.isEmpty)
      #expect(
        result.stderr.hasSuffix(
          "Error: No report could be read from \(unreadable.map { "'\($0)'" }.joined(separator: ", ")); nothing was exported.\n"
        ), "\(result.stderr)")
    }
    #expect(try String(contentsOfFile: kept, encoding: .utf8) == "keep")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == [
        "in", "out.json",
      ])
  }

  @Test func aWriteThatFailsMidwayStopsTheExportWithTheReason() async throws {
    // `/dev/full` takes no byte: a disk that fills up after the first megabyte is written.
    guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
    let folder = try TemporaryFolder()
    let input = try Self.copyMixed(into: folder)
    let line = try String(
      contentsOfFile: (input as NSString).appendingPathComponent("week.jsonl"), encoding: .utf8
    ).split(separator: "\n")[0]
    // More than a megabyte of request: 400 launches, each its own.
    let lines = (0..<400).map { line.replacingOccurrences(of: "Line1", with: "Launch\($0)") }
    let file = try folder.write("many.jsonl", lines.joined(separator: "\n"))
    let result = try await Orchestrate.run(["export", "otlp", file, "-o", "/dev/full"])
    #expect(result.status == 73, "\(result.stderr)")
    #expect(
      result.stderr.hasSuffix(
        "Error: Cannot write the OpenTelemetry trace to '/dev/full': No space left on device.\n"),
      "\(result.stderr)")
    #expect(!result.stderr.contains("Exported"))
  }
}
