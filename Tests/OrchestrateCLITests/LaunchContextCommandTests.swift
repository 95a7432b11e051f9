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

  /// Runs `orchestrate run app.json` with `arguments` in `folder` and kills it (SIGKILL) once
  /// it printed that `step` started: the launch is in the record by then (it is written
  /// before the first step starts), and it never reaches its first screen.
  private func runKilled(
    in folder: URL, _ arguments: [String] = [], onceStarted step: String = "store"
  ) async throws {
    let killed = try await Orchestrate.run(["run", "app.json"] + arguments, in: folder) {
      process, stdout in
      while !((try? String(contentsOf: stdout, encoding: .utf8)) ?? "").contains(
        "start      \(step)")
      {
        try await Task.sleep(for: .milliseconds(10))
      }
      kill(process.processIdentifier, SIGKILL)
    }
    #expect(killed.status != 0)
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
    // Hangs far longer than a loaded machine takes to see it start; killed below.
    let folder = try folder(hang: "1h")
    for _ in 0..<2 {
      try await runKilled(in: folder.url)
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

  /// Killed before its first screen, the first launch leaves the next the first: the steps
  /// only the first launch runs (onboarding here) run in it, and once it got to its first
  /// screen the launch after it is not the first.
  @Test func aFirstLaunchKilledBeforeItsFirstScreenLeavesTheNextTheFirst() async throws {
    let folder = try folder(hang: "1h")
    try await runKilled(in: folder.url)
    try folder.write("app.json", Self.manifest.replacingOccurrences(of: "%HANG%", with: "0s"))
    let (again, _) = try await run(folder)
    #expect(again.context?.isFirstLaunch == true)
    #expect(again.context?.launchNumber == 2)
    #expect(state(again, "onboarding") == "succeeded")
    let (next, _) = try await run(folder)
    #expect(next.context?.isFirstLaunch == false)
    #expect(state(next, "onboarding") == "skipped: condition: not the first launch")
  }

  /// Killed before its first screen, the first launch after an upgrade leaves the next the
  /// first after it, from the last version that got to its first screen: 1.0, then 2.0
  /// killed, then 2.0 again is the first after the upgrade from 1.0, runs the upgrade's step,
  /// and says so in a note; the record on disk keeps 1.0 as the version reached until then.
  @Test func anUpgradeKilledBeforeItsFirstScreenLeavesTheNextTheFirstAfterTheUpgrade()
    async throws
  {
    let folder = try folder()
    _ = try await run(folder, ["--app-version", "1.0"])
    try folder.write("app.json", Self.manifest.replacingOccurrences(of: "%HANG%", with: "1h"))
    try await runKilled(in: folder.url, ["--app-version", "2.0"])
    let file = LaunchRecordFile(dataDirectory: folder.url, manifestName: "Ctx")
    let record = try #require(file.read().record)
    #expect(record.recent.map(\.version) == ["1.0", "2.0"])
    #expect(record.recent.map(\.state) == [.firstScreen, .started])
    #expect(record.reachedVersion == "1.0")

    try folder.write("app.json", Self.manifest.replacingOccurrences(of: "%HANG%", with: "0s"))
    let (upgraded, result) = try await run(folder, ["--app-version", "2.0"])
    let note =
      "1 launch of 2.0 since 1.0 never reached its first screen (killed or crashed); this launch is the first after the upgrade from 1.0"
    #expect(upgraded.context?.isFirstLaunchAfterUpgrade == true)
    #expect(upgraded.context?.isFirstLaunch == false)
    #expect(upgraded.context?.launchNumber == 3)
    #expect(state(upgraded, "notice") == "succeeded")
    #expect(upgraded.contextNotes == [note])
    #expect(result.stderr.contains("Note: \(note)."))
    #expect(file.read().record?.reachedVersion == "2.0")
    let (next, _) = try await run(folder, ["--app-version", "2.0"])
    #expect(next.context?.isFirstLaunchAfterUpgrade == false)
    #expect(state(next, "notice") == "skipped: condition: not the first launch after an upgrade")
  }

  /// A store in the data folder and no launch record: an install that ran before the record
  /// was kept (the update that first ships `when`). The launch is not the first, so nothing
  /// only a new install gets runs into the user's store; it is the first after an upgrade,
  /// and says why. A first launch killed after it made the store leaves the next the first:
  /// the record holds it, and the store says nothing then.
  @Test func aStoreWithoutARecordIsAnInstallThatRanBeforeNotANewOne() async throws {
    let manifest = """
      { "version": 1, "name": "Ctx",
        "milestones": { "interactive": ["store", "screen"] },
        "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
          { "id": "screen", "plugin": "simulate", "dependsOn": ["store"],
            "params": { "duration": "%HANG%" } },
          { "id": "seed", "plugin": "simulate", "dependsOn": ["store"],
            "when": { "firstLaunch": true } },
          { "id": "purge", "plugin": "simulate", "when": { "afterUpgrade": true } }
        ] }
      """
    let taken = try TemporaryFolder()
    try taken.write("app.json", manifest.replacingOccurrences(of: "%HANG%", with: "0s"))
    // The app before the update kept its store, and no record.
    _ = try await run(taken, ["--app-version", "1.0"])
    try FileManager.default.removeItem(
      at: taken.url.appendingPathComponent(LaunchRecordFile.folderName))
    let (report, result) = try await run(taken, ["--app-version", "2.0"])
    let note =
      "the launch record holds no launch, and the data folder holds 'library.sqlite' (the 'path' of step 'store'): this install ran before the record was kept, so this launch is not the first, and is the first after an upgrade"
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.context?.isFirstLaunchAfterUpgrade == true)
    #expect(state(report, "seed") == "skipped: condition: not the first launch")
    #expect(state(report, "purge") == "succeeded")
    #expect(report.contextNotes == [note])
    #expect(result.stderr.contains("Note: \(note)."))
    let file = LaunchRecordFile(dataDirectory: taken.url, manifestName: "Ctx")
    #expect(file.read().record?.existingInstall == true)

    let fresh = try TemporaryFolder()
    try fresh.write("app.json", manifest.replacingOccurrences(of: "%HANG%", with: "1h"))
    try await runKilled(in: fresh.url, onceStarted: "screen")
    #expect(
      FileManager.default.fileExists(
        atPath: fresh.url.appendingPathComponent("library.sqlite").path))
    try fresh.write("app.json", manifest.replacingOccurrences(of: "%HANG%", with: "0s"))
    let (again, _) = try await run(fresh)
    #expect(again.context?.isFirstLaunch == true)
    #expect(state(again, "seed") == "succeeded")
    #expect(again.contextNotes == [])
  }

  /// A manifest whose steps the context does not change keeps no record: its store beside it
  /// says nothing about a first launch no step asks about (`plan` of the shipped example
  /// after `run` of it printed that note).
  @Test func aStoreBesideAManifestWithoutContextStepsIsNotNoted() async throws {
    let folder = try TemporaryFolder()
    try folder.write(
      "app.json",
      """
      { "version": 1, "name": "Plain", "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } }
      ] }
      """)
    let ran = try await Orchestrate.run(["run", "app.json"], in: folder.url)
    #expect(ran.status == 0)
    #expect(
      FileManager.default.fileExists(
        atPath: folder.url.appendingPathComponent("library.sqlite").path))
    let planned = try await Orchestrate.run(["plan", "app.json"], in: folder.url)
    #expect(planned.status == 0)
    #expect(planned.stderr.isEmpty)
    #expect(!planned.stdout.contains("context"))
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

  /// Not in the thread-sanitizer pass (`.ci/run` sets `TSAN_OPTIONS` for it): there twenty
  /// instrumented processes starting at once on two cores keep one another off the CPU while
  /// one holds the record's lock, past the 2 s a launch waits to be counted (a documented
  /// limit: the launch goes on uncounted, with a note), and this test would measure the
  /// machine. The other pass runs it; the sanitizer's own checks are in-process.
  @Test(
    .enabled(
      if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil,
      "twenty sanitized processes at once outlast the record's documented waits"))
  func twentyProcessesLaunchingAtOnceLeaveARecordCountingTwentyAndRunOnceStepsOnce()
    async throws
  {
    let folder = try TemporaryFolder()
    try folder.write(
      "app.json",
      Self.manifest.replacingOccurrences(of: "%HANG%", with: "0s").replacingOccurrences(
        of: #"{ "id": "feed""#,
        with: #"{ "id": "setup", "plugin": "simulate", "once": "perInstall" }, { "id": "feed""#))
    let url = folder.url
    let launches = try await withThrowingTaskGroup(of: (LaunchReport, String).self) { group in
      for index in 0..<20 {
        group.addTask {
          let result = try await Orchestrate.run(
            ["run", "app.json", "--quiet", "--report", "r\(index).json"], in: url)
          #expect(result.status == 0, "\(result.stderr)")
          let report = try LaunchReport(
            jsonText: String(
              contentsOf: url.appendingPathComponent("r\(index).json"), encoding: .utf8))
          return (report, result.stderr)
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    let reports = launches.map(\.0)
    // Each run-once step was claimed under the record's lock by one launch: it ran once.
    #expect(reports.filter { $0.step("setup")?.state == .succeeded }.count == 1)
    #expect(reports.filter { $0.step("migrate")?.state == .succeeded }.count == 1)
    let read = LaunchRecordFile(dataDirectory: folder.url, manifestName: "Ctx").read()
    #expect(read.notes.isEmpty)
    let record = try #require(read.record)
    #expect(record.launchCount == 20)
    #expect(Set(record.recent.map(\.number)).count == LaunchRecord.recentLimit)
    // Each launch marks its first screen in the record, waiting for the lock off its path;
    // on a machine so loaded that one process holds the lock past that wait (2 s), a mark is
    // left out, and that launch says so: never silently.
    let unmarked = record.recent.filter { $0.state != .firstScreen }.count
    let said = launches.filter { $0.1.contains("stayed locked by another process") }.count
    #expect(unmarked <= said, "\(launches.map(\.1))")
    // Every claim on a run-once step was let go, and the step ran in one launch of the 20.
    #expect(record.claims == nil)
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

  // MARK: - Issue #22

  /// Writes `json` as the record of manifest `Ctx` in `folder`.
  private func writeRecord(_ json: String, in folder: TemporaryFolder) throws {
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent(".orchestrate-launches"),
      withIntermediateDirectories: true)
    try folder.write(".orchestrate-launches/Ctx.json", json)
  }

  @Test func anOutputNamingTheLaunchRecordItsLockOrASharedFilesLockIsRefusedBeforeTheLaunch()
    async throws
  {
    let folder = try folder()
    _ = try await run(folder)
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent(".data"), withIntermediateDirectories: true)
    try folder.write(
      "queue.json",
      #"""
      { "version": 1, "name": "Ctx",
        "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": ".data/library.sqlite" } },
          { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"],
            "params": { "path": ".data/enrichment-queue.json" } } ] }
      """#)
    let record = try Data(
      contentsOf: folder.url.appendingPathComponent(".orchestrate-launches/Ctx.json"))
    for (manifest, option, target) in [
      ("app.json", "--report", ".orchestrate-launches/Ctx.json"),
      ("app.json", "--trace", ".orchestrate-launches/.Ctx.json.lock"),
      ("app.json", "--otlp", ".orchestrate-launches/other.json"),
      ("queue.json", "--report", ".data/.enrichment-queue.json.lock"),
    ] {
      let result = try await Orchestrate.run(["run", manifest, option, target], in: folder.url)
      #expect(result.status == 64, "\(option) \(target): \(result.stderr)")
      #expect(result.stderr.contains("which the launch uses"), "\(result.stderr)")
      #expect(!result.stdout.contains("start"))
    }
    let after = try Data(
      contentsOf: folder.url.appendingPathComponent(".orchestrate-launches/Ctx.json"))
    #expect(after == record)
  }

  @Test(arguments: [String(Int.max), "-1", "9223372036854775806"])
  func aRecordWithAnAbsurdCountIsSetAsideInRunAndReadAsEmptyInPlan(_ count: String) async throws {
    let folder = try folder()
    try writeRecord(
      #"{ "format": 1, "launchCount": \#(count), "once": {}, "recent": [] }"#, in: folder)
    let plan = try await Orchestrate.run(["plan", "app.json"], in: folder.url)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stderr.contains("the launch record is damaged (it counts"), "\(plan.stderr)")
    let (report, result) = try await run(folder)
    #expect(report.context?.isFirstLaunch == true)
    #expect(report.context?.launchNumber == 1)
    #expect(result.stderr.contains("moved aside to 'Ctx.json.damaged-"), "\(result.stderr)")
  }

  @Test func aRecordLockedByAnotherProcessDoesNotHoldUpTheLaunch() async throws {
    let folder = try folder()
    _ = try await run(folder)
    try folder.write(
      "slow.json",
      Self.manifest.replacingOccurrences(of: "%HANG%", with: "0s").replacingOccurrences(
        of: #""version": 1,"#, with: #""version": 1, "maxConcurrency": 1,"#))
    let record = folder.path(".orchestrate-launches/Ctx.json")
    var launch: CommandResult?
    // Held far longer than any launch takes, even slowed down by a sanitizer; killed after.
    try await Orchestrate.whileHelperHolds(["hold-lock", record, "3600"]) {
      launch = try await Orchestrate.run(
        ["run", "slow.json", "--report", "r.json", "--quiet", "--app-version", "2.0"],
        in: folder.url)
    }
    let result = try #require(launch)
    #expect(result.status == 0, "\(result.stderr)")
    let report = try LaunchReport(
      jsonText: String(contentsOf: folder.url.appendingPathComponent("r.json"), encoding: .utf8))
    // The lock is held all along; the launch's first step starts in well under a second of
    // its active time, whatever the machine's load.
    let first = try #require(report.steps.compactMap(\.start).min())
    #expect(first < .seconds(1))
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.step("migrate")?.error == "launch record locked; left to a later launch")
    let notes = result.stderr.components(separatedBy: "stayed locked by another process").count - 1
    #expect(notes == 1, "\(result.stderr)")
  }

  @Test func planReadsTheRecordInTheDataFolderItIsGiven() async throws {
    let folder = try folder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("d1"), withIntermediateDirectories: true)
    _ = try await run(folder, ["--data-dir", "d1"])
    let plan = try await Orchestrate.run(["plan", "app.json", "--data-dir", "d1"], in: folder.url)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("context: reason userTap, launch 2 (the next launch"))
    let missing = try await Orchestrate.run(
      ["plan", "app.json", "--data-dir", "nowhere"], in: folder.url)
    #expect(missing.status == 66)
  }

  @Test(arguments: ["--after-upgrade", "--safe-mode"])
  func anUpgradeOrSafeModeRehearsedBeforeAnyLaunchIsNoFirstLaunch(_ flag: String) async throws {
    let folder = try folder()
    // No launch record yet: the next launch would be the first, but an upgrade or a string
    // of failed launches has launches before it.
    let plan = try await Orchestrate.run(["plan", "app.json", flag], in: folder.url)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(!plan.stdout.contains("first launch,"), "\(plan.stdout)")
    #expect(plan.stdout.contains("skipped  onboarding  condition: not the first launch"))
    let (report, _) = try await run(folder, [flag])
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.context?.launchNumber == 2)
    #expect(report.step("onboarding")?.state == .skipped)
  }

  @Test func firstLaunchAndAfterUpgradeTogetherAreRefused() async throws {
    let folder = try folder()
    for command in ["run", "plan"] {
      let result = try await Orchestrate.run(
        [command, "app.json", "--first-launch", "--after-upgrade"], in: folder.url)
      #expect(result.status == 64)
      #expect(
        result.stderr.contains(
          "'--first-launch' and '--after-upgrade' cannot be used together"), "\(result.stderr)")
    }
  }

  @Test(arguments: [false, true])
  func aFileOrALinkWhereTheRecordsFolderGoesIsOneNoteInWords(_ isLink: Bool) async throws {
    let folder = try folder()
    let records = folder.url.appendingPathComponent(".orchestrate-launches")
    let elsewhere = folder.url.appendingPathComponent("elsewhere")
    if isLink {
      try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(at: records, withDestinationURL: elsewhere)
    } else {
      try folder.write(".orchestrate-launches", "not a folder")
    }
    let (report, result) = try await run(folder)
    #expect(report.outcome == .succeeded)
    let what = isLink ? "a symbolic link, which is not followed" : "a file"
    #expect(
      report.contextNotes == [
        "the launch record's folder '\(records.path)' is \(what); the record was not kept (move it away to keep launch records)"
      ])
    #expect(!result.stderr.contains("Error Domain"))
    #expect(report.context?.isFirstLaunch == false)
    if isLink {
      #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }
  }

  @Test func reasonsNearAKnownOneAreWarnedOfInValidateAndOnTheCommandLine() async throws {
    let folder = try TemporaryFolder()
    try folder.write(
      "app.json",
      #"""
      { "version": 1, "name": "Ctx", "steps": [
        { "id": "a", "plugin": "simulate", "when": { "reason": ["usertap", "notifcation", "watch"] } } ] }
      """#)
    let validate = try await Orchestrate.run(["validate", "app.json"], in: folder.url)
    #expect(validate.status == 0, "\(validate.stderr)")
    #expect(
      validate.stdout.contains("'usertap' is not a known launch reason; did you mean 'userTap'?"))
    #expect(
      validate.stdout.contains(
        "'notifcation' is not a known launch reason; did you mean 'notification'?"))
    #expect(!validate.stdout.contains("'watch'"))
    #expect(validate.stdout.contains("0 errors, 2 warnings"), "\(validate.stdout)")
    let plan = try await Orchestrate.run(
      ["plan", "app.json", "--reason", "UserTap"], in: folder.url)
    #expect(plan.status == 0)
    #expect(
      plan.stderr.contains(
        "Warning: '--reason UserTap' is not a known launch reason; did you mean 'userTap'?"))
  }

  @Test func versionsCompareByTheirNumbersAndADowngradeIsNoUpgrade() async throws {
    let folder = try folder()
    var seen: [String] = []
    for version in ["1.0", "1.0.0", "2.0", "1.0", "1.10", "1.9"] {
      let (report, result) = try await run(folder, ["--app-version", version])
      let downgrade = result.stderr.contains("the app was downgraded")
      seen.append(
        "\(version) upgrade=\(report.context?.isFirstLaunchAfterUpgrade == true) downgrade=\(downgrade) migrate=\(report.step("migrate")?.state.rawValue ?? "-")"
      )
    }
    #expect(
      seen == [
        "1.0 upgrade=false downgrade=false migrate=succeeded",
        "1.0.0 upgrade=false downgrade=false migrate=skipped",
        "2.0 upgrade=true downgrade=false migrate=succeeded",
        "1.0 upgrade=false downgrade=true migrate=skipped",
        "1.10 upgrade=true downgrade=false migrate=succeeded",
        "1.9 upgrade=false downgrade=true migrate=succeeded",
      ])
  }
}
