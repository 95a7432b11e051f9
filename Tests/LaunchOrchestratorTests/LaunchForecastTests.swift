import LaunchJSON
import Testing

@testable import LaunchOrchestrator

@Suite("Forecast and trace")
struct LaunchForecastTests {
  @Test func predictsWithHintsUnderTheSameRulesAsARealLaunch() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "maxConcurrency": 1, "milestones": { "interactive": ["a", "b"] }, "steps": [
        { "id": "a", "plugin": "noop", "expectedDuration": "1s", "priority": "high" },
        { "id": "b", "plugin": "noop", "expectedDuration": "2s" },
        { "id": "c", "plugin": "noop", "deferUntil": "interactive", "delay": "500ms" }
      ] }
      """)
    let prediction = LaunchForecast.predict(plan)
    let report = prediction.report
    #expect(prediction.sources == [.hint, .hint, .none])
    #expect(report.step("a")?.start == .zero)
    #expect(report.step("b")?.start == .seconds(1))
    #expect(report.step("c")?.start == .milliseconds(3500))
    #expect(report.time(ofMilestone: "interactive") == .some(.seconds(3)))
    #expect(report.duration == .milliseconds(3500))
    // "b" waited for the slot "a" held: the path runs through the slot holder.
    #expect(report.criticalPath == ["a", "b", "c"])
    #expect(LaunchForecast.predict(plan, maxConcurrency: 2).report.step("b")?.start == .zero)
  }

  @Test func prefersDurationsFromAnEarlierReport() throws {
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop", "expectedDuration": "1s" } ] }"#)
    let earlier = LaunchReport(
      manifest: "test.json", name: "test", outcome: .succeeded, route: nil, duration: .seconds(5),
      milestones: [],
      criticalPath: ["a"],
      steps: [
        .init(
          id: "a", plugin: "noop", state: .succeeded, start: .seconds(1), end: .seconds(4),
          attempts: 1,
          usedFallback: false, error: nil)
      ])
    let prediction = LaunchForecast.predict(plan, durations: earlier)
    #expect(prediction.sources == [.report])
    #expect(prediction.report.duration == .seconds(3))
  }

  @Test func takesTheAttemptThatEndedAStepForItsDurationNotItsWholeSpan() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "flaky", "plugin": "noop", "timeout": "200ms",
          "retry": { "attempts": 2, "backoff": "100ms" } },
        { "id": "page", "plugin": "noop", "dependsOn": ["flaky"] },
        { "id": "songs", "plugin": "number.make", "cache": {} }
      ] }
      """)
    // 'flaky' failed its first attempt at 200ms and succeeded in 150ms after the backoff:
    // 450ms in all, more than its timeout. 'songs' was served at once and refreshed in 20ms.
    var songs = LaunchReport.Step(
      id: "songs", plugin: "number.make", state: .cached, start: .zero, end: .zero, attempts: 0,
      usedFallback: false, error: nil)
    songs.refresh = LaunchReport.Refresh(
      state: .succeeded, start: .milliseconds(10), end: .milliseconds(30), attempts: 1,
      error: nil, work: [.init(attempt: 1, start: .milliseconds(10), end: .milliseconds(30))])
    let earlier = LaunchReport(
      manifest: "test.json", name: "test", outcome: .succeeded, route: nil,
      duration: .milliseconds(500), milestones: [], criticalPath: [],
      steps: [
        .init(
          id: "flaky", plugin: "noop", state: .succeeded, start: .zero,
          end: .milliseconds(450), attempts: 2, usedFallback: false, error: nil,
          work: [
            .init(attempt: 1, start: .zero, end: .milliseconds(200)),
            .init(attempt: 2, start: .milliseconds(300), end: .milliseconds(450)),
          ]),
        .init(
          id: "page", plugin: "noop", state: .succeeded, start: .milliseconds(450),
          end: .milliseconds(500), attempts: 1, usedFallback: false, error: nil),
        songs,
      ])
    let prediction = LaunchForecast.predict(plan, durations: earlier)
    #expect(prediction.durations == [.milliseconds(150), .milliseconds(50), .milliseconds(20)])
    #expect(prediction.report.step("flaky")?.state == .succeeded)
    #expect(prediction.report.step("page")?.start == .milliseconds(150))
  }

  @Test func aStepWaitingForASignalIsSkippedOnceNothingElseHoldsItAsARunWithoutOneDoes() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "signals": ["consent"], "steps": [
        { "id": "store", "plugin": "noop", "expectedDuration": "100ms" },
        { "id": "analytics", "plugin": "noop", "waitFor": ["consent"] },
        { "id": "upload", "plugin": "noop", "after": ["analytics"], "expectedDuration": "50ms" }
      ] }
      """)
    let report = LaunchForecast.predict(plan).report
    #expect(report.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(report.step("upload")?.start == .zero)
    #expect(report.duration == .milliseconds(100))
  }

  @Test func predictsATimeoutWhenAStepIsExpectedToOutlastIt() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "slow", "plugin": "noop", "expectedDuration": "10s", "timeout": "2s", "onFailure": "continue" }
      ] }
      """)
    let report = LaunchForecast.predict(plan).report
    #expect(report.step("slow")?.state == .timedOut)
    #expect(report.duration == .seconds(2))
  }

  @Test func putsOverlappingStepsInSeparateTraceLanes() {
    func step(_ id: String, _ start: Int?, _ end: Int?) -> LaunchReport.Step {
      LaunchReport.Step(
        id: id, plugin: "noop", state: start == nil ? .skipped : .succeeded,
        start: start.map { .seconds($0) },
        end: end.map { .seconds($0) }, attempts: start == nil ? 0 : 1, usedFallback: false,
        error: nil)
    }
    let steps = [
      step("a", 0, 3), step("b", 1, 2), step("c", 2, 4), step("d", 3, 5), step("skipped", nil, nil),
    ]
    #expect(LaunchReport.lanes(for: steps) == [1, 2, 2, 1, nil])
  }

  @Test func writesCompleteEventsAndMilestonesToTheTrace() throws {
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .succeeded, route: nil, duration: .milliseconds(30),
      milestones: [
        .init(name: "interactive", time: .milliseconds(20)), .init(name: "never", time: nil),
      ],
      criticalPath: ["a"],
      steps: [
        .init(
          id: "a", plugin: "noop", state: .succeeded, start: .milliseconds(1),
          end: .milliseconds(21), attempts: 1,
          usedFallback: false, error: nil)
      ])
    let events = try #require(report.chromeTrace["traceEvents"]?.elements)
    let complete = events.filter { $0["ph"] == "X" }
    #expect(complete.count == 1)
    #expect(complete[0]["name"] == "a")
    #expect(complete[0]["ts"] == 1000)
    #expect(complete[0]["dur"] == 20000)
    let instants = events.filter { $0["ph"] == "i" }
    #expect(instants.map { $0["name"] } == ["interactive"])
    #expect(instants[0]["ts"] == 20000)
  }
}
