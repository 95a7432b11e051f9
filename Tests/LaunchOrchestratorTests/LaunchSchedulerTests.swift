import Testing

@testable import LaunchOrchestrator

@Suite("Scheduling rules")
struct LaunchSchedulerTests {
  @Test func startsEveryStepTheMomentItsDependenciesSucceed() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "b", "plugin": "noop" },
        { "id": "c", "plugin": "noop", "dependsOn": ["a"] },
        { "id": "d", "plugin": "noop", "dependsOn": ["a", "b"] }
      ] }
      """)
    launch.start()
    #expect(launch.runningSteps == ["a", "b"])
    launch.succeed("a", at: .seconds(1))
    #expect(launch.runningSteps == ["b", "c"])
    launch.succeed("b", at: .seconds(2))
    launch.succeed("c", at: .seconds(2))
    launch.succeed("d", at: .seconds(3))
    #expect(
      launch.takeLog() == [
        "0s start a", "0s start b", "1s done a", "1s start c", "2s done b", "2s start d",
        "2s done c", "3s done d",
        "3s finish succeeded",
      ])
  }

  @Test func startsHigherPriorityFirstUnderAConcurrencyLimit() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "low", "plugin": "noop", "priority": "low" },
        { "id": "normal", "plugin": "noop" },
        { "id": "critical", "plugin": "noop", "priority": "critical" },
        { "id": "high", "plugin": "noop", "priority": "high" },
        { "id": "background", "plugin": "noop", "priority": "background" }
      ] }
      """)
    launch.start()
    var order: [String] = []
    for second in 1...5 {
      let current = try #require(launch.runningSteps.first)
      #expect(launch.runningSteps.count == 1)
      order.append(current)
      launch.succeed(current, at: .seconds(second))
    }
    #expect(order == ["critical", "high", "normal", "low", "background"])
  }

  @Test func breaksPriorityTiesByLongerRemainingPathThenManifestOrder() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "short", "plugin": "noop" },
        { "id": "alsoShort", "plugin": "noop" },
        { "id": "long", "plugin": "noop", "expectedDuration": "1s" },
        { "id": "tail", "plugin": "noop", "dependsOn": ["long"], "expectedDuration": "2s" }
      ] }
      """)
    launch.start()
    #expect(launch.runningSteps == ["long"])
    launch.succeed("long", at: .seconds(1))
    #expect(launch.runningSteps == ["tail"])
    launch.succeed("tail", at: .seconds(3))
    #expect(launch.runningSteps == ["short"])
  }

  /// `store` is `background`; `search`, on demand and `critical`, waits for it.
  private static let searchBehindBackgroundWork = """
    { "version": 1, "maxConcurrency": 1, "steps": [
      { "id": "first", "plugin": "noop" },
      { "id": "page", "plugin": "noop" },
      { "id": "index", "plugin": "noop", "priority": "background" },
      { "id": "store", "plugin": "noop", "priority": "background", "after": ["index"] },
      { "id": "search", "plugin": "noop", "priority": "critical", "trigger": "onDemand",
        "dependsOn": ["store"] }
    ] }
    """

  @Test func anOnDemandStepLendsItsPriorityOnlyOnceEnsured() throws {
    var never = try SchedulerHarness(Self.searchBehindBackgroundWork)
    never.start()
    var order: [String] = []
    for second in 1...4 {
      let current = try #require(never.runningSteps.first)
      order.append(current)
      never.succeed(current, at: .seconds(second))
    }
    // Never ensured: the launch's own work goes first.
    #expect(order == ["first", "page", "index", "store"])

    var ensured = try SchedulerHarness(Self.searchBehindBackgroundWork)
    ensured.start()
    ensured.activate("search", at: .zero)
    order = []
    for second in 1...5 {
      let current = try #require(ensured.runningSteps.first)
      order.append(current)
      ensured.succeed(current, at: .seconds(second))
    }
    // Ensured (a tap on search): what it waits for, and what that waits for, goes first.
    #expect(order == ["first", "index", "store", "search", "page"])
  }

  /// Runs what is running one step at a time (`maxConcurrency` 1), each ending a second after
  /// the last, and returns the order they ran in.
  private static func drain(_ launch: inout SchedulerHarness, from second: Int, count: Int)
    -> [String]
  {
    var order: [String] = []
    for second in second..<(second + count) {
      guard let current = launch.runningSteps.first else { break }
      order.append(current)
      launch.succeed(current, at: .seconds(second))
    }
    return order
  }

  @Test func anEnsuredStepLendsThroughItsOnDemandPrerequisitesAndTheirOwnPriority() throws {
    // `index` is on demand and `critical`: ensured as `search`'s prerequisite, it lends its
    // own priority, which the plan lends to nothing.
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "first", "plugin": "noop" },
        { "id": "page", "plugin": "noop", "priority": "high" },
        { "id": "store", "plugin": "noop", "priority": "background" },
        { "id": "index", "plugin": "noop", "priority": "critical", "trigger": "onDemand",
          "dependsOn": ["store"] },
        { "id": "search", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["index"] }
      ] }
      """)
    launch.start()
    launch.activate("search", at: .zero)
    #expect(
      Self.drain(&launch, from: 1, count: 5) == ["page", "store", "index", "first", "search"])
  }

  @Test func aRunningPrerequisiteIsRaisedForTheRetryItMayStillNeed() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "store", "plugin": "noop", "priority": "background", "retry": { "attempts": 2 } },
        { "id": "page", "plugin": "noop", "delay": "1s" },
        { "id": "search", "plugin": "noop", "priority": "critical", "trigger": "onDemand",
          "dependsOn": ["store"] }
      ] }
      """)
    launch.start()
    launch.activate("search", at: .zero)
    launch.advance(to: .seconds(1))
    launch.fail("store", at: .seconds(2))
    #expect(Self.drain(&launch, from: 3, count: 3) == ["store", "search", "page"])
  }

  @Test func aPrerequisiteServedFromTheCacheRaisesNothingBehindIt() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "first", "plugin": "noop" },
        { "id": "page", "plugin": "noop" },
        { "id": "index", "plugin": "noop", "priority": "background" },
        { "id": "store", "plugin": "noop", "priority": "background", "dependsOn": ["index"] },
        { "id": "search", "plugin": "noop", "priority": "critical", "trigger": "onDemand",
          "dependsOn": ["store"] }
      ] }
      """)
    launch.start(served: ["store"])
    launch.activate("search", at: .zero)
    // Only the served store's refresh waits for `index`; `search` waits for nothing.
    #expect(
      Self.drain(&launch, from: 1, count: 5) == ["first", "search", "page", "index", "store"])
  }

  @Test func aStepSkippedAsItIsEnsuredLendsNothing() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "bad", "plugin": "noop", "priority": "critical", "onFailure": "continue" },
        { "id": "page", "plugin": "noop" },
        { "id": "later", "plugin": "noop" },
        { "id": "slow", "plugin": "noop", "priority": "background" },
        { "id": "search", "plugin": "noop", "priority": "critical", "trigger": "onDemand",
          "dependsOn": ["bad"], "after": ["slow"] }
      ] }
      """)
    launch.start()
    launch.fail("bad", at: .seconds(1))
    launch.activate("search", at: .seconds(1))
    #expect(launch.scheduler.records[4].state == .skipped)
    #expect(Self.drain(&launch, from: 2, count: 3) == ["page", "later", "slow"])
  }

  @Test func dependentsOfALowPriorityStepLendItTheirPriority() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "normal", "plugin": "noop" },
        { "id": "prerequisite", "plugin": "noop", "priority": "background" },
        { "id": "urgent", "plugin": "noop", "priority": "critical", "dependsOn": ["prerequisite"] }
      ] }
      """)
    launch.start()
    #expect(launch.runningSteps == ["prerequisite"])
  }

  @Test func skipsDependentsOfAFailedStepButRunsOrderingOnlyOnes() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "defaults": { "onFailure": "continue" }, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "hard", "plugin": "noop", "dependsOn": ["a"] },
        { "id": "hardOfHard", "plugin": "noop", "dependsOn": ["hard"] },
        { "id": "soft", "plugin": "noop", "after": ["a"] }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1))
    #expect(launch.runningSteps == ["soft"])
    launch.succeed("soft", at: .seconds(2))
    #expect(
      launch.takeLog() == [
        "0s start a", "1s fail a: boom", "1s skip hard: dependency 'a' failed",
        "1s skip hardOfHard: dependency 'hard' was skipped", "1s start soft", "2s done soft",
        "2s finish degraded",
      ])
    #expect(launch.scheduler.records[1].start == nil)
    #expect(launch.scheduler.records[1].end == nil)
  }

  @Test func aLaunchAbortedByATimeoutSaysTheStepTimedOut() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop", "timeout": "1s" },
        { "id": "gate", "plugin": "noop" },
        { "id": "later", "plugin": "noop", "dependsOn": ["gate"] },
        { "id": "index", "plugin": "noop", "trigger": "onDemand" }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    #expect(
      launch.takeLog().contains("1s skip later: the launch was aborted because 'store' timed out"))
    // The timed-out attempt still holds its slot: the launch is ending, not over.
    launch.activate("index", at: .seconds(2))
    #expect(
      launch.report().step("index")?.error
        == "the launch was ending ('store' timed out) when it was ensured")
  }

  /// Once a launch that failed, was routed or was cancelled is over, an on-demand step the
  /// app ensures runs as after a launch that succeeded (the login screen a gate routed to
  /// asks for its step); one that needs a step the ending skipped is skipped for it, and one
  /// asked for while the ending still waits for a running step is skipped as the launch's.
  @Test(arguments: ["fail", "route", "cancel"])
  func anOnDemandStepEnsuredAfterALaunchThatEndedEarlyRuns(ending: String) throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "gate", "plugin": "noop" },
        { "id": "slow", "plugin": "noop" },
        { "id": "feed", "plugin": "noop", "dependsOn": ["gate"] },
        { "id": "terms", "plugin": "noop", "trigger": "onDemand" },
        { "id": "search", "plugin": "noop", "trigger": "onDemand", "dependsOn": ["feed"] }
      ] }
      """)
    launch.start()
    switch ending {
    case "fail": launch.fail("gate", at: .seconds(1))
    case "route": launch.route("gate", to: LaunchRoute("login"), at: .seconds(1))
    default: launch.cancel(at: .seconds(1))
    }
    // `slow` still runs (it is stopping): the launch is ending, not over.
    launch.activate("terms", at: .seconds(1))
    #expect(launch.report().step("terms")?.state == .skipped)
    #expect(launch.report().step("terms")?.error?.hasPrefix("the launch was ending (") == true)
    if ending == "cancel" { launch.finish("gate", .failed("cancelled"), at: .seconds(2)) }
    launch.finish("slow", ending == "cancel" ? .failed("cancelled") : .succeeded, at: .seconds(2))
    _ = launch.takeLog()
    let outcome = launch.report().outcome

    launch.activate("terms", at: .seconds(3))
    #expect(launch.takeLog() == ["3s start terms"])
    launch.succeed("terms", at: .seconds(4))
    launch.activate("search", at: .seconds(5))
    #expect(launch.report().step("terms")?.state == .succeeded)
    #expect(launch.report().step("search")?.state == .skipped)
    #expect(launch.report().step("search")?.error?.hasPrefix("dependency 'feed'") == true)
    #expect(launch.report().outcome == outcome)
  }

  @Test func abortsTheLaunchWhenAnAbortStepFails() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop" },
        { "id": "other", "plugin": "noop" },
        { "id": "later", "plugin": "noop", "dependsOn": ["other"] },
        { "id": "unrelated", "plugin": "noop", "after": ["other"] }
      ] }
      """, gracePeriod: .seconds(2))
    launch.start()
    launch.fail("store", at: .seconds(1), "disk full")
    #expect(
      launch.takeLog() == [
        "0s start other", "0s start store", "1s fail store: disk full",
        "1s skip later: the launch was aborted because 'store' failed",
        "1s skip unrelated: the launch was aborted because 'store' failed",
      ])
    #expect(launch.cancelledTokens.count == 1)
    launch.succeed("other", at: .milliseconds(1500))
    #expect(launch.takeLog() == ["1.5s cancel other", "1.5s finish failed"])
    #expect(launch.scheduler.outcome == .failed)
  }

  @Test func retriesWithExponentialBackoffThenSucceeds() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "retry": { "attempts": 3, "backoff": "100ms" } }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1))
    #expect(launch.runningSteps.isEmpty)
    #expect(launch.nextDeadline() == .milliseconds(1100))
    launch.advance(to: .milliseconds(1100))
    launch.fail("a", at: .milliseconds(1200))
    #expect(launch.nextDeadline() == .milliseconds(1400))
    launch.advance(to: .milliseconds(1400))
    launch.succeed("a", at: .milliseconds(1500))
    #expect(
      launch.takeLog() == [
        "0s start a", "1s retry a#2 in 100ms after: boom", "1.1s start a#2",
        "1.2s retry a#3 in 200ms after: boom",
        "1.4s start a#3", "1.5s done a", "1.5s finish succeeded",
      ])
    #expect(launch.scheduler.records[0].attempts == 3)
    #expect(launch.scheduler.records[0].start == .zero)
  }

  @Test func runsTheFallbackAfterTheLastRetryAndReportsIt() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "noop", "retry": { "attempts": 2, "backoff": 0 }, "fallback": {} },
        { "id": "page", "plugin": "noop", "dependsOn": ["store"] }
      ] }
      """)
    launch.start()
    launch.fail("store", at: .seconds(1))
    launch.fail("store", at: .seconds(2))
    #expect(launch.running["store"]?.isFallback == true)
    launch.succeed("store", at: .seconds(3))
    launch.succeed("page", at: .seconds(4))
    #expect(
      launch.takeLog() == [
        "0s start store", "1s retry store#2 in 0s after: boom", "1s start store#2",
        "2s fallback store after: boom",
        "2s start store#3", "3s done store (fallback)", "3s start page", "4s done page",
        "4s finish succeeded",
      ])
    #expect(launch.scheduler.records[0].usedFallback)
    #expect(launch.scheduler.records[0].attempts == 3)
  }

  @Test func aFailedFallbackFailsTheStep() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "onFailure": "continue", "fallback": {} }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1), "first")
    launch.fail("a", at: .seconds(2), "second")
    #expect(launch.takeLog().suffix(2) == ["2s fail a: second", "2s finish degraded"])
    #expect(launch.scheduler.records[0].usedFallback == false)
  }

  @Test func timesOutAnAttemptAtItsDeadlineAndIgnoresItsLateResult() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "defaults": { "timeout": "5s" }, "steps": [
        { "id": "hang", "plugin": "noop", "onFailure": "continue" },
        { "id": "next", "plugin": "noop", "after": ["hang"] }
      ] }
      """)
    launch.start()
    let token = try #require(launch.running["hang"]?.token)
    #expect(launch.nextDeadline() == .seconds(5))
    launch.advance(to: .seconds(5))
    #expect(launch.cancelledTokens == [token])
    #expect(launch.runningSteps == ["next"])
    launch.finishAbandoned(token: token, at: .seconds(6))
    launch.succeed("next", at: .seconds(7))
    #expect(
      launch.takeLog() == [
        "0s start hang", "5s timeout hang 5s", "5s start next", "7s done next",
        "7s finish degraded",
      ])
    #expect(launch.scheduler.records[0].state == .timedOut)
    #expect(launch.scheduler.records[0].error == "timed out after 5s")
  }

  @Test func givesEachRetryItsOwnTimeoutOnceThePreviousAttemptHasEnded() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "timeout": "1s", "retry": { "attempts": 2, "backoff": "500ms" } }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    // The timed-out attempt is cancelled; the next waits for it to end (or its grace period),
    // and for its backoff, counted from the timeout, as the event says.
    #expect(launch.nextDeadline() == .seconds(2))
    launch.finishAbandoned(token: 0, at: .milliseconds(1200))
    #expect(launch.nextDeadline() == .milliseconds(1500))
    launch.advance(to: .milliseconds(1500))
    #expect(launch.nextDeadline() == .milliseconds(2500))
    launch.advance(to: .milliseconds(2500))
    // The last attempt ignores its cancellation: the launch ends when its grace period does.
    launch.advance(to: .milliseconds(3500))
    #expect(
      launch.takeLog() == [
        "0s start a", "1s retry a#2 in 500ms after: timed out after 1s", "1.5s start a#2",
        "2.5s timeout a 1s", "3.5s finish failed",
      ])
    #expect(
      launch.scheduler.records[0].notes == [
        "attempt 2 did not stop within 1s of its timeout and was abandoned"
      ])
  }

  @Test func aTimedOutAttemptThatEndsPastTheBackoffIsFollowedAtOnce() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "timeout": "1s", "retry": { "attempts": 2, "backoff": "200ms" } }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    launch.advance(to: .milliseconds(1200))
    // The backoff is over; two attempts of one step still never run at once.
    #expect(launch.runningSteps.isEmpty)
    launch.finishAbandoned(token: 0, at: .milliseconds(1400))
    #expect(launch.runningSteps == ["a"])
    launch.succeed("a", at: .milliseconds(1500))
    #expect(
      launch.takeLog() == [
        "0s start a", "1s retry a#2 in 200ms after: timed out after 1s", "1.4s start a#2",
        "1.5s done a", "1.5s finish succeeded",
      ])
  }

  /// An attempt abandoned after its timeout frees its slot, but its step's next attempt still
  /// waits for it to end: two attempts of a step never run at once.
  @Test func aNextAttemptWaitsForItsAbandonedAttemptToEnd() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "timeout": "1s", "retry": { "attempts": 2, "backoff": "100ms" } }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    launch.advance(to: .seconds(2))
    #expect(launch.runningSteps.isEmpty)
    launch.finishAbandoned(token: 0, at: .milliseconds(2_500))
    #expect(launch.runningSteps == ["a"])
    launch.succeed("a", at: .seconds(3))
    #expect(
      launch.takeLog() == [
        "0s start a", "1s retry a#2 in 100ms after: timed out after 1s",
        "2s log a: waiting for attempt 1, abandoned after it timed out, to end: two attempts of a step never run at once",
        "2.5s start a#2", "3s done a", "3s finish succeeded",
      ])
    // The wait is the step's backoff: from the timed-out attempt's end to the next's turn.
    #expect(
      launch.report().step("a")?.waits == [
        LaunchReport.Wait(reason: .backoff, start: .seconds(1), end: .milliseconds(2_500))
      ])
  }

  /// The step's timeout bounds the wait for an abandoned attempt: the step then fails, its
  /// further attempts and fallback untried, since each would run beside it.
  @Test func aStepFailsWhenItsAbandonedAttemptOutlastsItsTimeout() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop", "timeout": "1s", "onFailure": "continue",
          "retry": { "attempts": 3, "backoff": "100ms" }, "fallback": { "params": {} } },
        { "id": "b", "plugin": "noop", "dependsOn": ["a"] }
      ] }
      """)
    launch.start()
    launch.advance(to: .seconds(1))
    launch.advance(to: .seconds(2))
    #expect(launch.nextDeadline() == .seconds(3))
    launch.advance(to: .seconds(3))
    let reason =
      "attempt 1, abandoned after it timed out, was still running after 1s (the step's timeout): the step did not run again beside it"
    #expect(
      launch.takeLog() == [
        "0s start a", "1s retry a#2 in 100ms after: timed out after 1s",
        "2s log a: waiting for attempt 1, abandoned after it timed out, to end: two attempts of a step never run at once",
        "3s fail a: \(reason)", "3s skip b: dependency 'a' failed", "3s finish degraded",
      ])
    #expect(launch.scheduler.records[0].attempts == 1)
    #expect(launch.scheduler.records[0].error == reason)
    // Its end comes too late to change anything.
    launch.finishAbandoned(token: 0, at: .seconds(4))
    #expect(launch.takeLog().isEmpty)
  }

  /// An on-demand step ensured again while its timed-out attempt still stops, then after that
  /// attempt was abandoned, starts only once it has ended.
  @Test func anOnDemandStepEnsuredAgainWaitsForItsTimedOutAttempt() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "search", "plugin": "noop", "trigger": "onDemand", "timeout": "1s" }
      ] }
      """)
    launch.start()
    launch.activate("search", at: .zero)
    launch.advance(to: .seconds(1))
    launch.activate("search", at: .milliseconds(1_500))
    #expect(launch.runningSteps.isEmpty)
    // Its grace period ends: abandoned, still running, and still waited for.
    launch.advance(to: .seconds(2))
    #expect(launch.runningSteps.isEmpty)
    launch.finishAbandoned(token: 0, at: .milliseconds(2_200))
    #expect(launch.runningSteps == ["search"])
    #expect(
      launch.takeLog() == [
        "0s finish succeeded", "0s start search", "1s timeout search 1s",
        "1.5s log search: waiting for attempt 1, which timed out and is still stopping, to end: two attempts of a step never run at once",
        "2.2s start search#2",
      ])
  }

  @Test func holdsTheConcurrencySlotOfATimedOutStepUntilItStops() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "hang", "plugin": "noop", "timeout": "2s", "onFailure": "continue",
          "expectedDuration": "5s" },
        { "id": "waiting", "plugin": "noop" },
        { "id": "last", "plugin": "noop", "timeout": "1s", "onFailure": "continue", "after": ["waiting"] }
      ] }
      """)
    launch.start()
    #expect(launch.runningSteps == ["hang"])
    launch.advance(to: .seconds(2))
    #expect(launch.runningSteps == [])
    launch.finishAbandoned(token: 0, at: .milliseconds(2300))
    #expect(launch.runningSteps == ["waiting"])
    launch.succeed("waiting", at: .milliseconds(2400))
    // One that never stops frees its slot when its grace period ends, and is named.
    launch.advance(to: .milliseconds(3400))
    launch.advance(to: .milliseconds(4400))
    #expect(
      launch.takeLog() == [
        "0s start hang", "2s timeout hang 2s", "2.3s start waiting", "2.4s done waiting",
        "2.4s start last", "3.4s timeout last 1s", "4.4s finish degraded",
      ])
    #expect(
      launch.scheduler.records[2].notes == [
        "attempt 1 did not stop within 1s of its timeout and was abandoned"
      ])
  }

  @Test func waitsForADelayAfterBecomingReady() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "noop" },
        { "id": "later", "plugin": "noop", "after": ["a"], "delay": "2s" }
      ] }
      """)
    launch.start()
    launch.succeed("a", at: .seconds(1))
    #expect(launch.runningSteps.isEmpty)
    #expect(launch.nextDeadline() == .seconds(3))
    launch.advance(to: .seconds(3))
    #expect(launch.runningSteps == ["later"])
  }

  @Test func defersAStepUntilItsMilestoneIsReached() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1,
        "milestones": { "firstFrame": ["ui"], "interactive": ["ui", "store"] },
        "steps": [
          { "id": "store", "plugin": "noop" },
          { "id": "ui", "plugin": "noop" },
          { "id": "cleanup", "plugin": "noop", "deferUntil": "interactive", "priority": "background" }
        ] }
      """)
    launch.start()
    #expect(launch.runningSteps == ["store", "ui"])
    launch.succeed("ui", at: .milliseconds(100))
    launch.succeed("store", at: .seconds(1))
    launch.succeed("cleanup", at: .seconds(2))
    #expect(
      launch.takeLog() == [
        "0s start store", "0s start ui", "100ms done ui", "100ms milestone firstFrame",
        "1s done store",
        "1s milestone interactive", "1s start cleanup", "2s done cleanup", "2s finish succeeded",
      ])
    #expect(launch.scheduler.milestoneTimes == [.milliseconds(100), .seconds(1)])
  }

  @Test func reachesAMilestoneWhenItsStepsFinishHoweverTheyEnd() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "defaults": { "onFailure": "continue" },
        "milestones": { "interactive": ["a", "b"] },
        "steps": [
          { "id": "a", "plugin": "noop" },
          { "id": "b", "plugin": "noop", "dependsOn": ["a"] }
        ] }
      """)
    launch.start()
    launch.fail("a", at: .seconds(1))
    #expect(launch.takeLog().contains("1s milestone interactive"))
  }

  @Test func aRouteEndsTheLaunchCancellingRunningAndSkippingWaitingSteps() throws {
    // The routing step reaches none of its milestones: the app goes to the route's screen,
    // never to content it routed away from.
    var launch = try SchedulerHarness(
      """
      { "version": 1, "milestones": { "firstFrame": ["gate"] }, "steps": [
        { "id": "gate", "plugin": "noop" },
        { "id": "store", "plugin": "noop" },
        { "id": "page", "plugin": "noop", "dependsOn": ["store"] }
      ] }
      """)
    launch.start()
    launch.route("gate", to: .maintenance, at: .milliseconds(50))
    #expect(
      launch.takeLog() == [
        "0s start store", "0s start gate", "50ms route maintenance by gate", "50ms done gate",
        "50ms skip page: the launch was routed to 'maintenance' by 'gate'",
      ])
    #expect(launch.scheduler.milestoneTimes == [nil])
    launch.advance(to: .milliseconds(1050))
    #expect(launch.takeLog() == ["1.05s cancel store", "1.05s finish routed"])
    #expect(launch.scheduler.ending == .routed(.maintenance, step: 0))
  }

  @Test func cancellingTheLaunchCancelsRunningFailsBackingOffAndSkipsTheRest() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "milestones": { "interactive": ["b"] }, "steps": [
        { "id": "a", "plugin": "noop", "retry": { "attempts": 2, "backoff": "1s" } },
        { "id": "b", "plugin": "noop" },
        { "id": "c", "plugin": "noop", "dependsOn": ["b"] }
      ] }
      """)
    launch.start()
    launch.fail("a", at: .milliseconds(100))
    launch.cancel(at: .milliseconds(200))
    launch.succeed("b", at: .milliseconds(300))
    #expect(
      launch.takeLog() == [
        "0s start b", "0s start a", "100ms retry a#2 in 1s after: boom",
        "200ms fail a: attempt 1 failed (boom) and the launch was cancelled before attempt 2",
        "200ms skip c: the launch was cancelled", "300ms cancel b", "300ms finish cancelled",
      ])
    #expect(launch.scheduler.records[0].state == .failed)
    #expect(launch.scheduler.outcome == .cancelled)
    #expect(launch.scheduler.milestoneTimes == [nil])
  }

  @Test func aRetryWaitingForASlotWhenTheLaunchEndsIsReportedFailed() throws {
    var launch = try SchedulerHarness(
      """
      { "version": 1, "maxConcurrency": 1, "steps": [
        { "id": "a", "plugin": "noop", "priority": "low",
          "retry": { "attempts": 2, "backoff": "100ms" } },
        { "id": "b", "plugin": "noop", "priority": "critical", "delay": "500ms" }
      ] }
      """)
    launch.start()
    launch.advance(to: .milliseconds(500))
    launch.fail("a", at: .seconds(1))
    #expect(launch.runningSteps == ["b"])
    launch.advance(to: .milliseconds(1100))
    launch.fail("b", at: .seconds(2))
    let log = launch.takeLog()
    #expect(
      log.contains(
        "2s fail a: attempt 1 failed (boom) and the launch was aborted because 'b' failed before attempt 2"
      ))
    #expect(launch.scheduler.records[0].state == .failed)
  }

  @Test func aLaunchWithNoStepsFinishesAtOnce() throws {
    var launch = try SchedulerHarness(
      #"{ "version": 1, "milestones": { "ready": [] }, "steps": [] }"#)
    launch.start()
    #expect(launch.takeLog() == ["0s milestone ready", "0s finish succeeded"])
  }

  @Test func skipsCascadeDownAVeryLongChainWithoutRecursion() throws {
    let count = 20_000
    var steps = [#"{ "id": "s0", "plugin": "noop" }"#]
    for index in 1..<count {
      steps.append(#"{ "id": "s\#(index)", "plugin": "noop", "dependsOn": ["s\#(index - 1)"] }"#)
    }
    var launch = try SchedulerHarness(
      #"{ "version": 1, "defaults": { "onFailure": "continue" }, "steps": [\#(steps.joined(separator: ","))] }"#
    )
    launch.start()
    launch.fail("s0", at: .seconds(1))
    let log = launch.takeLog()
    #expect(log.count == count + 2)
    #expect(log.last == "1s finish degraded")
  }
}
