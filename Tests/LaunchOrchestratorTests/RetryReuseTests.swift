import Testing

@testable import LaunchOrchestrator

@Suite("What a retry reuses")
struct RetryReuseTests {
  private func line(_ id: String, _ state: StepState) -> LaunchReport.Step {
    LaunchReport.Step(
      id: id, plugin: "noop", state: state, start: .zero, end: .seconds(1), attempts: 1,
      usedFallback: false, error: nil)
  }

  @Test func takesTheStepsThatSucceededByIdWhateverTheReportsOrder() throws {
    let plan = try loadPlan(
      #"""
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "feed", "plugin": "noop", "dependsOn": ["store"] },
        { "id": "gates", "plugin": "noop" },
        { "id": "route", "plugin": "noop" },
        { "id": "seed", "plugin": "noop" }
      ] }
      """#)
    var previous = LaunchReport(
      manifest: "test.json", name: "test", outcome: .routed, route: nil, duration: .seconds(1),
      milestones: [], criticalPath: [],
      steps: [
        line("seed", .skipped), line("route", .succeeded), line("gates", .failed),
        line("feed", .cached), line("store", .succeeded),
      ],
      outputs: StepOutputs(ids: ["route", "feed", "store"], values: [3, 2, 1]))
    previous.routedStep = "route"
    let reuse = Reuse(plan: plan, previous: previous)
    // The step that routed the launch is judged again; failed and skipped steps run again.
    #expect(reuse.steps == [0, 1])
    #expect(reuse.outputs.map(\.0) == [0, 1])
    #expect(reuse.outputs.map { $0.1 as? Int } == [1, 2])
  }

  @Test func aStepMissingFromTheReportRunsAgain() throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop" }, { "id": "b", "plugin": "noop" } ] }"#
    )
    let previous = LaunchReport(
      manifest: "test.json", name: "test", outcome: .succeeded, route: nil,
      duration: .seconds(1), milestones: [], criticalPath: [], steps: [line("b", .succeeded)])
    let reuse = Reuse(plan: plan, previous: previous)
    #expect(reuse.steps == [1])
    #expect(reuse.outputs.isEmpty)
  }
}
