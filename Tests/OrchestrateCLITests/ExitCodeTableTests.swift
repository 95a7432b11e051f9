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

  /// Swift cannot list a type's statics: each is made from its case of `ExitCode.Code`, which
  /// the table lists, and this reads the declarations to check that every one is.
  @Test func everyStaticCodeIsMadeFromItsCaseAndHasItsRowInTheTable() throws {
    let source = try String(
      contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/OrchestrateCLI/ExitCode.swift"),
      encoding: .utf8)
    let declarations = source.split(separator: "\n")
      .map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { $0.hasPrefix("public static let ") }
    var names: [String] = []
    for declaration in declarations {
      let parts = declaration.dropFirst("public static let ".count)
        .components(separatedBy: " = ExitCode(")
      #expect(parts.count == 2, "\(declaration): make it with ExitCode(.<its case>)")
      guard parts.count == 2 else { continue }
      names.append(parts[0])
      #expect(parts[1] == ".\(parts[0]))", "\(declaration): make it from its own case")
    }
    #expect(names.count == ExitCode.Code.allCases.count)
    #expect(Set(names) == Set(ExitCode.Code.allCases.map { "\($0)" }))
    #expect(ExitCode.meanings.map(\.code) == ExitCode.Code.allCases.map(ExitCode.init))
    #expect(ExitCode.meanings.allSatisfy { !$0.meaning.isEmpty })
    #expect(ExitCode.usage.rawValue == 64 && ExitCode.interrupted.rawValue == 130)
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
