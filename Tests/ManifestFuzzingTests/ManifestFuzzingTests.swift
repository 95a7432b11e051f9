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

  @Test func everyMutatedManifestYieldsAPlanOrLocatedErrors() async {
    #expect(seeds.count == 3)
    let (seeds, registry) = (seeds, registry)
    let summary = await onOwnThread {
      var fuzzer = ManifestFuzzer(seed: 2026, seeds: seeds, registry: registry)
      return fuzzer.run(cases: 1_000, chainEvery: .max)
    }
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

  @Test func validatesAHundredThousandStepChainWithoutRecursing() async {
    let registry = registry
    let outcome = await onOwnThread {
      ManifestFuzzer.load(
        ManifestFuzzer.chain(steps: 100_000), with: ManifestLoader(registry: registry))
    }
    #expect(outcome == .loaded)
  }
}

/// Runs CPU-heavy work on a thread of its own. A synchronous test holds one of Swift's
/// cooperative threads (two on a 2-core machine) for its whole run, which starves the timing
/// tests running beside it, most of all under Thread Sanitizer.
private func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async
  -> Result
{
  await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: body()) }.start()
  }
}
