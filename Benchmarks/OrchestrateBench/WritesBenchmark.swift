import Foundation
import LaunchOrchestrator

extension Benchmarks {
  /// `SafeFiles.writeAtomically` of a small file alone in its folder, against the same write
  /// beside many other files, interleaved: a plugin writes into the app's own folders, and a
  /// write must not look at what else is there. The ratio stays near 1; it was 5 at 10,000
  /// files and 20 at 50,000 while each write listed its folder.
  func writes() async throws -> Result {
    var result = Result(name: "writes")
    let others = quick ? 10_000 : 50_000
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-bench-writes-\(UUID().uuidString.prefix(8))")
    defer { try? FileManager.default.removeItem(at: root) }
    let alone = root.appendingPathComponent("alone")
    let crowded = root.appendingPathComponent("crowded")
    for folder in [alone, crowded] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    for index in 0..<others {
      let path = crowded.appendingPathComponent("photo-\(index).jpg").path
      guard FileManager.default.createFile(atPath: path, contents: Data("x".utf8)) else {
        throw BenchmarkError("cannot create '\(path)'")
      }
    }
    let content = Data(#"{ "scrollAnchor": "result-3" }"#.utf8)
    let repetitions = quick ? 31 : 61
    let samples = try await interleaved(
      repetitions: repetitions,
      [
        (
          "alone",
          {
            try await seconds {
              try SafeFiles.writeAtomically(content, to: alone.appendingPathComponent("state.json"))
            }
          }
        ),
        (
          "crowded",
          {
            try await seconds {
              try SafeFiles.writeAtomically(
                content, to: crowded.appendingPathComponent("state.json"))
            }
          }
        ),
      ])
    func micros(_ name: String) -> Double { (samples[name]?.median ?? .nan) * 1e6 }
    result.field("aloneMicros", micros("alone"))
    result.field("besideOthersMicros", micros("crowded"))
    result.field("besideOthersRatio", micros("crowded") / micros("alone"))
    result.field("otherFiles", others)
    result.lines.append("a write, µs (median [min-max] of \(repetitions), each with two fsyncs):")
    for (name, label) in [("alone", "alone in its folder"), ("crowded", "beside \(others) files")] {
      let text = samples[name]?.text(scale: 1e6, unit: "µs", digits: 0) ?? "-"
      result.lines.append("  \(label.padding(toLength: 22, withPad: " ", startingAt: 0)) \(text)")
    }
    return result
  }
}
