import Foundation
import LaunchJSON
import Testing

@testable import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

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

  /// A new field needs only its declaration: the limits of its shape are checked before its
  /// reader runs, so a plain reader cannot let through what the schema and docs forbid.
  @Test func aFieldsDeclaredShapeIsEnforcedWithoutCodeOfItsOwn() throws {
    struct Settings {
      var owner: String?
      var count: Int?
      var format: Int?
      var wait: Duration?
      var release: String?
    }
    let fields: [ManifestField<Settings>] = [
      .value(
        "owner", .string(minLength: 1), "who owns it", into: { $0.owner = $1 },
        read: { $0.string($1, at: $2()) }),
      .value(
        "count", .integer(minimum: 1, maximum: 10), "how many", into: { $0.count = $1 },
        read: { $0.integer($1, at: $2()) }),
      .value(
        "format", .constant(2), "the format", into: { $0.format = $1 },
        read: { $0.integer($1, at: $2()) }),
      .value(
        "wait", .nullable(.positiveDuration), "how long", into: { $0.wait = $1 },
        read: { $0.duration($1, at: $2()) }),
      .value(
        "release", .version, "the release", into: { $0.release = $1 },
        read: { $0.string($1, at: $2()) }),
    ]
    func read(_ text: String) throws -> (Settings, [String]) {
      let bytes = Array(text.utf8)
      let document = try JSONParser.parse(bytes)
      let root = document.root
      var reader = ManifestReader(
        diagnostics: DiagnosticCollector(file: "m.json", bytes: bytes, root: root),
        fallbackName: "m")
      var settings = Settings()
      reader.readObject(root, at: .root, fields: fields, into: &settings)
      return (settings, reader.diagnostics.diagnostics.map(\.message))
    }
    let (bad, problems) = try read(
      #"{ "owner": "", "count": 11, "format": 3, "wait": "0.0000000004s", "release": "1..2" }"#)
    #expect(bad.owner == nil && bad.count == nil && bad.format == nil)
    #expect(bad.wait == nil && bad.release == nil)
    #expect(
      problems == [
        "'owner' cannot be empty.", "'count' must be a whole number from 1 to 10, not 11.",
        "'format' must be 2, not 3.", "'wait' must be above 0, not 0.0000000004s.",
        "'1..2' is not a version; write it like \"1.10.0\".",
      ])
    let (good, none) = try read(
      #"{ "owner": "me", "count": 1e1, "format": 2, "wait": "05ms", "release": "2.3-beta" }"#)
    #expect(none.isEmpty)
    #expect(good.owner == "me" && good.count == 10 && good.format == 2)
    #expect(good.wait == .milliseconds(5) && good.release == "2.3-beta")
    // `null` leaves a nullable field out.
    let (unset, fine) = try read(#"{ "wait": null }"#)
    #expect(fine.isEmpty && unset.wait == nil)
    #expect(try read(#"{ "wait": 0 }"#).1 == ["'wait' must be above 0, not 0."])
    // A value of another type is left to the reader, which names the type it expects.
    #expect(try read(#"{ "count": "many" }"#).1 == ["expected a whole number, found a string."])
  }

  /// The manifest is read as one regular file: a FIFO (which would hold the load until a
  /// writer came) and a folder are named, a link is followed to its manifest.
  @Test func aManifestIsReadAsOneRegularFileALinkFollowed() throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("manifest-files-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let loader = ManifestLoader(registry: PluginRegistry())
    func problem(_ url: URL) -> String? {
      do {
        _ = try loader.load(url: url, dataDirectory: folder)
        return nil
      } catch {
        return error.diagnostics.map(\.message).joined()
      }
    }
    let fifo = folder.appendingPathComponent("fifo.json")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    #expect(
      problem(fifo) == "the manifest '\(fifo.path)' is a FIFO (named pipe), not a manifest file.")
    #expect(problem(folder) == "the manifest '\(folder.path)' is a folder, not a manifest file.")
    let missing = folder.appendingPathComponent("missing.json")
    #expect(problem(missing) == "the manifest '\(missing.path)' does not exist.")
    let manifest = folder.appendingPathComponent("real.json")
    try #"{ "version": 1, "steps": [] }"#.write(to: manifest, atomically: true, encoding: .utf8)
    let link = folder.appendingPathComponent("link.json")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: manifest)
    #expect(problem(link) == nil)
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
          "1:70: error: step 'a' (steps[0].timeout): a duration must be less than 3200000000 seconds (about a century), found 1e10."
        ])
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "splash": { "minimum": "5000000h" }, "milestones": { "interactive": [] }, "steps": [] }"#
      ).contains {
        $0.hasSuffix(
          "splash.minimum: '5000000h' is too long: a duration must be less than 3200000000 seconds (about a century)."
        )
      })
  }

  /// Each message says what is wrong with the value as written: its size, its sign or its
  /// type, rather than asking for the form it already has.
  @Test func aDurationsProblemIsNamed() {
    #expect(
      diagnostics(
        of: #"""
          { "version": 1, "defaults": { "timeout": true }, "steps": [
            { "id": "a", "plugin": "noop", "timeout": "5000000000000s" },
            { "id": "b", "plugin": "noop", "timeout": -1, "delay": " 3199999999.5 s " },
            { "id": "c", "plugin": "noop", "delay": "3200000000s" }
          ] }
          """#)
        == [
          "1:42: error: defaults.timeout: expected a duration like \"2s\" or a number of seconds, found a boolean.",
          "2:45: error: step 'a' (steps[0].timeout): '5000000000000s' is too long: a duration must be less than 3200000000 seconds (about a century).",
          "3:45: error: step 'b' (steps[1].timeout): a duration cannot be negative, found -1.",
          "4:43: error: step 'c' (steps[2].delay): '3200000000s' is too long: a duration must be less than 3200000000 seconds (about a century).",
        ])
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
