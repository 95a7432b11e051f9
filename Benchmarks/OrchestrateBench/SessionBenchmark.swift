import Foundation
import LaunchOrchestrator

/// Runs a plan through a `LaunchSession` on the main actor, as an app's launch screen does:
/// the session reads every event there and keeps the outputs, the progress and the running
/// steps the screen shows.
@MainActor
func runSession(_ plan: LaunchPlan) async -> LaunchReport {
  await LaunchSession().run(plan, on: LaunchEngine())
}

extension Benchmarks {
  /// What an app's session adds to the engine on the noopDAG graphs of 1,000 and 10,000
  /// steps, interleaved with the engine alone: the same per step at both sizes when the
  /// session's work for each event does not grow with the launch.
  func session() async throws -> Result {
    var result = Result(name: "session")
    for size in [1_000, 10_000] {
      let plan = try plan(LayeredDAG(nodes: size, width: 100).manifest(kind: "noop"))
      let repetitions = size <= 1_000 ? (quick ? 15 : 31) : (quick ? 5 : 15)
      let samples = try await interleaved(
        repetitions: repetitions,
        [
          ("engine", { await seconds { _ = await runEngine(plan) } }),
          ("session", { await seconds { _ = await runSession(plan) } }),
        ])
      func micros(_ name: String) -> Double { (samples[name]?.median ?? .nan) / Double(size) * 1e6 }
      let suffix = size == 10_000 ? "" : "At\(size)"
      result.field("engineMicrosPerStep\(suffix)", micros("engine"))
      result.field("sessionMicrosPerStep\(suffix)", micros("session"))
      result.field("sessionOverEngineRatio\(suffix)", micros("session") / micros("engine"))
      result.lines.append("\(size) steps, µs per step (median [min-max] of \(repetitions)):")
      for name in ["engine", "session"] {
        let text = samples[name]?.text(scale: 1e6 / Double(size), unit: "µs") ?? "-"
        result.lines.append("  \(name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(text)")
      }
    }
    return result
  }
}
