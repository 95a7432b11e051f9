import Foundation
import LaunchJSON
import Testing

@testable import LaunchOrchestrator

@Suite("Report")
struct ReportTests {
  private func report() async throws -> LaunchReport {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "broken") { _ in throw StepFailure("no disk") }
    let plan = try loadPlan(
      """
      { "version": 1, "name": "Books", "defaults": { "onFailure": "continue" },
        "milestones": { "firstFrame": ["a"], "interactive": ["c"] },
        "steps": [
          { "id": "a", "plugin": "noop" },
          { "id": "b", "plugin": "broken", "dependsOn": ["a"] },
          { "id": "c", "plugin": "noop", "dependsOn": ["b"] }
        ] }
      """, registry: registry)
    return await LaunchEngine().run(plan)
  }

  @Test func writesTheDocumentedShape() async throws {
    let report = try await report()
    let json = report.json
    #expect(
      json.members?.map(\.key) == [
        "version", "manifest", "name", "outcome", "route", "error", "startedAt", "context", "app",
        "labels",
        "duration", "wallDuration", "sinceProcessStart",
        "pauses", "signals", "milestones", "splash",
        "criticalPath", "criticalChains", "steps",
      ])
    #expect(json["error"] == JSONValue(.null))
    #expect(json["splash"] == JSONValue(.null))
    #expect(json["manifest"] == "test.json")
    #expect(json["name"] == "Books")
    #expect(json["outcome"] == "degraded")
    #expect(json["route"] == JSONValue(.null))
    #expect(json["milestones"]?.members?.map(\.key) == ["firstFrame", "interactive"])
    let steps = try #require(json["steps"]?.elements)
    #expect(steps.count == 3)
    #expect(
      steps[0].members?.map(\.key) == [
        "id", "plugin", "state", "start", "end", "attempts", "usedFallback", "error", "notes",
        "ready", "waits", "work", "refresh", "reused", "priority", "deferUntil",
      ])
    #expect(steps[1]["state"] == "failed")
    #expect(steps[1]["error"] == "no disk")
    #expect(steps[2]["state"] == "skipped")
    #expect(steps[2]["start"] == JSONValue(.null))
    #expect(steps[2]["end"] == JSONValue(.null))
    #expect(steps[2]["attempts"] == 0)
    #expect(steps[2]["error"] == "dependency 'b' failed")
  }

  @Test func readsBackWhatItWrites() async throws {
    let written = LaunchReport(
      manifest: "app.json", name: "Gated", outcome: .routed, route: .maintenance,
      duration: .milliseconds(1250),
      milestones: [
        .init(name: "firstFrame", time: .milliseconds(40)), .init(name: "interactive", time: nil),
      ],
      criticalPath: ["gate"],
      steps: [
        .init(
          id: "gate", plugin: "gate.maintenance", state: .succeeded, start: .zero,
          end: .milliseconds(40),
          attempts: 1, usedFallback: false, error: nil),
        .init(
          id: "store", plugin: "store.init", state: .cancelled, start: .milliseconds(1),
          end: .milliseconds(1250),
          attempts: 2, usedFallback: true, error: nil),
        .init(
          id: "page", plugin: "music.page", state: .skipped, start: nil, end: nil, attempts: 0,
          usedFallback: false,
          error: "the launch was routed to 'maintenance' by 'gate'"),
      ])
    #expect(try LaunchReport(jsonText: written.jsonText) == written)
    let measured = try await report()
    #expect(
      try LaunchReport(jsonText: measured.jsonText).steps.map(\.state)
        == measured.steps.map(\.state))
  }

  /// A report with every field the format has, times not on round milliseconds.
  static func everyField() -> LaunchReport {
    var report = LaunchReport(
      manifest: "app \"one\".json", name: "Every field", outcome: .routed, route: .maintenance,
      duration: .nanoseconds(1_234_567_891),
      milestones: [
        .init(name: "firstFrame", time: .nanoseconds(40_000_500)),
        .init(name: "interactive", time: nil),
      ],
      criticalPath: ["gate", "results"],
      steps: [
        .init(
          id: "gate", plugin: "gate.maintenance", state: .succeeded, start: .nanoseconds(1_500),
          end: .nanoseconds(40_000_500), attempts: 2, usedFallback: true, error: nil,
          notes: ["retried once", "used the fallback"], ready: .zero,
          waits: [
            .init(
              reason: .concurrency, start: .zero, end: .nanoseconds(1_500), heldBy: ["a", "b"]),
            .init(reason: .backoff, start: .milliseconds(10), end: .milliseconds(20)),
          ],
          work: [
            .init(attempt: 1, start: .nanoseconds(1_500), end: .milliseconds(10)),
            .init(attempt: 2, start: .milliseconds(20), end: .nanoseconds(40_000_500)),
          ]),
        .init(
          id: "results", plugin: "results.load", state: .cached, start: .milliseconds(41),
          end: .milliseconds(41), attempts: 0, usedFallback: false, error: nil,
          ready: .milliseconds(41)),
        .init(
          id: "page", plugin: "music.page", state: .skipped, start: nil, end: nil, attempts: 0,
          usedFallback: false, error: "the launch was routed to 'maintenance' by 'gate'"),
      ],
      error: "no \u{1} control",
      splash: SplashTiming(contentAt: .milliseconds(300), skeletonFrom: nil))
    report.steps[1].refresh = .init(
      state: .failed, start: .milliseconds(42), end: .nanoseconds(99_123_456_789), attempts: 3,
      error: "no network", ready: .milliseconds(41),
      waits: [.init(reason: .main, start: .milliseconds(41), end: .milliseconds(42))],
      work: [.init(attempt: 1, start: .milliseconds(42), end: .nanoseconds(99_123_456_789))])
    report.criticalChains = [
      .init(
        milestone: "firstFrame",
        links: [
          .init(
            step: "gate", heldVia: nil, start: .nanoseconds(1_500), end: .nanoseconds(40_000_500),
            wait: .nanoseconds(1_500), work: .nanoseconds(29_999_000))
        ]),
      .init(
        milestone: nil,
        links: [
          .init(
            step: "gate", heldVia: nil, start: .nanoseconds(1_500), end: .nanoseconds(40_000_500),
            wait: .nanoseconds(1_500), work: .nanoseconds(29_999_000)),
          .init(
            step: "results", heldVia: .dependency, start: .milliseconds(41),
            end: .milliseconds(41), wait: .nanoseconds(999_500), work: .zero),
        ]),
    ]
    report.app = AppInfo(version: "2.3.0", build: "41")
    report.labels = LaunchLabels(arm: "deferred-store", device: nil)
    report.sinceProcessStart = .milliseconds(312)
    report.startedAt = Date(timeIntervalSince1970: 1_795_961_630.123456)
    report.steps[0].priority = .critical
    report.steps[1].priority = .background
    report.steps[1].deferUntil = "firstFrame"
    return report
  }

  @Test func aReportWrittenReadAndWrittenAgainIsTheSameText() async throws {
    let measured = try await report()
    for written in [Self.everyField(), measured] {
      let text = written.jsonText
      #expect(try LaunchReport(jsonText: text).jsonText == text)
    }
  }

  @Test func aTimeWithinHalfAMicrosecondOfAWholeSecondIsWrittenAsThatSecondAndReadsBackTheSame()
    throws
  {
    var report = Self.everyField()
    report.duration = .nanoseconds(99_999_999_999)
    report.steps[0].start = .nanoseconds(300)
    report.steps[0].end = .nanoseconds(1_000_000_400)
    let text = report.jsonText
    let json = report.json
    #expect(json["duration"].map(JSONWriter.compact) == "100")
    #expect(json["steps"]?.elements?[0]["start"].map(JSONWriter.compact) == "0")
    #expect(json["steps"]?.elements?[0]["end"].map(JSONWriter.compact) == "1")
    #expect(try LaunchReport(jsonText: text).jsonText == text)
  }

  /// The reader looks for each field from where it found the last; a key written twice still
  /// reads as its first, wherever the second one stands.
  @Test func readsTheFirstOfAKeyWrittenTwiceWhereverTheSecondStands() throws {
    let text = """
      { "manifest": "m.json", "name": "n", "outcome": "failed", "route": null,
        "duration": 1, "milestones": {}, "criticalPath": [],
        "steps": [ { "error": "first", "id": "a", "plugin": "noop", "state": "failed",
          "start": 0, "end": 1, "attempts": 1, "usedFallback": false, "error": "second",
          "attempts": 7 } ] }
      """
    let document = try JSONParser.parse(Array(text.utf8))
    #expect(document.duplicateKeys.count == 2)
    for report in [try LaunchReport(jsonText: text), try LaunchReport(json: document.root)] {
      #expect(report.steps.first?.error == "first")
      #expect(report.steps.first?.attempts == 1)
    }
  }

  @Test func namesTheFieldThatIsWrongInABrokenReport() {
    #expect(throws: ReportFormatError.self) { try LaunchReport(jsonText: "{}") }
    do {
      _ = try LaunchReport(jsonText: #"{ "steps": [ { "id": 3 } ] }"#)
    } catch let error as ReportFormatError {
      #expect(error.description == "steps[0].id: missing or malformed")
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test func refusesAReportThatListsAStepTwice() throws {
    let report = LaunchReport(
      manifest: "app.json", name: "App", outcome: .succeeded, route: nil, duration: .seconds(1),
      milestones: [], criticalPath: [],
      steps: ["a", "b", "a"].map {
        LaunchReport.Step(
          id: $0, plugin: "noop", state: .succeeded, start: .zero, end: .zero, attempts: 1,
          usedFallback: false, error: nil)
      })
    #expect(throws: ReportFormatError.self) { try LaunchReport(jsonText: report.jsonText) }
    do {
      _ = try LaunchReport(jsonText: report.jsonText)
    } catch let error as ReportFormatError {
      #expect(error.description == "steps[2].id: the step 'a' is listed twice")
    }
  }

  @Test func namesTheFirstMalformedFieldAtAnyDepthAndReadsIntegersOnlyWhenWhole() throws {
    let text = Self.everyField().jsonText
    func error(replacing old: String, with new: String) throws -> String? {
      let broken = text.replacingOccurrences(of: old, with: new)
      try #require(broken != text)
      do {
        _ = try LaunchReport(jsonText: broken)
        return nil
      } catch let error as ReportFormatError {
        return error.description
      }
    }
    let malformed = [
      (#""attempts": 2"#, #""attempts": 1.5"#, "steps[0].attempts"),
      (#""attempts": 2"#, #""attempts": 9223372036854775808"#, "steps[0].attempts"),
      (#""state": "failed""#, #""state": "lost""#, "steps[1].refresh.state"),
      (#""heldVia": "dependency""#, #""heldVia": 1"#, "criticalChains[1].links[1].heldVia"),
      (#""firstFrame": 0.040001"#, #""firstFrame": -1"#, "milestones.firstFrame"),
      (#""version": 6"#, #""version": 0"#, "version"),
      (#""criticalPath": ["#, #""criticalPath": [ 1,"#, "criticalPath"),
    ]
    for (old, new, path) in malformed {
      #expect(try error(replacing: old, with: new) == "\(path): missing or malformed")
    }
    #expect(try error(replacing: #""attempts": 2"#, with: #""attempts": 2.0e0"#) == nil)
  }

  @Test func readsEarlierFormatsAndRefusesALaterOneNamingItsVersion() throws {
    let cached = LaunchReport(
      manifest: "s.json", name: "S", outcome: .succeeded, route: nil, duration: .seconds(1),
      milestones: [], criticalPath: ["results"],
      steps: [
        .init(
          id: "results", plugin: "results.load", state: .cached, start: .zero, end: .zero,
          attempts: 0, usedFallback: false, error: nil)
      ])
    var withRefresh = cached
    withRefresh.steps[0].refresh = .init(
      state: .failed, start: .milliseconds(5), end: .milliseconds(9), attempts: 1,
      error: "no network", work: [.init(attempt: 1, start: .milliseconds(5), end: .milliseconds(9))]
    )
    #expect(try LaunchReport(jsonText: withRefresh.jsonText) == withRefresh)
    let text = withRefresh.jsonText
    let unversioned = text.replacingOccurrences(of: #""version": 6,"#, with: "")
    #expect(unversioned != text)
    #expect(try LaunchReport(jsonText: unversioned).steps[0].refresh?.error == "no network")
    let later = text.replacingOccurrences(of: #""version": 6"#, with: #""version": 7"#)
    #expect {
      try LaunchReport(jsonText: later)
    } throws: {
      "\($0)"
        == "version: the report is format 7, and this build reads formats up to 6; use a newer orchestrate"
    }
  }

  @Test func followsTheLatestFinishingPredecessorForTheCriticalPath() throws {
    let manifest = """
      { "version": 1, "milestones": { "interactive": ["slow", "fast"] }, "steps": [
        { "id": "slow", "plugin": "noop" },
        { "id": "fast", "plugin": "noop" },
        { "id": "join", "plugin": "noop", "dependsOn": ["slow", "fast"] },
        { "id": "deferred", "plugin": "noop", "deferUntil": "interactive" }
      ] }
      """
    func criticalPath(joinEndsAt joinEnd: Int) throws -> [String] {
      var launch = try SchedulerHarness(manifest)
      launch.start()
      launch.succeed("fast", at: .seconds(1))
      launch.succeed("slow", at: .seconds(3))
      if joinEnd < 6 {
        launch.succeed("join", at: .seconds(joinEnd))
        launch.succeed("deferred", at: .seconds(6))
      } else {
        launch.succeed("deferred", at: .seconds(6))
        launch.succeed("join", at: .seconds(joinEnd))
      }
      return launch.report().criticalPath
    }
    #expect(try criticalPath(joinEndsAt: 4) == ["slow", "deferred"])
    #expect(try criticalPath(joinEndsAt: 7) == ["slow", "join"])
  }
}
