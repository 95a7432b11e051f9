import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

@Suite("orchestrate run", .timeLimit(.minutes(10)))
struct RunCommandTests {
  @Test func runsTheShippedBooksLaunchTwiceInARow() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("app.json")
    let first = try await Orchestrate.run(["run", manifest, "--report", folder.path("first.json")])
    #expect(first.status == 0)
    #expect(first.stderr.isEmpty)
    #expect(first.stdout.contains("BooksTrack: succeeded in "))
    #expect(first.stdout.contains("critical path: store -> sampleData -> books -> queue -> images"))
    let report = try readReport(folder.path("first.json"))
    #expect(report.steps.map(\.id) == ["store", "sampleData", "books", "queue", "images"])
    #expect(report.steps.allSatisfy { $0.state == .succeeded })
    #expect(report.step("sampleData")?.notes == ["added 7 sample items"])
    #expect(
      report.step("books")?.notes == [
        "loaded 7 books by recentlyAdded from offset 0 (hasMore: false)"
      ])
    let interactive = try #require(report.time(ofMilestone: "interactive") ?? nil)
    #expect(try #require(report.step("queue")?.start) >= interactive)
    #expect(FileManager.default.fileExists(atPath: folder.path(".data/library.sqlite")))

    let second = try await Orchestrate.run([
      "run", manifest, "--report", folder.path("second.json"),
    ])
    #expect(second.status == 0)
    let again = try readReport(folder.path("second.json"))
    #expect(again.step("store")?.notes == [])
    #expect(
      again.step("sampleData")?.notes == ["the library already has items; no sample data added"])
    #expect(again.step("books")?.notes == report.step("books")?.notes)
  }

  @Test func runsTheShippedMusicLaunch() async throws {
    let folder = try TemporaryFolder()
    let result = try await Orchestrate.run([
      "run", try folder.copyShipped("music.json"), "--report", folder.path("r.json"),
    ])
    #expect(result.status == 0)
    let report = try readReport(folder.path("r.json"))
    #expect(
      report.step("firstPage")?.notes == [
        "loaded 15 songs by mostPlayed from offset 0 (hasMore: false)"
      ])
    #expect(report.step("warmSearch")?.notes == ["found 1 songs for 'blue' (hasMore: true)"])
    #expect(report.milestones.map(\.name) == ["interactive", "searchReady"])
  }

  @Test func runsTheShippedGatesToMainContentAndRoutesWhenAGateIsFlipped() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("gated.json")
    let open = try await Orchestrate.run(["run", manifest, "--quiet"])
    #expect(open.status == 0)
    #expect(open.stdout.hasPrefix("KeepItFresh: succeeded in "))
    let metadata = folder.url.appendingPathComponent("gated/metadata.json")
    let flipped = try String(contentsOf: metadata, encoding: .utf8)
      .replacingOccurrences(
        of: "\"isUnderMaintenance\": false", with: "\"isUnderMaintenance\": true")
    try flipped.write(to: metadata, atomically: true, encoding: .utf8)
    let closed = try await Orchestrate.run(["run", manifest, "--quiet"])
    #expect(closed.status == 0)
    #expect(closed.stdout.hasPrefix("KeepItFresh: routed to 'maintenance' by 'maintenance' in "))
  }

  @Test func exitsOneWhenAnAbortStepFails() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "fail.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "simulate", "params": { "fail": true } },
        { "id": "page", "plugin": "simulate", "dependsOn": ["store"] }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--report", folder.path("r.json")])
    #expect(result.status == 1)
    #expect(
      result.stderr == "Error: the launch failed: 'store' failed: simulated failure (attempt 1).\n")
    let report = try readReport(folder.path("r.json"))
    #expect(report.outcome == .failed)
    #expect(report.step("page")?.state == .skipped)
  }

  @Test func exitsZeroWithAWarningWhenDegraded() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "degraded.json",
      """
      { "version": 1, "steps": [
        { "id": "cleanup", "plugin": "simulate", "onFailure": "continue", "params": { "fail": true } },
        { "id": "fetch", "plugin": "simulate", "onFailure": "continue", "timeout": "10ms",
          "params": { "duration": "10s" } },
        { "id": "ui", "plugin": "simulate" }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path])
    #expect(result.status == 0)
    #expect(
      result.stderr == "Warning: the launch was degraded: 'cleanup' failed, 'fetch' timed out.\n")
  }

  @Test func exitsZeroAndNamesTheRouteWhenRouted() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "gated.json",
      """
      { "version": 1, "name": "Gated", "steps": [
        { "id": "maintenance", "plugin": "simulate", "priority": "critical", "params": { "route": "maintenance" } },
        { "id": "home", "plugin": "simulate", "dependsOn": ["maintenance"] }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--quiet"])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("Gated: routed to 'maintenance' by 'maintenance' in "))
    #expect(result.stdout.split(separator: "\n").count == 1)
  }

  @Test func namesTheStepThatRoutedNotTheOneThatEndedLast() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "routed.json",
      """
      { "version": 1, "name": "Gated", "steps": [
        { "id": "gate", "plugin": "simulate", "params": { "duration": "20ms", "route": "maintenance" } },
        { "id": "store", "plugin": "simulate", "params": { "duration": "1h" } }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--quiet"])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("Gated: routed to 'maintenance' by 'gate' in "))
  }

  @Test func timesOutAHungStepAndCarriesOn() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "hang.json",
      """
      { "version": 1, "steps": [
        { "id": "hang", "plugin": "simulate", "timeout": "200ms", "onFailure": "continue",
          "params": { "duration": "1h", "ignoresCancellation": true } },
        { "id": "next", "plugin": "simulate", "after": ["hang"] }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--report", folder.path("r.json")])
    #expect(result.status == 0)
    #expect(result.stdout.contains("TIMED OUT  hang after 200ms"))
    let report = try readReport(folder.path("r.json"))
    #expect(report.step("hang")?.state == .timedOut)
    #expect(report.step("next")?.state == .succeeded)
  }

  @Test func exitsThreeWhenABudgetIsExceededAndZeroWhenMet() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "budget.json",
      """
      { "version": 1, "milestones": { "interactive": ["slow"] }, "steps": [
        { "id": "slow", "plugin": "simulate", "params": { "duration": "100ms" } }
      ] }
      """)
    let over = try await Orchestrate.run(["run", path, "--budget", "interactive=10ms"])
    #expect(over.status == 3)
    #expect(over.stderr.hasPrefix("Error: The milestone 'interactive' was reached at "))
    #expect(over.stderr.hasSuffix(", over its budget of 10ms.\n"))
    let within = try await Orchestrate.run(["run", path, "--budget", "interactive=1m"])
    #expect(within.status == 0)
    #expect(within.stdout.contains("(budget 1m)"))
  }

  @Test func treatsANeverReachedMilestoneAsOverBudget() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "never.json",
      """
      { "version": 1, "milestones": { "interactive": ["home"] }, "steps": [
        { "id": "gate", "plugin": "simulate", "params": { "route": "loginRequired" } },
        { "id": "home", "plugin": "simulate", "dependsOn": ["gate"] }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--budget", "interactive=5s"])
    #expect(result.status == 3)
    #expect(
      result.stderr == "Error: The milestone 'interactive' was never reached; its budget is 5s.\n")
  }

  @Test func printsTheReportAsJSONOnStdout() async throws {
    let result = try await Orchestrate.run(["run", "manifests/simulated/rehearsal.json", "--json"])
    #expect(result.status == 0)
    let report = try LaunchReport(jsonText: result.stdout)
    #expect(report.name == "BooksTrack (rehearsal)")
  }

  @Test func overridesTheManifestsConcurrency() async throws {
    let folder = try TemporaryFolder()
    let steps = (1...4).map {
      #"{ "id": "s\#($0)", "plugin": "simulate", "params": { "duration": "20ms" } }"#
    }
    let path = try folder.write(
      "wide.json", #"{ "version": 1, "steps": [\#(steps.joined(separator: ","))] }"#)
    let result = try await Orchestrate.run([
      "run", path, "--max-concurrency", "1", "--report", folder.path("r.json"),
    ])
    #expect(result.status == 0)
    let report = try readReport(folder.path("r.json"))
    let spans = report.steps.compactMap { step in
      step.start.flatMap { start in step.end.map { (start, $0) } }
    }
    .sorted { $0.0 < $1.0 }
    for (earlier, later) in zip(spans, spans.dropFirst()) {
      #expect(later.0 >= earlier.1)
    }
  }

  @Test(arguments: [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] as [(Int32, Int32)])
  func cancelsCleanlyOnASignalAndStillWritesTheReportAndTrace(
    signal: Int32, status: Int32
  ) async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "long.json",
      """
      { "version": 1, "steps": [
        { "id": "long", "plugin": "simulate", "params": { "duration": "1h" } },
        { "id": "after", "plugin": "simulate", "dependsOn": ["long"] }
      ] }
      """)
    let arguments = [
      "run", path, "--report", folder.path("r.json"), "--trace", folder.path("t.json"),
    ]
    let result = try await Orchestrate.run(arguments) { process, stdout in
      let pid = process.processIdentifier
      await when("start      long", in: stdout) { kill(pid, signal) }
    }
    #expect(result.status == status)
    #expect(result.stderr == "Error: the launch was interrupted.\n")
    let report = try readReport(folder.path("r.json"))
    #expect(report.outcome == .cancelled)
    #expect(report.step("long")?.state == .cancelled)
    #expect(report.step("after")?.state == .skipped)
    #expect(FileManager.default.fileExists(atPath: folder.path("t.json")))
  }

  @Test func replaysTheBookTrackLaunchSeriallyAndOrchestrated() async throws {
    let folder = try TemporaryFolder()
    let serial = try await Orchestrate.run(
      ["run", "manifests/simulated/booktrack-serial.json", "--report", folder.path("serial.json")])
    let orchestrated = try await Orchestrate.run(
      ["run", "manifests/simulated/booktrack.json", "--report", folder.path("orchestrated.json")])
    #expect(serial.status == 0)
    #expect(orchestrated.status == 0)
    let serialReport = try readReport(folder.path("serial.json"))
    let orchestratedReport = try readReport(folder.path("orchestrated.json"))
    let serialInteractive = try #require(serialReport.time(ofMilestone: "interactive") ?? nil)
    let orchestratedInteractive = try #require(
      orchestratedReport.time(ofMilestone: "interactive") ?? nil)
    // Sleeps never end early: the serial launch cannot reach interactive before its 4 s of work.
    #expect(serialInteractive >= .seconds(4))
    #expect(orchestratedInteractive >= .milliseconds(1500))
    #expect(orchestratedInteractive < serialInteractive)
    #expect(
      orchestratedReport.step("queue").flatMap(\.start).map { $0 >= orchestratedInteractive }
        == true)
  }

  @Test func writesATraceThatAgreesWithTheReport() async throws {
    let folder = try TemporaryFolder()
    let result = try await Orchestrate.run(
      [
        "run", "manifests/simulated/booktrack.json", "--report", folder.path("r.json"), "--trace",
        folder.path("t.json"), "--otlp", folder.path("o.json"),
      ])
    #expect(result.status == 0)
    #expect(
      result.stdout.contains(
        "trace: \(folder.path("t.json")) (open it in Perfetto or chrome://tracing)"))
    #expect(
      result.stdout.contains(
        "otlp: \(folder.path("o.json")) (an OpenTelemetry trace, OTLP/JSON, for a collector)"))
    let report = try readReport(folder.path("r.json"))
    let trace = try JSONParser.parse(
      Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("t.json"))))
    ).root
    let events = try #require(trace["traceEvents"]?.elements)
    let spans = events.filter { $0["ph"] == "X" && $0["cat"] != "wait" }
    #expect(
      spans.compactMap { $0["name"]?.stringValue }.sorted() == report.steps.map(\.id).sorted())
    // Waits are slices of their own, and share no lane time with other steps or their waits
    // (a wait between a step's start and its work, for the main thread, nests in its slice).
    let waits = events.filter { $0["ph"] == "X" && $0["cat"] == "wait" }
    #expect(
      waits.compactMap { $0["name"]?.stringValue }.sorted()
        == report.steps.flatMap { step in
          step.waits.map { "\(step.id) waits: \($0.reason.rawValue)" }
        }.sorted())
    #expect(!waits.isEmpty)
    var lanes: [Double: [(owner: String, start: Double, end: Double)]] = [:]
    for wait in waits {
      guard case .number(let ts) = wait["ts"]?.kind, case .number(let dur) = wait["dur"]?.kind,
        case .number(let lane) = wait["tid"]?.kind, let owner = wait["args"]?["step"]?.stringValue
      else {
        Issue.record("malformed wait \(wait)")
        continue
      }
      lanes[lane, default: []].append((owner, ts, ts + dur))
    }
    for span in spans {
      let name = try #require(span["name"]?.stringValue)
      let step = try #require(report.step(name))
      let start = try #require(step.start)
      let duration = try #require(step.duration)
      guard case .number(let ts) = span["ts"]?.kind, case .number(let dur) = span["dur"]?.kind,
        case .number(let lane) = span["tid"]?.kind
      else {
        Issue.record("malformed span \(span)")
        continue
      }
      // The report rounds to microseconds, so the two may differ by one in the last place each.
      #expect(abs(ts - start.seconds * 1e6) <= 2)
      #expect(abs(dur - duration.seconds * 1e6) <= 2)
      // A step that starts as another ends meets it; a slice's start and duration are each
      // rounded to the microsecond, so their sum may pass that end by one.
      for (owner, start, end) in lanes[lane, default: []] where owner != name {
        #expect(
          ts >= end - 1 || ts + dur <= start + 1,
          "'\(name)' overlaps '\(owner)' in lane \(lane)")
      }
      lanes[lane, default: []].append((name, ts, ts + dur))
    }
    let milestones = events.filter { $0["ph"] == "i" }.compactMap { $0["name"]?.stringValue }
    #expect(milestones == ["firstFrame", "interactive"])
  }

  @Test func endsTheSummaryWithATimelineAndTheCriticalPath() async throws {
    let result = try await Orchestrate.run(["run", "manifests/simulated/booktrack.json"])
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(
      String.init)
    let timeline = try #require(lines.firstIndex { $0.hasPrefix("  store  ") && $0.contains("█") })
    for id in ["notifications", "queue", "cleanupReviewed", "cleanupOrphaned", "sampleData"] {
      #expect(lines[timeline...].contains { $0.hasPrefix("  \(id) ") && $0.contains("█") })
    }
    #expect(lines.contains { $0.hasPrefix("critical path: store -> ") })
    let chain = try #require(
      lines.firstIndex { $0.hasPrefix("critical chain to 'interactive' at ") })
    // At the launch's start, after what its record took (no wait the chain can blame).
    #expect(lines[chain + 1].hasPrefix("  store @"))
    #expect(lines.last { !$0.isEmpty } == lines[chain + 1])
  }

  @Test func withOneSlotTheCriticalChainNamesTheStepsThatHeldIt() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "m.json",
      """
      { "version": 1, "maxConcurrency": 1, "milestones": { "interactive": ["background"] },
        "steps": [
          { "id": "first", "plugin": "simulate", "priority": "high", "params": { "duration": "60ms" } },
          { "id": "second", "plugin": "simulate", "params": { "duration": "200ms" } },
          { "id": "background", "plugin": "simulate", "priority": "background", "params": { "duration": "10ms" } }
        ] }
      """)
    let result = try await Orchestrate.run(["run", manifest, "--report", folder.path("r.json")])
    #expect(result.status == 0)
    #expect(result.stdout.contains("critical path: first -> second -> background"))
    let lines = result.stdout.split(separator: "\n").map(String.init)
    let chain = try #require(
      lines.firstIndex { $0.hasPrefix("critical chain to 'interactive' at ") })
    #expect(
      lines[(chain + 1)...(chain + 3)].map { $0.split(separator: " @").first.map(String.init) } == [
        "  background", "    second", "      first",
      ])
    #expect(lines[chain + 1].hasSuffix("(slot freed by 'second')"))
    // The queued step's wait is shaded in the timeline, before its bar.
    // (After the launch record's time, as a gap of its own: the first steps start then.)
    let background = try #require(lines.first { $0.hasPrefix("  background  ") })
    let shade = try #require(background.firstIndex(of: "·"))
    #expect(background[..<shade].allSatisfy { $0 == " " || $0.isLetter })
    #expect(background[shade...].drop { $0 == "·" }.first == "█", "\(background)")
    let report = try readReport(folder.path("r.json"))
    let wait = try #require(report.step("background")?.waits.first)
    #expect(wait.reason == .concurrency)
    #expect(wait.heldBy == ["first", "second"])

    let blame = try await Orchestrate.run(["blame", folder.path("r.json")])
    #expect(blame.status == 0)
    #expect(blame.stderr.isEmpty)
    let rows = blame.stdout.split(separator: "\n").map(String.init)
    #expect(rows.first?.hasPrefix("What delayed 'interactive' at ") == true)
    // Real times: on a loaded machine any of the three can have delayed it most.
    let blamed = rows[2...4].map {
      String($0.split(separator: " ", omittingEmptySubsequences: true)[1])
    }
    #expect(Set(blamed) == ["second", "first", "background"])
  }
}
