import Foundation
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

@Suite("Live display and timeline")
struct LiveDisplayTests {
  /// The display's state after `events`, for a launch of `manifest` (every step a no-op).
  private func state(
    _ manifest: String, maxConcurrency: Int? = nil, _ events: [(Duration, LaunchEvent.Kind)]
  ) throws -> LiveDisplay.State {
    var registry = PluginRegistry()
    registry.register(kind: "noop") { _ in }
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(manifest.utf8), file: "test.json",
      directory: FileManager.default.temporaryDirectory)
    var state = LiveDisplay.State(plan: plan, maxConcurrency: maxConcurrency)
    for (time, kind) in events { state.apply(LaunchEvent(time: time, kind: kind)) }
    return state
  }

  @Test func showsEachRunningStepWithElapsedTimeAndProgress() throws {
    let state = try state(
      """
      { "version": 1, "steps": [
        { "id": "gate", "plugin": "noop" }, { "id": "flags", "plugin": "noop" },
        { "id": "store", "plugin": "noop", "after": ["gate"] },
        { "id": "books", "plugin": "noop", "after": ["flags"] },
        { "id": "songs", "plugin": "noop", "dependsOn": ["books"] }
      ] }
      """,
      [
        (.zero, .started(step: "gate", attempt: 1)), (.zero, .started(step: "flags", attempt: 1)),
        (.milliseconds(100), .succeeded(step: "gate", usedFallback: false)),
        (.milliseconds(100), .started(step: "store", attempt: 1)),
        (.milliseconds(900), .succeeded(step: "flags", usedFallback: false)),
        (.milliseconds(900), .started(step: "books", attempt: 1)),
        (.seconds(1), .progress(step: "store", fraction: 0.45, message: "Upgrading library...")),
      ])
    #expect(
      LiveDisplay.render(state, now: .milliseconds(1200)) == [
        "  2/5 done, 2 running  1.200s",
        "    store    1.100s  [█████████░░░░░░░░░░░] 45%  Upgrading library...",
        "    books    0.300s",
      ])
  }

  @Test func eachLineIsCutToTheTerminalsWidthWithARowToSpare() {
    let lines = ["  1/2 done", "    \(String(repeating: "x", count: 50))  0.300s"]
    #expect(LiveDisplay.fitted(lines, columns: nil) == lines)
    #expect(LiveDisplay.fitted(lines, columns: 20) == ["  1/2 done", "    xxxxxxxxxxxxxx…"])
    #expect(LiveDisplay.fitted(["12345"], columns: 6) == ["12345"])
    #expect(LiveDisplay.fitted(["123456"], columns: 6) == ["1234…"])
  }

  @Test func aStepStartedAfterTheDisplaysClockShowsNoTimeRatherThanANegativeOne() throws {
    let state = try state(
      #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "noop" } ] }"#,
      [(.milliseconds(5), .started(step: "ui", attempt: 1))])
    #expect(
      LiveDisplay.render(state, now: .milliseconds(4)) == [
        "  0/1 done, 1 running  0.004s",
        "    ui    0.000s",
      ])
  }

  @Test func saysWhichStepsHoldTheSlotsAStepIsQueuedFor() throws {
    let manifest = """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop" }, { "id": "b", "plugin": "noop" },
        { "id": "c", "plugin": "noop" }, { "id": "later", "plugin": "noop", "dependsOn": ["a"] }
      ] }
      """
    var events: [(Duration, LaunchEvent.Kind)] = [
      (.zero, .started(step: "a", attempt: 1)), (.zero, .started(step: "b", attempt: 1)),
    ]
    #expect(
      LiveDisplay.render(try state(manifest, maxConcurrency: 2, events), now: .milliseconds(500))
        == [
          "  0/4 done, 2 running  0.500s",
          "    a    0.500s",
          "    b    0.500s",
          "    c  waiting: slot (held by a, b)",
        ])
    events += [
      (.seconds(1), .succeeded(step: "a", usedFallback: false)),
      (.seconds(1), .started(step: "c", attempt: 1)),
    ]
    #expect(
      LiveDisplay.render(try state(manifest, maxConcurrency: 2, events), now: .milliseconds(1500))
        == [
          "  1/4 done, 2 running  1.500s",
          "    b        1.500s",
          "    c        0.500s",
          "    later  waiting: slot (held by b, c)",
        ])
    // Without a limit a ready step starts at once: nothing to say about it meanwhile.
    #expect(
      LiveDisplay.render(try state(manifest, events), now: .milliseconds(1500)) == [
        "  1/4 done, 2 running  1.500s",
        "    b    1.500s",
        "    c    0.500s",
      ])
  }

  @Test func saysADeferredStepWaitsForItsMilestoneThenItsDelay() throws {
    let manifest = """
      { "version": 1, "milestones": { "interactive": ["ui"] }, "steps": [
        { "id": "ui", "plugin": "noop" },
        { "id": "warm", "plugin": "noop", "deferUntil": "interactive", "delay": "2s" },
        { "id": "sync", "plugin": "noop", "deferUntil": "interactive" },
        { "id": "images", "plugin": "noop", "after": ["ui"], "delay": "1s" }
      ] }
      """
    var events: [(Duration, LaunchEvent.Kind)] = [(.zero, .started(step: "ui", attempt: 1))]
    #expect(
      LiveDisplay.render(try state(manifest, events), now: .milliseconds(500)) == [
        "  0/4 done, 1 running  0.500s",
        "    ui      0.500s",
        "    warm  waiting: deferral until interactive + delay 2s",
        "    sync  waiting: deferral until interactive",
      ])
    events += [
      (.seconds(1), .succeeded(step: "ui", usedFallback: false)),
      (.seconds(1), .milestone(name: "interactive")),
      (.seconds(1), .started(step: "sync", attempt: 1)),
    ]
    #expect(
      LiveDisplay.render(try state(manifest, events), now: .milliseconds(1500)) == [
        "  1/4 done, 1 running  1.500s",
        "    sync      0.500s",
        "    warm    waiting: delay 2s",
        "    images  waiting: delay 1s",
      ])
    #expect(
      LiveDisplay.render(try state(manifest, events), now: .milliseconds(2500)) == [
        "  1/4 done, 1 running  2.500s",
        "    sync    1.500s",
        "    warm  waiting: delay 2s",
      ])
  }

  @Test func saysWhatAStepBetweenAttemptsWaitsFor() throws {
    let state = try state(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop", "retry": { "attempts": 2, "backoff": "500ms" } },
        { "id": "books", "plugin": "noop" }
      ] }
      """, maxConcurrency: 1,
      [
        (.zero, .started(step: "store", attempt: 1)),
        (
          .milliseconds(900),
          .retrying(
            step: "store", nextAttempt: 2, error: "boom", delay: .milliseconds(500),
            fallback: false)
        ),
        (.milliseconds(900), .started(step: "books", attempt: 1)),
      ])
    #expect(
      LiveDisplay.render(state, now: .milliseconds(1200)) == [
        "  0/2 done, 1 running  1.200s",
        "    books    0.300s",
        "    store  waiting: backoff 500ms before attempt 2",
      ])
    #expect(
      LiveDisplay.render(state, now: .milliseconds(1500)) == [
        "  0/2 done, 1 running  1.500s",
        "    books    0.600s",
        "    store  waiting: slot (held by books)",
      ])
  }

  @Test func namesAFewHoldersAndWaitersAndCountsTheRest() throws {
    let steps = (1...12).map { #"{ "id": "s\#($0)", "plugin": "noop" }"# }
    let state = try state(
      #"{ "version": 1, "steps": [\#(steps.joined(separator: ", "))] }"#, maxConcurrency: 4,
      (1...4).map { (.zero, .started(step: "s\($0)", attempt: 1)) })
    #expect(
      LiveDisplay.render(state, now: .seconds(1)) == [
        "  0/12 done, 4 running  1.000s",
        "    s1     1.000s",
        "    s2     1.000s",
        "    s3     1.000s",
        "    s4     1.000s",
        "    s5   waiting: slot (held by s1, s2, s3 and 1 more)",
        "    s6   waiting: slot (held by s1, s2, s3 and 1 more)",
        "    s7   waiting: slot (held by s1, s2, s3 and 1 more)",
        "    s8   waiting: slot (held by s1, s2, s3 and 1 more)",
        "    s9   waiting: slot (held by s1, s2, s3 and 1 more)",
        "    s10  waiting: slot (held by s1, s2, s3 and 1 more)",
        "    and 2 more waiting",
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

  @Test func drawsTheWidestNonASCIIStepNameWhole() {
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .succeeded, route: nil, duration: .seconds(2),
      milestones: [], criticalPath: [],
      steps: [
        .init(
          id: "a😀", plugin: "p", state: .succeeded, start: .zero, end: .seconds(2), attempts: 1,
          usedFallback: false, error: nil),
        .init(
          id: "b", plugin: "p", state: .succeeded, start: .zero, end: .seconds(1), attempts: 1,
          usedFallback: false, error: nil),
      ])
    #expect(
      Timeline.render(report, width: 4) == [
        "       0s 2.000s",
        "  a😀  ████  2.000s",
        "  b    ██    1.000s",
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

  @Test func shadesAMainIsolatedStepsWaitForTheMainThread() {
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .succeeded, route: nil, duration: .seconds(4),
      milestones: [], criticalPath: [],
      steps: [
        .init(
          id: "ui", plugin: "p", state: .succeeded, start: .zero, end: .seconds(4), attempts: 1,
          usedFallback: false, error: nil, ready: .zero,
          waits: [.init(reason: .main, start: .zero, end: .seconds(3))],
          work: [.init(attempt: 1, start: .seconds(3), end: .seconds(4))])
      ])
    #expect(
      Timeline.render(report, width: 8) == [
        "      0s 4.000s",
        "  ui  ······██  4.000s",
      ])
  }
}
