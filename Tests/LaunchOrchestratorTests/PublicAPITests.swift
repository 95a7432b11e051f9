import Foundation
import Testing

/// The package's public surface, listed in docs/public-api.txt, so that a declaration made
/// `public` by accident shows up in review as a change to that file.
@Suite("Public API")
struct PublicAPITests {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  /// The folders of the library products, whose public declarations apps and plugins use.
  private static let folders = ["Sources/LaunchOrchestrator", "Sources/OrchestrateCLI", "Plugins"]

  /// One line per public or open declaration: `file: declaration`, up to its body.
  static func surface() throws -> String {
    var lines: [String] = []
    for folder in folders {
      let base = root.appendingPathComponent(folder)
      let files = try #require(FileManager.default.enumerator(atPath: base.path))
        .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
      for file in files {
        let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
          let code = line.trimmingCharacters(in: .whitespaces)
          guard code.hasPrefix("public ") || code.hasPrefix("open ") else { continue }
          let declaration = code.split(separator: "{", maxSplits: 1).first.map(String.init) ?? code
          lines.append(
            "\(folder)/\(file): \(declaration.trimmingCharacters(in: .whitespaces))")
        }
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  @Test func theListedSurfaceIsTheSurfaceInTheCode() throws {
    let listing = Self.root.appendingPathComponent("docs/public-api.txt")
    let surface = try Self.surface()
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
      try surface.write(to: listing, atomically: true, encoding: .utf8)
      return
    }
    let listed = try String(contentsOf: listing, encoding: .utf8)
    #expect(
      listed == surface,
      "the public API changed; review it, then rerun with RECORD_SNAPSHOTS=1 to update docs/public-api.txt"
    )
  }

  @Test func implementationHelpersAreNotPublic() throws {
    let surface = try Self.surface()
    for helper in ["class Locked", "enum Suggestions", "enum DurationText"] {
      #expect(!surface.contains(helper), "\(helper) is public")
    }
  }
}
