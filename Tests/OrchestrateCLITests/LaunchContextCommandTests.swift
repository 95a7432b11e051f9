import Foundation
import LaunchOrchestrator
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The launch context through the real binary: the record in the data folder across runs,
/// processes killed before their first screen, and rehearsals that leave the record alone.
@Suite("orchestrate run and plan, launch context")
struct LaunchContextCommandTests {
  static let manifest = """
    { "version": 1, "name": "Ctx", "safeMode": { "after": 2 },
      "milestones": { "interactive": ["store"] },
      "steps": [
        { "id": "store", "plugin": "simulate", "params": { "duration": "%HANG%" },
          "when": { "safeMode": false } },
        { "id": "onboarding", "plugin": "simulate", "when": { "firstLaunch": true } },
        { "id": "notice", "plugin": "simulate", "when": { "afterUpgrade": true } },
        { "id": "migrate", "plugin": "simulate", "once": "perVersion" },
        { "id": "feed", "plugin": "simulate", "when": { "reason": ["userTap", "url"] } }
      ] }
    """

  /// A folder with the manifest, `store` taking `hang`.
  private func folder(hang: String = "0s") throws -> TemporaryFolder {
    let folder = try TemporaryFolder()
    try folder.write("app.json", Self.manifest.replacingOccurrences(of: "%HANG%", with: hang))
    return folder
  }

  /// Runs the manifest and returns its report.
  private func run(_ folder: TemporaryFolder, _ arguments: [String] = []) async throws -> (
    LaunchReport, CommandResult
  ) {
    let result = try await Orchestrate.run(
      ["run", "app.json", "--report", "r.json", "--quiet"] + arguments, in: folder.url)
    try #require(result.status == 0, "\(result.stderr)")
    let text = try String(contentsOf: folder.url.appendingPathComponent("r.json"), encoding: .utf8)
    return (try LaunchReport(jsonText: text), result)
  }

  private func state(_ report: LaunchReport, _ step: String) -> String {
    guard let line = report.step(step) else { return "missing" }
    return line.error.map { "\(line.state.rawValue): \($0)" } ?? line.state.rawValue
  }

  @Test func theFirstLaunchRunsItsStepAndTheSecondSkipsIt() async throws {
    let folder = try folder()
    let (first, _) = try await run(folder)
    #expect(first.context?.isFirstLaunch == true)
    #expect(first.context?.launchNumber == 1)
    #expect(state(first, "onboarding") == "succeeded")
    let (second, _) = try await run(folder)
    #expect(second.context?.isFirstLaunch == false)
    #expect(second.context?.launchNumber == 2)
    #expect(state(second, "onboarding") == "skipped: condition: not the first launch")
  }

  @Test func anUpgradeIsReportedOnceAndRunOnceStepsRunOncePerVersion() async throws {
    let folder = try folder()
    var seen: [String] = []
    for version in ["1.0", "1.0", "2.0", "2.0", "2.0"] {
      let (report, _) = try await run(folder, ["--app-version", version])
      seen.append(
        "\(version) upgrade=\(report.context?.isFirstLaunchAfterUpgrade == true) notice=\(state(report, "notice")) migrate=\(state(report, "migrate"))"
      )
    }
    #expect(
      seen == [
        "1.0 upgrade=false notice=skipped: condition: not the first launch after an upgrade migrate=succeeded",
        "1.0 upgrade=false notice=skipped: condition: not the first launch after an upgrade migrate=skipped: done before (version 1.0)",
        "2.0 upgrade=true notice=succeeded migrate=succeeded",
        "2.0 upgrade=false notice=skipped: condition: not the first launch after an upgrade migrate=skipped: done before (version 2.0)",
        "2.0 upgrade=false notice=skipped: condition: not the first launch after an upgrade migrate=skipped: done before (version 2.0)",
      ])
  }

  @Test func twoLaunchesKilledBeforeTheirFirstScreenMakeTheThirdRunInSafeMode() async throws {
    let folder = try folder(hang: "60s")
    for _ in 0..<2 {
      let killed = try await Orchestrate.run(["run", "app.json"], in: folder.url) {
        process, stdout in
        // The record is written before the first step starts: once `store` started, the
        // launch is in it, and it never reaches its first screen.
        while !((try? String(contentsOf: stdout, encoding: .utf8)) ?? "").contains(
          "start      store")
        {
          try await Task.sleep(for: .milliseconds(10))
        }
        kill(process.processIdentifier, SIGKILL)
      }
      #expect(killed.status != 0)
    }
    let (safe, result) = try await run(folder)
    #expect(safe.context?.isSafeMode == true)
    #expect(state(safe, "store") == "skipped: safe mode")
    #expect(safe.steps.filter { $0.error == "safe mode" }.map(\.id) == ["store"])
    _ = result
    // Reaching the first screen ended safe mode: the next launch is normal (and no longer hangs).
    try folder.write("app.json", Self.manifest.replacingOccurrences(of: "%HANG%", with: "0s"))
    let (normal, _) = try await run(folder)
    #expect(normal.context?.isSafeMode == false)
    #expect(state(normal, "store") == "succeeded")
    #expect(normal.context?.launchNumber == 4)
  }

  @Test func aBackgroundTaskLaunchSkipsTheStepsThatExcludeItInRunAndPlan() async throws {
    let folder = try folder()
    let (report, _) = try await run(folder, ["--reason", "backgroundTask"])
    #expect(state(report, "feed") == "skipped: condition: reason is backgroundTask")
    #expect(report.context?.reason.rawValue == "backgroundTask")
    // A rehearsal leaves the record alone: the next real launch is still the first.
    let records = folder.url.appendingPathComponent(".orchestrate-launches")
    #expect(!FileManager.default.fileExists(atPath: records.path))
    let plan = try await Orchestrate.run(
      ["plan", "app.json", "--reason", "backgroundTask"], in: folder.url)
    #expect(plan.status == 0)
    #expect(
      plan.stdout.contains("context: reason backgroundTask, launch 1, first launch (rehearsed)"))
    #expect(plan.stdout.contains("skipped  feed    condition: reason is backgroundTask"))
    let ordinary = try await Orchestrate.run(
      ["plan", "app.json", "--reason", "url"], in: folder.url)
    #expect(!ordinary.stdout.contains("skipped  feed"))
  }

  @Test func twentyProcessesLaunchingAtOnceLeaveARecordCountingTwenty() async throws {
    let folder = try folder()
    let url = folder.url
    try await withThrowingTaskGroup(of: Int32.self) { group in
      for _ in 0..<20 {
        group.addTask {
          try await Orchestrate.run(["run", "app.json", "--quiet"], in: url).status
        }
      }
      for try await status in group { #expect(status == 0) }
    }
    let record = LaunchRecordFile(dataDirectory: folder.url, manifestName: "Ctx").read()
    #expect(record.notes.isEmpty)
    #expect(record.record.launchCount == 20)
    #expect(Set(record.record.recent.map(\.number)).count == LaunchRecord.recentLimit)
    #expect(record.record.recent.allSatisfy { $0.state == .firstScreen })
  }

  @Test func aDamagedRecordIsMovedAsideWithANoteAndTheLaunchGoesOn() async throws {
    let folder = try folder()
    let records = folder.url.appendingPathComponent(".orchestrate-launches")
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    try Data(repeating: 0, count: 100).write(to: records.appendingPathComponent("Ctx.json"))
    let (report, result) = try await run(folder)
    #expect(report.outcome == .succeeded)
    #expect(report.context?.isFirstLaunch == true)
    #expect(result.stderr.contains("Note: the launch record is damaged"))
    #expect(result.stderr.contains("moved aside to 'Ctx.json.damaged-"))
    let names = try FileManager.default.contentsOfDirectory(atPath: records.path)
    #expect(names.contains { $0.hasPrefix("Ctx.json.damaged-") })
  }

  @Test func compareRefusesALaunchOfAnotherKind() async throws {
    let folder = try folder()
    _ = try await run(folder)
    try FileManager.default.moveItem(
      at: folder.url.appendingPathComponent("r.json"),
      to: folder.url.appendingPathComponent("first.json"))
    _ = try await run(folder)
    let compared = try await Orchestrate.run(["compare", "r.json", "first.json"], in: folder.url)
    #expect(compared.status == 65)
    #expect(
      compared.stderr.contains(
        "'r.json' and 'first.json' are of different kinds of launch (ordinary; first launch), which are not timed alike; compare runs of the same kind."
      ))
  }
}
