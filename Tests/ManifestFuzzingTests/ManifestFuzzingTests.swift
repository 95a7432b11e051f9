import Foundation
import LaunchOrchestrator
import ManifestFuzzing
import SimulatePlugin
import Testing

@Suite("Manifest fuzzing")
struct ManifestFuzzingTests {
  private var registry: PluginRegistry {
    var registry = PluginRegistry()
    registry.register(kind: "noop") { _ in }
    registry.register(SimulateStep.self)
    return registry
  }

  private var seeds: [String] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("manifests/simulated")
    return ["booktrack.json", "booktrack-serial.json", "rehearsal.json"].compactMap {
      try? String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)
    }
  }

  @Test func everyMutatedManifestYieldsAPlanOrLocatedErrors() {
    #expect(seeds.count == 3)
    var fuzzer = ManifestFuzzer(seed: 2026, seeds: seeds, registry: registry)
    let summary = fuzzer.run(cases: 1_000, chainEvery: .max)
    #expect(summary.cases == 1_000)
    #expect(summary.unexplained == 0)
    #expect(summary.rejected > 500, "the mutations should mostly break the manifests")
    #expect(summary.loaded > 0, "and sometimes not")
  }

  @Test func runsTheSameCasesForTheSameSeed() {
    var first = ManifestFuzzer(seed: 7, seeds: seeds, registry: registry)
    var second = ManifestFuzzer(seed: 7, seeds: seeds, registry: registry)
    for _ in 0..<50 { #expect(first.nextCase() == second.nextCase()) }
  }

  @Test func validatesAHundredThousandStepChainWithoutRecursing() {
    let outcome = ManifestFuzzer.load(
      ManifestFuzzer.chain(steps: 100_000), with: ManifestLoader(registry: registry))
    #expect(outcome == .loaded)
  }
}
