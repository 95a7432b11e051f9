import Foundation
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

/// README's exit-code table is the code's own list, and the statuses it names are the ones
/// the binary gives.
@Suite("Exit code table")
struct ExitCodeTableTests {
  private static let readme = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("README.md")
  private static let begin = "<!-- exit-codes:begin -->\n"
  private static let end = "<!-- exit-codes:end -->"

  @Test func readmesTableIsTheCodesList() throws {
    let text = try String(contentsOf: Self.readme, encoding: .utf8)
    let start = try #require(text.range(of: Self.begin))
    let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
    let generated = ExitCode.markdownTable
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
      try text.replacingCharacters(in: start.upperBound..<stop.lowerBound, with: generated)
        .write(to: Self.readme, atomically: true, encoding: .utf8)
      return
    }
    #expect(
      String(text[start.upperBound..<stop.lowerBound]) == generated,
      "README's exit codes are stale; rerun with RECORD_SNAPSHOTS=1")
  }

  @Test func aStepNeedingAnAppVersionTheRunLacksIs64() async throws {
    let folder = try TemporaryFolder()
    let version = try folder.write(
      "version.json",
      #"{ "version": 1, "steps": [ { "id": "gate", "plugin": "gate.version", "params": { "metadata": "m.json" } } ] }"#
    )
    let needsVersion = try await Orchestrate.run(["run", version])
    #expect(needsVersion.status == ExitCode.usage.rawValue, "\(needsVersion.stderr)")
    #expect(ExitCode.meanings.contains { $0.code == .usage && $0.meaning.contains("AppInfo") })
  }
}
