import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

@Suite("Live display and timeline")
struct LiveDisplayTests {
  @Test func showsEachRunningStepWithElapsedTimeAndProgress() {
    var state = LiveDisplay.State(total: 5)
    state.finished = 2
    state.running = [
      (
        "store", .init(started: .milliseconds(100), fraction: 0.45, message: "Upgrading library...")
      ),
      ("books", .init(started: .milliseconds(900))),
    ]
    #expect(
      LiveDisplay.render(state, now: .milliseconds(1200)) == [
        "  2/5 done, 2 running  1.200s",
        "    store    1.100s  [█████████░░░░░░░░░░░] 45%  Upgrading library...",
        "    books    0.300s",
      ])
  }

  @Test func saysWhatAStepBetweenAttemptsWaitsFor() {
    var state = LiveDisplay.State(total: 2)
    state.running = [("books", .init(started: .milliseconds(900)))]
    state.waiting = [("store", "backoff 500ms before attempt 2")]
    #expect(
      LiveDisplay.render(state, now: .milliseconds(1200)) == [
        "  0/2 done, 1 running  1.200s",
        "    books    0.300s",
        "    store  waiting: backoff 500ms before attempt 2",
      ])
  }

  @Test func drawsEveryStepOnASharedAxisAndMarksFailures() {
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .degraded, route: nil, duration: .seconds(4),
      milestones: [],
      criticalPath: [],
      steps: [
        .init(
          id: "store", plugin: "p", state: .succeeded, start: .zero, end: .seconds(2), attempts: 1,
          usedFallback: false,
          error: nil),
        .init(
          id: "queue", plugin: "p", state: .failed, start: .seconds(2), end: .seconds(4),
          attempts: 2,
          usedFallback: false, error: "boom"),
        .init(
          id: "images", plugin: "p", state: .skipped, start: nil, end: nil, attempts: 0,
          usedFallback: false,
          error: "dependency 'queue' failed"),
      ])
    #expect(
      Timeline.render(report, width: 8) == [
        "          0s 4.000s",
        "  store   ████      2.000s",
        "  queue       ▒▒▒▒  2.000s, 2 attempts  FAILED: boom",
        "  images            skipped: dependency 'queue' failed",
      ])
  }

  @Test func shadesWaitsBeforeAStepAndBetweenItsAttempts() {
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .succeeded, route: nil, duration: .seconds(8),
      milestones: [], criticalPath: [],
      steps: [
        .init(
          id: "store", plugin: "p", state: .succeeded, start: .zero, end: .seconds(2), attempts: 1,
          usedFallback: false, error: nil),
        .init(
          id: "queue", plugin: "p", state: .succeeded, start: .seconds(2), end: .seconds(8),
          attempts: 2, usedFallback: false, error: nil, ready: .zero,
          waits: [
            .init(reason: .concurrency, start: .zero, end: .seconds(2), heldBy: ["store"]),
            .init(reason: .backoff, start: .seconds(3), end: .seconds(7)),
          ],
          work: [
            .init(attempt: 1, start: .seconds(2), end: .seconds(3)),
            .init(attempt: 2, start: .seconds(7), end: .seconds(8)),
          ]),
      ])
    #expect(
      Timeline.render(report, width: 8) == [
        "         0s 8.000s",
        "  store  ██        2.000s",
        "  queue  ··█····█  6.000s, 2 attempts",
      ])
  }
}
