import Foundation
import LaunchOrchestrator
import ManifestFuzzing

/// `orchestrate-bench fuzz [--cases N] [--seed S]`: a long fuzzing run of the manifest loader.
func runFuzz(_ arguments: [String]) async throws {
  var cases = 100_000
  var seed: UInt64 = 1
  var remaining = arguments[...]
  while let argument = remaining.popFirst() {
    switch argument {
    case "--cases": cases = Int(remaining.popFirst() ?? "") ?? cases
    case "--seed": seed = UInt64(remaining.popFirst() ?? "") ?? seed
    default: throw BenchmarkError("unknown fuzz argument '\(argument)'")
    }
  }
  let seeds = try [
    "manifests/app.json", "manifests/music.json", "manifests/gated.json",
    "manifests/simulated/booktrack.json",
  ]
  .map { try String(contentsOfFile: $0, encoding: .utf8) }
  var fuzzer = ManifestFuzzer(seed: seed, seeds: seeds, registry: Benchmarks(quick: true).registry)
  let summary = fuzzer.run(cases: cases, chainEvery: 10_000)
  print(
    "\(summary.cases) cases (seed \(seed)): \(summary.loaded) loaded, \(summary.rejected) rejected with located errors, "
      + "\(summary.unexplained) unexplained rejections, 0 crashes; slowest case \(String(format: "%.3f", summary.slowestSeconds))s"
  )
  if summary.unexplained > 0 { exit(1) }
}
