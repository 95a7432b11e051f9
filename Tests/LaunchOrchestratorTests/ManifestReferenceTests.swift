import Foundation
import Testing

@testable import LaunchOrchestrator

@Suite("Manifest field reference")
struct ManifestReferenceTests {
  private static let docs = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("docs/manifest.md")
  private static let begin = "<!-- fields:begin -->\n"
  private static let end = "<!-- fields:end -->"

  @Test func theDocsFieldTablesMatchTheDeclarations() throws {
    let text = try String(contentsOf: Self.docs, encoding: .utf8)
    let start = try #require(text.range(of: Self.begin))
    let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
    let generated = ManifestFields.reference
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
      let updated = text.replacingCharacters(
        in: start.upperBound..<stop.lowerBound, with: generated)
      try updated.write(to: Self.docs, atomically: true, encoding: .utf8)
      return
    }
    #expect(
      String(text[start.upperBound..<stop.lowerBound]) == generated,
      "docs/manifest.md's field tables are stale; rerun with RECORD_SNAPSHOTS=1")
  }

  @Test func aDataFolderThatDoesNotExistIsRefusedAtLoad() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "data-folder-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let manifest = folder.appendingPathComponent("launch.json")
    try Data(#"{ "version": 1, "steps": [] }"#.utf8).write(to: manifest)
    let missing = folder.appendingPathComponent("Application Support")
    let error = #expect(throws: ManifestError.self) {
      try ManifestLoader(registry: PluginRegistry()).load(url: manifest, dataDirectory: missing)
    }
    #expect(error?.code == .unreadable)
    #expect(
      error?.diagnostics.map(\.message) == [
        "the data folder '\(missing.path)' does not exist; create the folder before loading the manifest."
      ])
    try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: true)
    #expect(
      try ManifestLoader(registry: PluginRegistry()).load(url: manifest, dataDirectory: missing)
        .dataDirectory == missing.standardizedFileURL)
  }

  @Test func aHugeDurationIsADiagnosticNotACrash() {
    #expect(
      diagnostics(
        of: #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop", "timeout": 1e10 } ] }"#)
        == [
          "1:70: error: step 'a' (steps[0].timeout): a duration cannot be negative or this large (found 10000000000.0)."
        ])
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "splash": { "minimum": "5000000h" }, "milestones": { "interactive": [] }, "steps": [] }"#
      ).contains { $0.contains("splash.minimum: '5000000h' is not a duration") })
  }

  @Test func anUndeclaredKeyIsRejectedWithTheDeclaredKeysListed() throws {
    let keys = ManifestObjectInfo.step.keys
    #expect(keys.contains("expectedDuration"))
    var registry = PluginRegistry()
    registry.register(kind: "x") { _ in }
    let loader = ManifestLoader(registry: registry)
    let text = #"{"version": 1, "steps": [{"id": "a", "plugin": "x", "bogus": 1}]}"#
    let error = #expect(throws: ManifestError.self) {
      try loader.load(bytes: Array(text.utf8), file: "m.json", directory: URL(fileURLWithPath: "/"))
    }
    #expect(
      error?.diagnostics.map(\.message)
        == ["unknown key 'bogus'. Allowed keys: \(keys.joined(separator: ", "))."])
  }
}
