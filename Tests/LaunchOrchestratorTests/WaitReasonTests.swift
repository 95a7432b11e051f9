import Dispatch
import LaunchJSON
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

@Suite("Wait reasons and critical chains")
struct WaitReasonTests {
  private typealias Wait = LaunchReport.Wait
  private typealias Work = LaunchReport.Work

  @Test func aStepQueuedForTheOnlySlotWaitsForConcurrencyNamingTheHolders() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "first", "plugin": "noop", "priority": "high" },
        { "id": "second", "plugin": "noop" },
        { "id": "queued", "plugin": "noop", "priority": "background" }
      ] }
      """)
    launch.start()
    launch.succeed("first", at: .seconds(1))
    launch.succeed("second", at: .seconds(3))
    launch.succeed("queued", at: .seconds(4))
    let step = try #require(launch.report().step("queued"))
    #expect(step.ready == .zero)
    #expect(step.dependencies == .zero)
    #expect(
      step.waits == [
        Wait(reason: .concurrency, start: .zero, end: .seconds(3), heldBy: ["first", "second"])
      ])
    #expect(step.work == [Work(attempt: 1, start: .seconds(3), end: .seconds(4))])
    #expect(launch.report().step("first")?.waits == [])
  }

  @Test func theCriticalPathRunsThroughTheStepsThatHeldTheSlot() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1,
        "milestones": { "interactive": ["background"] },
        "steps": [
        { "id": "first", "plugin": "noop", "priority": "high" },
        { "id": "second", "plugin": "noop" },
        { "id": "background", "plugin": "noop", "priority": "background" }
      ] }
      """)
    launch.start()
    launch.succeed("first", at: .seconds(1))
    launch.succeed("second", at: .seconds(3))
    launch.succeed("background", at: .milliseconds(3500))
    let report = launch.report()
    #expect(report.criticalPath == ["first", "second", "background"])
    let chain = try #require(report.criticalChain(to: "interactive"))
    #expect(
      chain.links == [
        .init(
          step: "first", heldVia: nil, start: .zero, end: .seconds(1), wait: .zero,
          work: .seconds(1)),
        .init(
          step: "second", heldVia: .slot, start: .seconds(1), end: .seconds(3), wait: .zero,
          work: .seconds(2)),
        .init(
          step: "background", heldVia: .slot, start: .seconds(3), end: .milliseconds(3500),
          wait: .zero, work: .milliseconds(500)),
      ])
    #expect(chain.blame.map(\.step) == ["second", "first", "background"])
    #expect(chain.blame.map(\.delay) == [.seconds(2), .seconds(1), .milliseconds(500)])
    #expect(report.criticalChains.last?.milestone == nil)
  }

  /// A slot holder that failed, gave the slot up, and ran again after the step it held back
  /// ends its link when it gave the slot up: the delays add up to the milestone's time.
  @Test func aSlotHolderThatRanAgainLaterEndsItsLinkWhenItFreedTheSlot() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "milestones": { "interactive": ["page"] },
        "steps": [
        { "id": "sync", "plugin": "noop", "priority": "critical",
          "retry": { "attempts": 2, "backoff": "20ms" } },
        { "id": "page", "plugin": "noop" }
      ] }
      """)
    launch.start()
    launch.fail("sync", at: .milliseconds(100))
    launch.advance(to: .milliseconds(120))
    launch.succeed("page", at: .milliseconds(250))
    launch.succeed("sync", at: .milliseconds(350))
    let chain = try #require(launch.report().criticalChain(to: "interactive"))
    #expect(
      chain.links == [
        .init(
          step: "sync", heldVia: nil, start: .zero, end: .milliseconds(100), wait: .zero,
          work: .milliseconds(100)),
        .init(
          step: "page", heldVia: .slot, start: .milliseconds(100), end: .milliseconds(250),
          wait: .zero, work: .milliseconds(150)),
      ])
    #expect(chain.blame.map(\.step) == ["page", "sync"])
    #expect(chain.blame.map(\.delay) == [.milliseconds(150), .milliseconds(100)])
  }

  /// A step skipped because what it waited for failed stands for that in the chains: the
  /// milestone it completed, and a step `after` it, are held by the step that failed.
  @Test func aSkippedStepsChainRunsThroughWhatItWaitedFor() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1,
        "milestones": { "interactive": ["page", "extras"], "settled": ["tidy"] },
        "steps": [
        { "id": "page", "plugin": "noop" },
        { "id": "fetch", "plugin": "noop", "timeout": "200ms", "onFailure": "continue" },
        { "id": "extras", "plugin": "noop", "dependsOn": ["fetch"] },
        { "id": "tidy", "plugin": "noop", "after": ["extras"] }
      ] }
      """)
    launch.start()
    launch.succeed("page", at: .milliseconds(50))
    launch.advance(to: .milliseconds(200))
    launch.succeed("tidy", at: .milliseconds(260))
    let report = launch.report()
    #expect(report.step("extras")?.state == .skipped)
    #expect(report.time(ofMilestone: "interactive") == .milliseconds(200))
    #expect(
      report.criticalChain(to: "interactive")?.links == [
        .init(
          step: "fetch", heldVia: nil, start: .zero, end: .milliseconds(200), wait: .zero,
          work: .milliseconds(200))
      ])
    #expect(
      report.criticalChain(to: "settled")?.links.map(\.step) == ["fetch", "tidy"])
    #expect(
      report.criticalChain(to: "settled")?.links.map(\.heldVia) == [nil, .dependency])
  }

  /// A skipped chain 10,000 steps long is followed without recursion: the report of every
  /// launch walks it, and a recursive walk used up the thread's stack (a crash).
  @Test func aLongSkippedChainIsFollowedWithoutUsingUpTheStack() throws {
    let count = 10_000
    let steps = (0..<count).map { index in
      index == 0
        ? #"{ "id": "s0", "plugin": "noop", "onFailure": "continue" }"#
        : #"{ "id": "s\#(index)", "plugin": "noop", "dependsOn": ["s\#(index - 1)"] }"#
    }
    var launch = try SchedulerHarness(
      """
      { "version": 1, "milestones": { "done": ["s\(count - 1)"] },
        "steps": [ \(steps.joined(separator: ", ")) ] }
      """)
    launch.start()
    launch.fail("s0", at: .seconds(1))
    let report = launch.report()
    #expect(report.time(ofMilestone: "done") == .seconds(1))
    #expect(report.criticalChain(to: "done")?.links.map(\.step) == ["s0"])
  }

  @Test func aDeferredStepWaitsForItsMilestoneAndItsDelay() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "milestones": { "interactive": ["ui"] }, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "ui", "plugin": "noop", "dependsOn": ["store"] },
        { "id": "warm", "plugin": "noop", "after": ["store"], "deferUntil": "interactive", "delay": "1s" }
      ] }
      """)
    launch.start()
    launch.succeed("store", at: .seconds(1))
    launch.succeed("ui", at: .seconds(2))
    launch.advance(to: .seconds(3))
    launch.succeed("warm", at: .seconds(4))
    let report = launch.report()
    let warm = try #require(report.step("warm"))
    #expect(warm.ready == .seconds(1))
    #expect(warm.waits == [Wait(reason: .deferral, start: .seconds(1), end: .seconds(3))])
    #expect(warm.work == [Work(attempt: 1, start: .seconds(3), end: .seconds(4))])
    #expect(report.criticalPath == ["store", "ui", "warm"])
    #expect(report.criticalChains.last?.links.map(\.heldVia) == [nil, .dependency, .deferral])
    #expect(report.criticalChains.last?.links.last?.wait == .seconds(1))
  }

  @Test func timeBetweenAttemptsIsBackoffAndEachAttemptHasItsWork() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "retry": { "attempts": 2, "backoff": "500ms" } }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1))
    launch.advance(to: .milliseconds(1500))
    launch.succeed("a", at: .seconds(2))
    let step = try #require(launch.report().step("a"))
    #expect(step.waits == [Wait(reason: .backoff, start: .seconds(1), end: .milliseconds(1500))])
    #expect(
      step.work == [
        Work(attempt: 1, start: .zero, end: .seconds(1)),
        Work(attempt: 2, start: .milliseconds(1500), end: .seconds(2)),
      ])
  }

  @Test func aTimedOutAttemptsWorkEndsAtItsTimeout() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "timeout": "1s", "onFailure": "continue" }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    let step = try #require(launch.report().step("a"))
    #expect(step.work == [Work(attempt: 1, start: .zero, end: .seconds(1))])
  }

  @Test func aMainIsolatedStepWaitsForTheMainThreadAndHoldsItsSlotMeanwhile() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "ui", "plugin": "noop", "isolation": "main", "priority": "high" },
        { "id": "next", "plugin": "noop" }
      ] }
      """)
    launch.start()
    launch.began("ui", at: .milliseconds(300))
    launch.succeed("ui", at: .seconds(1))
    launch.succeed("next", at: .seconds(2))
    let report = launch.report()
    let ui = try #require(report.step("ui"))
    #expect(ui.waits == [Wait(reason: .main, start: .zero, end: .milliseconds(300))])
    #expect(ui.work == [Work(attempt: 1, start: .milliseconds(300), end: .seconds(1))])
    #expect(ui.duration == .seconds(1))
    #expect(
      report.step("next")?.waits == [
        Wait(reason: .concurrency, start: .zero, end: .seconds(1), heldBy: ["ui"])
      ])
    #expect(report.criticalChains.last?.links.map(\.step) == ["ui", "next"])
    #expect(report.criticalChains.last?.links.first?.work == .milliseconds(700))
    #expect(try LaunchReport(jsonText: report.jsonText) == report)
    let slices = try #require(report.chromeTrace["traceEvents"]?.elements).filter {
      $0["cat"] == "wait" && $0["args"]?["step"] == "ui"
    }
    #expect(slices.map { $0["name"] } == ["ui waits: main"])
    #expect(slices.map { $0["ts"] } == [0])
    #expect(slices.map { $0["dur"] } == [300_000])
  }

  @Test func eachAttemptOfAMainIsolatedStepHasItsOwnWaitForTheMainThread() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "ui", "plugin": "noop", "isolation": "main",
          "retry": { "attempts": 2, "backoff": "500ms" } }
      ] }
      """)
    launch.start()
    launch.began("ui", at: .milliseconds(200))
    launch.fail("ui", at: .seconds(1))
    launch.advance(to: .milliseconds(1500))
    launch.began("ui", at: .milliseconds(1800))
    launch.succeed("ui", at: .seconds(2))
    let step = try #require(launch.report().step("ui"))
    #expect(
      step.waits == [
        Wait(reason: .main, start: .zero, end: .milliseconds(200)),
        Wait(reason: .backoff, start: .seconds(1), end: .milliseconds(1500)),
        Wait(reason: .main, start: .milliseconds(1500), end: .milliseconds(1800)),
      ])
    #expect(
      step.work == [
        Work(attempt: 1, start: .milliseconds(200), end: .seconds(1)),
        Work(attempt: 2, start: .milliseconds(1800), end: .seconds(2)),
      ])
  }

  @Test func anAttemptThatTimedOutBeforeTheMainThreadRanItWaitedAllAlong() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "ui", "plugin": "noop", "isolation": "main", "timeout": "1s",
          "onFailure": "continue" }
      ] }
      """)
    launch.start()
    let token = try #require(launch.running["ui"]).token
    launch.advance(to: .seconds(1))
    launch.beganAbandoned(token: token, at: .milliseconds(1500))
    launch.finishAbandoned(token: token, at: .milliseconds(1600))
    let step = try #require(launch.report().step("ui"))
    #expect(step.state == .timedOut)
    #expect(step.waits == [Wait(reason: .main, start: .zero, end: .seconds(1))])
    #expect(step.work == [Work(attempt: 1, start: .seconds(1), end: .seconds(1))])
  }

  @Test func aMainIsolatedStepStartedWhileTheMainQueueIsBusyWaitsForIt() async throws {
    let clock = ManualClock()
    var registry = PluginRegistry.testKinds
    registry.register(kind: "ui") { context in try await context.sleep(for: .milliseconds(100)) }
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "ui", "plugin": "ui", "isolation": "main" },
        { "id": "probe", "plugin": "wait", "params": { "duration": "300ms" } }
      ] }
      """, registry: registry)
    // Holds the main queue (whichever thread drains it) until the clock has moved on.
    let release = DispatchSemaphore(value: 0)
    await withCheckedContinuation { held in
      DispatchQueue.main.async {
        held.resume()
        release.wait()
      }
    }
    let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
    // The probe asleep means the launch started both steps at 0s. `settle` would wait for
    // 'ui', which cannot start while the main queue is held.
    while clock.sleeperDeadlines != [.milliseconds(300)] {
      try await Task.sleep(for: .milliseconds(1))
    }
    // Time passes while the main queue is held.
    clock.jump(to: .milliseconds(300))
    release.signal()
    await clock.settle()
    #expect(clock.sleeperDeadlines == [.milliseconds(400)])
    await clock.advance(to: .milliseconds(400))
    let report = await launch.value
    let ui = try #require(report.step("ui"))
    #expect(ui.state == .succeeded)
    #expect(ui.start == .zero)
    #expect(ui.waits == [Wait(reason: .main, start: .zero, end: .milliseconds(300))])
    #expect(ui.work == [Work(attempt: 1, start: .milliseconds(300), end: .milliseconds(400))])
    #expect(report.step("probe")?.waits == [])
  }

  @Test func aStepWhoseDependencyNeverEndsIsNeverReady() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "onFailure": "continue" },
        { "id": "b", "plugin": "noop", "dependsOn": ["a"] }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1))
    let step = try #require(launch.report().step("b"))
    #expect(step.ready == nil)
    #expect(step.waits == [])
    #expect(step.work == [])
  }

  @Test func readsBackWaitsWorkAndChainsAndOlderReportsWithoutThem() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "milestones": { "interactive": ["b"] }, "steps": [
        { "id": "a", "plugin": "noop", "priority": "high" },
        { "id": "b", "plugin": "noop" }
      ] }
      """)
    launch.start()
    launch.succeed("a", at: .seconds(1))
    launch.succeed("b", at: .seconds(2))
    let report = launch.report()
    #expect(report.criticalChains.count == 2)
    #expect(try LaunchReport(jsonText: report.jsonText) == report)

    var older = report.json
    older = JSONValue(
      .object(
        older.members!.filter { $0.key != "criticalChains" }.map { member in
          guard member.key == "steps" else { return member }
          return JSONMember(
            key: "steps",
            value: JSONValue(
              .array(
                member.value.elements!.map { step in
                  JSONValue(
                    .object(
                      step.members!.filter { !["ready", "waits", "work"].contains($0.key) }))
                })))
        }))
    let read = try LaunchReport(jsonText: JSONWriter.prettyPrinted(older))
    #expect(read.criticalChains == [])
    #expect(read.steps.map(\.waits) == [[], []])
    #expect(read.steps.map(\.ready) == [nil, nil])
    #expect(read.criticalPath == ["a", "b"])
  }

  @Test func namesTheWaitThatIsMalformed() {
    let text = """
      { "manifest": "m.json", "name": "n", "outcome": "succeeded", "route": null,
        "duration": 1, "milestones": {}, "criticalPath": [],
        "steps": [ { "id": "a", "plugin": "noop", "state": "succeeded", "start": 0, "end": 1,
          "attempts": 1, "usedFallback": false, "error": null,
          "waits": [ { "reason": "lunch", "start": 0, "end": 1 } ] } ] }
      """
    #expect(throws: ReportFormatError.self) { try LaunchReport(jsonText: text) }
    do {
      _ = try LaunchReport(jsonText: text)
    } catch let error as ReportFormatError {
      #expect(error.description == "steps[0].waits[0].reason: missing or malformed")
    } catch {
      Issue.record("unexpected \(error)")
    }
  }
}
