import Testing

@testable import LaunchOrchestrator

@Suite("What a retry reuses")
struct RetryReuseTests {
  private func line(_ id: String, _ state: StepState) -> LaunchReport.Step {
    LaunchReport.Step(
      id: id, plugin: "noop", state: state, start: .zero, end: .seconds(1), attempts: 1,
      usedFallback: false, error: nil)
  }

  /// A step served from the cache: refreshed, or its refresh skipped.
  private func cached(_ id: String, refreshed: StepState) -> LaunchReport.Step {
    var step = line(id, .cached)
    step.refresh = LaunchReport.Refresh(
      state: refreshed, start: nil, end: nil, attempts: 0, error: nil)
    return step
  }

  @Test func takesTheStepsThatSucceededByIdWhateverTheReportsOrder() throws {
    let plan = try loadPlan(
      #"""
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "feed", "plugin": "noop", "dependsOn": ["store"] },
        { "id": "gates", "plugin": "noop" },
        { "id": "route", "plugin": "noop" },
        { "id": "seed", "plugin": "noop" },
        { "id": "stale", "plugin": "noop", "dependsOn": ["gates"] }
      ] }
      """#)
    var previous = LaunchReport(
      manifest: "test.json", name: "test", outcome: .routed, route: nil, duration: .seconds(1),
      milestones: [], criticalPath: [],
      steps: [
        line("seed", .skipped), line("route", .succeeded), line("gates", .failed),
        cached("feed", refreshed: .succeeded), line("store", .succeeded),
        cached("stale", refreshed: .skipped),
      ],
      outputs: StepOutputs(ids: ["route", "feed", "store", "stale"], values: [3, 2, 1, 4]))
    previous.routedStep = "route"
    let reuse = Reuse(plan: plan, previous: previous)
    // The step that routed the launch is judged again; failed and skipped steps run again, and
    // a cached step whose refresh did not succeed is served and refreshed again.
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
