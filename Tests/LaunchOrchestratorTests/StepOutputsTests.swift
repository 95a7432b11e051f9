import Testing

@testable import LaunchOrchestrator

@Suite("Step outputs")
struct StepOutputsTests {
  @Test func setReplacesAndAddsOnOutputsTheEngineGathered() {
    var outputs = StepOutputs(ids: ["store", "feed", "gates"], values: [1, nil, 3])
    outputs.set(10, for: "store")
    outputs.set(20, for: "feed")
    outputs.set(40, for: "seed")
    #expect(outputs.output(of: "store", as: Int.self) == 10)
    #expect(outputs.output(of: "feed", as: Int.self) == 20)
    #expect(outputs.output(of: "gates", as: Int.self) == 3)
    #expect(outputs.output(of: "seed", as: Int.self) == 40)
    #expect(outputs.value(of: "missing") == nil)
    #expect(outputs.steps == ["store", "feed", "gates", "seed"])
  }

  @Test func outputsSetOneAtATimeAreFoundAsTheyCome() {
    // A session's outputs: empty at the start, one set per step that succeeds.
    var outputs = StepOutputs()
    for step in 0..<1_000 {
      outputs.set(step, for: "s\(step)")
      #expect(outputs.output(of: "s\(step)", as: Int.self) == step)
    }
    outputs.set(-1, for: "s500")
    #expect(outputs.output(of: "s500", as: Int.self) == -1)
    #expect(outputs.output(of: "s999", as: String.self) == nil)
    #expect(outputs.steps.count == 1_000)
  }
}
