import Foundation
import LaunchOrchestrator
import Testing

/// Pauses, signals and on-demand steps through the real `orchestrate` binary.
@Suite("orchestrate run: pauses, signals, on demand", .timeLimit(.minutes(10)))
struct LifecycleCommandTests {
  private static let oneSecondStep = """
    { "version": 1, "milestones": { "interactive": ["work"] }, "steps": [
      { "id": "work", "plugin": "simulate", "params": { "duration": "1s" }, "timeout": "3s" } ] }
    """

  private static let consentAndSearch = """
    { "version": 1, "signals": ["consent"], "milestones": { "interactive": ["store"] },
      "steps": [
      { "id": "store", "plugin": "simulate", "params": { "duration": "50ms" } },
      { "id": "analytics", "plugin": "simulate", "dependsOn": ["store"], "waitFor": ["consent"] },
      { "id": "search", "plugin": "simulate", "params": { "duration": "20ms" },
        "dependsOn": ["store"], "trigger": "onDemand" } ] }
    """

  @Test func aProcessStoppedWithKillStopCountsThePauseAndDoesNotTimeOut() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("stop.json", Self.oneSecondStep)
    let report = folder.path("report.json")
    let result = try await Orchestrate.run(["run", manifest, "--report", report]) {
      process, stdout in
      let pid = process.processIdentifier
      // Stopped for 4 s, past the step's 3 s timeout in real time.
      await when("start      work", in: stdout) {
        kill(pid, SIGSTOP)
        usleep(4_000_000)
        kill(pid, SIGCONT)
      }
    }
    #expect(result.status == 0, "\(result.stderr)")
    let written = try LaunchReport(jsonText: String(contentsOfFile: report, encoding: .utf8))
    #expect(written.outcome == .succeeded)
    #expect(written.pauses.count == 1)
    let pause = try #require(written.pauses.first)
    #expect(pause.duration >= .seconds(3))
    let interactive = try #require(written.time(ofMilestone: "interactive") ?? nil)
    // Active time: the step's second, not the four the process spent stopped.
    #expect(interactive < .seconds(3))
    #expect(interactive >= .seconds(1))
    #expect(written.wallDuration == written.duration + pause.duration)
    // The summary gives both times, and the timeline marks the pause. Both are drawn from the
    // launch's own times and the report holds them to the microsecond: a time within a
    // microsecond of a millisecond's half is printed rounded either way.
    let summary = try #require(
      result.stdout.split(separator: "\n").first { $0.hasPrefix("stop: succeeded in ") })
    #expect(summary.hasSuffix(" with 1 pause)"), "\(summary)")
    try Self.expectTimes(in: summary, near: [written.duration, written.wallDuration])
    let pausedRow = try #require(
      result.stdout.split(separator: "\n").first { $0.hasPrefix("  (paused)") })
    #expect(pausedRow.contains("‖"))
    #expect(pausedRow.contains(" paused "), "\(pausedRow)")
    try Self.expectTimes(in: pausedRow, near: [pause.duration, pause.at])
  }

  /// Expects the times `line` prints (`1.234s`) to be `expected`, each to the millisecond.
  private static func expectTimes(
    in line: Substring, near expected: [Duration], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let printed = line.matches(of: try Regex(#"\d+\.\d{3}s"#)).compactMap {
      Double(line[$0.range].dropLast())
    }
    #expect(printed.count == expected.count, "\(line)", sourceLocation: sourceLocation)
    for (time, duration) in zip(printed, expected) {
      #expect(abs(time - duration.seconds) <= 0.001, "\(line)", sourceLocation: sourceLocation)
    }
  }

  @Test func planAndGraphShowSignalsAndOnDemandStepsApart() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("consent.json", Self.consentAndSearch)
    let plan = try await Orchestrate.run(["plan", manifest])
    #expect(plan.status == 0, "\(plan.stderr)")
    let rows = plan.stdout.split(separator: "\n").map {
      $0.split(separator: " ").joined(separator: " ")
    }
    #expect(rows.contains("- - analytics normal store, signal 'consent'"), "\(plan.stdout)")
    #expect(rows.contains("- - search normal store, ensure (on demand)"), "\(plan.stdout)")
    #expect(rows.contains("analytics skipped: signal 'consent' was not sent"), "\(plan.stdout)")
    #expect(rows.contains("search skipped: on demand, and not ensured"), "\(plan.stdout)")

    let dot = try await Orchestrate.run(["graph", manifest])
    #expect(dot.status == 0)
    #expect(dot.stdout.contains(#""signal:consent" [label="consent", shape=cds];"#))
    #expect(
      dot.stdout.contains(#""signal:consent" -> "analytics" [style=dashed, label="waitFor"];"#))
    #expect(
      dot.stdout.contains(
        #""search" [label="search\nsimulate · normal\non demand", style="rounded,dashed"];"#),
      "\(dot.stdout)")
    let mermaid = try await Orchestrate.run(["graph", manifest, "--format", "mermaid"])
    #expect(mermaid.stdout.contains(#"g0>"consent"]"#))
    #expect(mermaid.stdout.contains("g0 -. waitFor .-> s1"), "\(mermaid.stdout)")
    #expect(mermaid.stdout.contains("<br/>on demand\"]"))
  }

  @Test func aSignalGivenWithATimeStartsItsStepThenAndOneNotGivenSkipsIt() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("consent.json", Self.consentAndSearch)
    let signalled = try await Orchestrate.run([
      "run", manifest, "--signal", "consent@300ms", "--report", folder.path("signalled.json"),
    ])
    #expect(signalled.status == 0, "\(signalled.stderr)")
    let report = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("signalled.json"), encoding: .utf8))
    let consent = try #require(report.signals.first?.time)
    #expect(consent >= .milliseconds(300))
    #expect(try #require(report.step("analytics")?.start) >= consent)
    #expect(report.step("analytics")?.state == .succeeded)

    let unsent = try await Orchestrate.run(["run", manifest, "--report", folder.path("u.json")])
    #expect(unsent.status == 0)
    let skipped = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("u.json"), encoding: .utf8))
    #expect(skipped.step("analytics")?.state == .skipped)
    #expect(skipped.step("analytics")?.error == "signal 'consent' was not sent")
    #expect(skipped.signals == [.init(name: "consent", time: nil)])
  }

  @Test func anOnDemandStepRunsOnlyWhenEnsuredAtItsTime() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("search.json", Self.consentAndSearch)
    let ensured = try await Orchestrate.run([
      "run", manifest, "--ensure", "search@200ms", "--signal", "consent",
      "--report", folder.path("ensured.json"),
    ])
    #expect(ensured.status == 0, "\(ensured.stderr)")
    let report = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("ensured.json"), encoding: .utf8))
    #expect(report.step("search")?.state == .succeeded)
    #expect(try #require(report.step("search")?.start) >= .milliseconds(200))
    #expect(report.outcome == .succeeded)

    let plain = try await Orchestrate.run([
      "run", manifest, "--signal", "consent", "--report", folder.path("plain.json"),
    ])
    #expect(plain.status == 0)
    let notRun = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("plain.json"), encoding: .utf8))
    #expect(notRun.step("search")?.state == .skipped)
    #expect(notRun.step("search")?.error == "on demand, and not ensured")
    #expect(notRun.step("search")?.start == nil)
  }

  @Test func anInterruptEndsALaunchThatWaitsForAnEnsureStillToCome() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("search.json", Self.consentAndSearch)
    let result = try await Orchestrate.run([
      "run", manifest, "--ensure", "search@30s", "--signal", "consent",
      "--report", folder.path("r.json"),
    ]) { process, stdout in
      let pid = process.processIdentifier
      await when("done       analytics", in: stdout) { kill(pid, SIGTERM) }
    }
    #expect(result.status == 143, "\(result.stderr)")
    let report = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("r.json"), encoding: .utf8))
    #expect(report.outcome == .cancelled)
    // Ended by the interrupt, not by the ensure's time coming.
    #expect(report.duration < .seconds(30))
    #expect(report.step("search")?.start == nil)
  }

  @Test func refusesASignalTheManifestDoesNotDeclareAndEnsuringALaunchStep() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("consent.json", Self.consentAndSearch)
    let signal = try await Orchestrate.run(["run", manifest, "--signal", "consnt"])
    #expect(signal.status == 64)
    #expect(
      signal.stderr.contains(
        "Error: '--signal consnt' names a signal the manifest does not declare; the manifest declares 'consent'."
      ))
    let ensure = try await Orchestrate.run(["run", manifest, "--ensure", "store"])
    #expect(ensure.status == 64)
    #expect(ensure.stderr.contains("names a step that runs in the launch anyway"))
    let typo = try await Orchestrate.run(["run", manifest, "--ensure", "serch"])
    #expect(typo.status == 64)
    #expect(
      typo.stderr.hasPrefix(
        "Error: '--ensure serch' names no step of the manifest. Did you mean 'search'?"))
    let unknown = try await Orchestrate.run(["run", manifest, "--ensure", "zzz"])
    #expect(
      unknown.stderr.hasPrefix(
        "Error: '--ensure zzz' names no step of the manifest. Its on-demand steps: 'search'."))
  }
}
