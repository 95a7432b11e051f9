import Foundation
import LaunchTesting
import Testing

@testable import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Fails when its `fail` parameter says so: for run-once steps that must be recorded only
/// when they succeed.
private struct MaybeFailStep: StepPlugin {
  static let kind = "maybe.fail"
  struct Parameters: StepParameters {
    @Parameter("Whether the attempt fails.") var fail = false
  }
  let fail: Bool
  init(parameters: Parameters) { fail = parameters.fail }
  func run(_ context: StepContext) async throws {
    if fail { throw StepFailure("told to fail") }
  }
}

/// Keeps a file at `path`, as a store does: creates it when it is missing. Declared
/// `rewritesFile`, as `store.init`'s store is.
private struct KeepFileStep: StepPlugin {
  static let kind = "keep.file"
  struct Parameters: StepParameters {
    @Parameter("The file kept.", isPath: true, rewritesFile: true) var path = "library.sqlite"
  }
  let path: String
  init(parameters: Parameters) { path = parameters.path }
  func run(_ context: StepContext) async throws {
    let url = context.resolve(path)
    guard !FileManager.default.fileExists(atPath: url.path) else { return }
    try Data("the user's data".utf8).write(to: url)
  }
}

/// A data folder of its own, removed with the value: records must not meet across tests.
private final class DataFolder: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "launch-context-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func plan(_ json: String) throws -> LaunchPlan {
    var registry = PluginRegistry.testKinds
    registry.register(MaybeFailStep.self)
    registry.register(KeepFileStep.self)
    return try ManifestLoader(registry: registry).load(
      bytes: Array(json.utf8), file: "test.json", directory: url, dataDirectory: url)
  }

  var record: LaunchRecordFile { LaunchRecordFile(dataDirectory: url, manifestName: "test") }

  /// Writes a record of two launches of version 1.0 that started and never reached the first
  /// screen, in a process that cannot be running (above any system's highest process number).
  func recordTwoLaunchesThatDied() {
    var died = LaunchRecord()
    _ = died.begin(version: "1.0", process: .number(Int32.max))
    _ = died.begin(version: "1.0", process: .number(Int32.max))
    _ = record.update(waiting: .seconds(1)) { $0 = died }
  }
}

extension ProcessIdentity {
  /// The process numbered `number`, its start unknown: the number alone says, as in records
  /// written before the record kept a process's start.
  fileprivate static func number(_ number: Int32) -> ProcessIdentity {
    ProcessIdentity(number: number, start: nil)
  }
}

private func environment(
  _ context: LaunchContext? = nil, version: String? = nil
) -> LaunchEnvironment {
  var environment = LaunchEnvironment()
  environment[LaunchContext.self] = context
  environment[AppInfo.self] = version.map { AppInfo(version: $0) }
  return environment
}

@Suite("Launch context")
struct LaunchContextTests {
  @Test func aStepWhoseConditionFailsSkipsItsDependentsAndLetsAfterAndMilestonesGoOn() async throws
  {
    let folder = try DataFolder()
    let clock = ManualClock()
    let plan = try folder.plan(
      """
      { "version": 1, "milestones": { "interactive": ["feed", "store"] }, "steps": [
        { "id": "store", "plugin": "wait", "params": { "duration": "1s" } },
        { "id": "feed", "plugin": "noop", "when": { "reason": ["userTap", "url"] } },
        { "id": "render", "plugin": "noop", "dependsOn": ["feed"] },
        { "id": "tidy", "plugin": "noop", "after": ["feed"] }
      ] }
      """)
    let launch = clock.start {
      await LaunchEngine(clock: clock).run(
        plan, environment: environment(LaunchContext(reason: .notification)))
    }
    await clock.advance(to: .seconds(1))
    let report = await launch.value
    #expect(report.step("feed")?.state == .skipped)
    #expect(report.step("feed")?.error == "condition: reason is notification")
    #expect(report.step("render")?.error == "dependency 'feed' was skipped")
    // `tidy` waits for `feed` only through `after`: it started with the launch.
    #expect(report.step("tidy")?.start == .zero)
    // The milestone took the skipped step as finished: it waited for `store` alone.
    #expect(report.time(ofMilestone: "interactive") == .some(.seconds(1)))
    // Skipped by design: the launch is not degraded for it.
    #expect(report.outcome == .succeeded)
    #expect(report.context?.reason == .notification)
  }

  @Test func theFirstFailingKeyNamesTheReason() {
    var context = LaunchContext(reason: .backgroundTask, isPrewarmed: true)
    context.isSafeMode = true
    #expect(
      StepCondition(reasons: ["userTap"], prewarmed: false).skipReason(in: context)
        == "condition: reason is backgroundTask")
    #expect(StepCondition(prewarmed: false).skipReason(in: context) == "condition: prewarmed")
    #expect(StepCondition(safeMode: false).skipReason(in: context) == "safe mode")
    #expect(
      StepCondition(firstLaunch: true).skipReason(in: context) == "condition: not the first launch"
    )
    #expect(
      StepCondition(reasons: ["backgroundTask"], safeMode: true).skipReason(in: context) == nil)
  }

  @Test func aRunOnceStepIsRecordedOnlyWhenItSucceeds() async throws {
    let folder = try DataFolder()
    func launch(failing: Bool) async throws -> LaunchReport {
      let plan = try folder.plan(
        """
        { "version": 1, "steps": [
          { "id": "seed", "plugin": "maybe.fail", "once": "perInstall", "onFailure": "continue",
            "params": { "fail": \(failing) } },
          { "id": "after", "plugin": "noop", "dependsOn": ["seed"] }
        ] }
        """)
      return await LaunchEngine().run(plan, environment: environment(version: "2.3.0"))
    }
    let failed = try await launch(failing: true)
    #expect(failed.step("seed")?.state == .failed)
    let succeeded = try await launch(failing: false)
    #expect(succeeded.step("seed")?.state == .succeeded)
    let skipped = try await launch(failing: false)
    #expect(skipped.step("seed")?.state == .skipped)
    #expect(skipped.step("seed")?.error == "done before (version 2.3.0)")
    // Its dependents still run, without its output.
    #expect(skipped.step("after")?.state == .succeeded)
    #expect(skipped.outcome == .succeeded)
    #expect(skipped.context?.launchNumber == 3)
  }

  @Test func runOnceStepsThatSucceedWhileTheRecordIsWrittenShareTheNextWrite() async throws {
    let folder = try DataFolder()
    let steps = (0..<12).map { #"{ "id": "seed\#($0)", "plugin": "noop", "once": "perInstall" }"# }
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ \#(steps.joined(separator: ", ")) ] }"#)
    // The record's first update after the launch's start (the first success) is held until
    // every step is over: the other successes are asked for meanwhile.
    let updates = Locked(0)
    let stepsAreOver = DispatchSemaphore(value: 0)
    let path = folder.record.url.path
    SharedFile.beforeLocking.withLock {
      $0[path] = {
        let update = updates.withLock { count in
          count += 1
          return count
        }
        if update == 2 {
          _ = stepsAreOver.wait(timeout: .now() + 30)
        }
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: path) } }
    let (events, continuation) = LaunchEvents.makeStream()
    async let launched = LaunchEngine().run(
      plan, environment: environment(version: "1.0"), events: continuation)
    // The events end with the steps, before the launch's end is recorded.
    for await _ in events {}
    stepsAreOver.signal()
    let report = await launched
    #expect(report.steps.allSatisfy { $0.state == .succeeded })
    // The start, the first success, then the other eleven (with the launch's end, or before
    // it): one update each would be 14.
    #expect((3...4).contains(updates.withLock { $0 }))
    // Every success was recorded, in the order asked for: none runs again, and no claim
    // is left.
    let again = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
    #expect(again.steps.allSatisfy { $0.error == "done before (version 1.0)" })
    let record = try #require(folder.record.read().record)
    #expect(record.claims?.isEmpty ?? true)
  }

  /// With `freedAtTheEnd`, the lock is let go the moment the launch tries once more at its
  /// end; without, only after the launch.
  @Test(arguments: [true, false])
  func aLaunchThatFindsTheRecordLockedUntilItsEndIsCountedThenAsALaunchThatEnded(
    freedAtTheEnd: Bool
  ) async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "seed", "plugin": "noop", "once": "perInstall" } ] }"#)
    _ = folder.record.update(waiting: .seconds(1)) { $0 = LaunchRecord() }
    // Another process's lock on the record, held through the launch's start (250 ms) and the
    // update that counts it (2 s), and let go the moment the launch tries once more.
    let path = folder.record.url.path
    let letGo = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    let holder = Thread {
      try? SharedFile(url: URL(fileURLWithPath: path)).withWriteLock {
        held.signal()
        letGo.wait()
      }
    }
    holder.start()
    held.wait()
    let tries = Locked(0)
    SharedFile.beforeLocking.withLock {
      $0[path] = {
        let count = tries.withLock { count in
          count += 1
          return count
        }
        if count == 3, freedAtTheEnd { letGo.signal() }
      }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: path) } }
    let report = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
    letGo.signal()
    #expect(report.context?.launchNumber == 0)
    #expect(report.step("seed")?.error == "launch record locked; left to a later launch")
    #expect(tries.withLock { $0 } == 3)
    let record = try #require(folder.record.read().record)
    let note =
      "the launch record '\(path)' stayed locked by other processes until the launch's end; this launch was not counted"
    #expect(report.contextNotes.contains(note) == !freedAtTheEnd)
    #expect(record.launchCount == (freedAtTheEnd ? 1 : 0))
    // Ended, not started: the crash-loop guard does not take it for a launch that died.
    #expect(record.recent.map(\.state) == (freedAtTheEnd ? [.firstScreen] : []))
  }

  @Test func theSessionSaysItRunsInSafeModeAfterLaunchesThatDied() async throws {
    let folder = try DataFolder()
    folder.recordTwoLaunchesThatDied()
    let json = """
      { "version": 1, "safeMode": { "after": 2 }, "milestones": { "interactive": ["store"] },
        "steps": [
          { "id": "store", "plugin": "noop" },
          { "id": "refresh", "plugin": "noop", "when": { "safeMode": false } }
        ] }
      """
    let plan = try folder.plan(json)
    let session = await LaunchSession()
    let report = await session.run(plan, on: LaunchEngine(), environment: environment())
    #expect(await session.isSafeMode)
    #expect(await session.context?.launchNumber == 3)
    #expect(report.step("refresh")?.error == "safe mode")
    // Reaching the first screen ends safe mode for the next launch.
    #expect(folder.record.read().record?.recent.last?.state == .firstScreen)
    let next = await LaunchSession()
    let again = await next.run(
      try folder.plan(json), on: LaunchEngine(), environment: environment())
    #expect(await !next.isSafeMode)
    #expect(again.step("refresh")?.state == .succeeded)
  }

  @Test func aLaunchThatEndsOnARouteIsNotOneThatDied() {
    var record = LaunchRecord()
    let first = record.begin(version: nil, process: .number(Int32.max))
    record.mark(first, .ended)
    _ = record.begin(version: nil, process: .number(Int32.max))
    let facts = record.facts(
      for: LaunchContext(), version: nil, safeModeAfter: 2, process: .number(1)
    ) { _ in false }
    #expect(!facts.isSafeMode)
  }

  /// A launch given no version (a tool, an extension without `AppInfo`) between two of the
  /// app's says nothing of the app's version.
  @Test func aLaunchGivenNoVersionHidesNoUpgradeAndNoDowngrade() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "whatsNew", "plugin": "noop", "when": { "afterUpgrade": true } }
      ] }
      """)
    let old = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
    #expect(old.context?.isFirstLaunchAfterUpgrade == false)
    let unversioned = await LaunchEngine().run(plan, environment: environment())
    #expect(unversioned.context?.isFirstLaunchAfterUpgrade == false)
    let upgraded = await LaunchEngine().run(plan, environment: environment(version: "2.0"))
    #expect(upgraded.context?.isFirstLaunchAfterUpgrade == true)
    #expect(upgraded.step("whatsNew")?.state == .succeeded)

    var record = try #require(folder.record.read().record)
    _ = record.begin(version: nil, process: .number(Int32.max))
    #expect(record.downgrade(to: "1.9") == "2.0")
  }

  /// "The first launch of a new app version": going back up to a version launched before a
  /// downgrade (2.0, 1.9, then 2.0 again) is no upgrade, even once its launches have left the
  /// record's recent ones; a version never launched is. A record an older build wrote (no
  /// highest version kept) knows its recent launches' versions.
  @Test func aVersionLaunchedBeforeIsNoUpgradeAfterADowngrade() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "whatsNew", "plugin": "noop", "when": { "afterUpgrade": true } }
      ] }
      """)
    func launch(_ version: String) async -> Bool? {
      await LaunchEngine().run(plan, environment: environment(version: version)).context?
        .isFirstLaunchAfterUpgrade
    }
    #expect(await launch("1.0") == false)
    #expect(await launch("2.0") == true)
    #expect(await launch("1.9") == false)
    // A month on the older version: 2.0's launch is no longer among the recent ones.
    for _ in 0..<LaunchRecord.recentLimit { _ = await launch("1.9") }
    #expect(await launch("2.0") == false)
    #expect(await launch("1.9") == false)
    #expect(await launch("1.10") == true, "higher than the last, and never launched")
    #expect(await launch("2.0.1") == true)

    var older = try #require(folder.record.read().record)
    older.newestVersion = nil
    _ = folder.record.update(waiting: .seconds(1)) { $0 = older }
    #expect(await launch("1.9") == false)
    #expect(await launch("2.0.1") == false, "among the recent launches")
    #expect(await launch("2.1") == true)
  }

  /// More launches given no version than the record keeps (a tool's, sharing the data
  /// folder) do not hide the next upgrade: the highest version launched stands for the last.
  @Test func launchesGivenNoVersionPastTheRecentOnesHideNoUpgrade() {
    var record = LaunchRecord()
    _ = record.begin(version: "1.0", process: .number(Int32.max))
    for _ in 0...LaunchRecord.recentLimit {
      _ = record.begin(version: nil, process: .number(Int32.max))
    }
    #expect(record.recent.allSatisfy { $0.version == nil })
    let facts = record.facts(
      for: LaunchContext(), version: "2.0", safeModeAfter: nil, process: .current)
    #expect(facts.isFirstLaunchAfterUpgrade)
    #expect(record.downgrade(to: "0.9") == "1.0")
  }

  @Test func theRecordStaysBoundedWhateverTheAppsAge() {
    var record = LaunchRecord()
    for number in 1...1000 {
      _ = record.begin(version: "1.\(number)", process: .number(Int32.max))
      record.recordOnce("migrate", version: "1.\(number)")
      // A step renamed in every version, each name gone from the manifest the next.
      record.recordOnce("renamed\(number)", version: "1.\(number)")
      record.claim(
        "renamed\(number)", version: "1.\(number)", process: .number(Int32.max), launch: number)
      record.keepOnce(of: ["migrate", "renamed\(number)"]) { _ in false }
    }
    #expect(record.launchCount == 1000)
    #expect(record.recent.count == LaunchRecord.recentLimit)
    #expect(record.once["migrate"]?.count == LaunchRecord.versionLimit)
    // The manifest's steps, and the others that succeeded last.
    let others = (1000 - LaunchRecord.otherOnceLimit..<1000).map { "renamed\($0)" }
    #expect(Set(record.once.keys) == Set(["migrate", "renamed1000"] + others))
    #expect(Set(record.onceLast.map { Array($0.keys) } ?? []) == Set(record.once.keys))
    // Claims of steps the manifest does not name, whose launches are over, hold nothing.
    #expect(record.claims?.keys.sorted() == ["renamed1000"])
    let size = (try? JSONEncoder().encode(record).count) ?? .max
    #expect(size < LaunchRecordFile.maximumSize / 4)
  }

  /// A beta the user went back from, or an app extension whose manifest shares the name:
  /// a launch of a manifest without a run-once step keeps what the record says of it.
  @Test func aRunOnceStepALaunchOfAnotherManifestOfTheNameLacksStaysDone() async throws {
    let folder = try DataFolder()
    let withOnboarding = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "newOnboarding", "plugin": "noop", "once": "perInstall" },
        { "id": "main", "plugin": "noop", "once": "perVersion" }
      ] }
      """)
    let without = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "main", "plugin": "noop", "once": "perVersion" } ] }"#
    )
    let first = await LaunchEngine().run(withOnboarding, environment: environment(version: "2.0"))
    #expect(first.step("newOnboarding")?.state == .succeeded)
    let back = await LaunchEngine().run(without, environment: environment(version: "1.9"))
    #expect(back.step("main")?.state == .succeeded)
    let again = await LaunchEngine().run(withOnboarding, environment: environment(version: "2.0"))
    #expect(again.step("newOnboarding")?.error == "done before (version 2.0)")
    #expect(again.step("main")?.error == "done before (version 2.0)")
  }

  /// Another manifest's launch running a step now, in a process that lives: its claim holds
  /// through a launch of a manifest that does not name the step.
  @Test func aClaimOnAStepTheManifestDoesNotNameHoldsWhileItsLaunchRuns() {
    var record = LaunchRecord()
    let number = record.begin(version: "1.0", process: .number(7))
    record.claim("extensionSeed", version: "1.0", process: .number(7), launch: number)
    record.claim("gone", version: "1.0", process: .number(8), launch: number)
    record.keepOnce(of: ["main"]) { $0.process == 7 }
    #expect(record.claims?.keys.sorted() == ["extensionSeed"])
    #expect(
      record.claimant(
        of: "extensionSeed", .perInstall, version: "1.0", process: .number(9), launch: 1,
        isRunning: { $0.process == 7 })?.process == 7)
  }

  @Test func aDamagedRecordIsSetAsideAndTheLaunchStartsAfresh() async throws {
    let folder = try DataFolder()
    let records = folder.url.appendingPathComponent(LaunchRecordFile.folderName)
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    try Data("{ not a record".utf8).write(to: folder.record.url)
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop", "once": "perInstall" } ] }"#)
    let report = await LaunchEngine().run(plan, environment: environment())
    #expect(report.outcome == .succeeded)
    #expect(report.context?.isFirstLaunch == true)
    #expect(report.contextNotes.count == 1)
    #expect(report.contextNotes.first?.contains("is damaged") == true)
    #expect(report.contextNotes.first?.contains("moved aside") == true)
    let names = try FileManager.default.contentsOfDirectory(atPath: records.path)
    #expect(names.contains { $0.hasPrefix("test.json.damaged-") })
    #expect(folder.record.read().record?.launchCount == 1)
  }

  @Test func aRecordANewerBuildWroteIsLeftAsItIsAndNoRunOnceStepRunsOnAGuess() async throws {
    let folder = try DataFolder()
    let records = folder.url.appendingPathComponent(LaunchRecordFile.folderName)
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    // A beta's record, after the user went back to the store's build.
    let newer = Data(#"{ "format": 2, "launches": { "count": 40 } }"#.utf8)
    try newer.write(to: folder.record.url)
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perInstall" },
        { "id": "welcome", "plugin": "noop", "when": { "firstLaunch": true } }
      ] }
      """)
    let report = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
    #expect(report.outcome == .succeeded)
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.context?.launchNumber == 0)
    #expect(report.step("seed")?.state == .skipped)
    #expect(report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
    #expect(report.step("welcome")?.error == "condition: not the first launch")
    #expect(
      report.contextNotes == [
        "the launch record '\(folder.record.url.path)' was written by a newer build of the app (format 2, this build reads 1); it was left as it is, and not kept"
      ])
    #expect(try Data(contentsOf: folder.record.url) == newer)
    let names = try FileManager.default.contentsOfDirectory(atPath: records.path)
    #expect(!names.contains { $0.contains("damaged") }, "\(names)")
  }

  @Test func aRecordThatCannotBeReadIsLeftAsItIsAndNoRunOnceStepRunsOnAGuess() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perInstall" },
        { "id": "welcome", "plugin": "noop", "when": { "firstLaunch": true } }
      ] }
      """)
    let first = await LaunchEngine().run(plan, environment: environment())
    #expect(first.step("welcome")?.state == .succeeded)
    // What cannot be read now (a folder in its place here; for another user, a record this
    // one may not open; an I/O error) is no damaged record: set aside, it would make this
    // launch the first, and onboarding and the seed would run again.
    let kept = folder.url.appendingPathComponent("kept.json")
    try FileManager.default.moveItem(at: folder.record.url, to: kept)
    try FileManager.default.createDirectory(
      at: folder.record.url, withIntermediateDirectories: false)
    let report = await LaunchEngine().run(plan, environment: environment())
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
    #expect(report.step("welcome")?.error == "condition: not the first launch")
    #expect(report.contextNotes.count == 1)
    #expect(
      report.contextNotes.first?.hasSuffix("; it was left as it is, and not kept") == true,
      "\(report.contextNotes)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.record.folder.path).sorted()
        == [".\(folder.record.url.lastPathComponent).lock", folder.record.url.lastPathComponent])

    // Once it can be read again, the count goes on from the first launch.
    try FileManager.default.removeItem(at: folder.record.url)
    try FileManager.default.moveItem(at: kept, to: folder.record.url)
    let later = await LaunchEngine().run(plan, environment: environment())
    #expect(later.context?.launchNumber == 2)
    #expect(later.step("seed")?.state == .skipped)
  }

  /// Two launches of one process (two sessions of the app, a widget beside it): the second
  /// skips the run-once step the first runs now, naming that launch, not the process's own
  /// number as if it were another's.
  @Test func aRunOnceStepAnotherLaunchOfThisProcessRunsNowIsSkippedNamingThatLaunch()
    async throws
  {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "wait", "params": { "duration": "10s" }, "once": "perInstall" }
      ] }
      """)
    let clock = ManualClock()
    let recorder = EventRecorder()
    let first = recorder.start(plan, on: LaunchEngine(clock: clock))
    await recorder.waitFor("start seed")
    let second = await LaunchEngine().run(plan, environment: environment())
    #expect(second.step("seed")?.state == .skipped)
    #expect(second.step("seed")?.error == "run by another launch of this process now (launch 1)")
    await clock.advance(to: .seconds(10))
    #expect(await first.value.step("seed")?.state == .succeeded)
  }

  /// A retry reads the record again for its run-once steps: one that cannot be read then
  /// runs none of them on a guess, as a launch would not.
  @MainActor @Test func aRetryWhoseRecordCannotBeReadRunsNoRunOnceStepOnAGuess() async throws {
    let folder = try DataFolder()
    let key = "retry-record-\(UUID().uuidString)"
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "fetch", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 } },
        { "id": "seed", "plugin": "count", "params": { "key": "\(key)-seed" },
          "dependsOn": ["fetch"], "once": "perInstall" }
      ] }
      """)
    let session = LaunchSession()
    let first = await session.run(plan, on: LaunchEngine(), environment: environment())
    #expect(first.outcome == .failed)
    #expect(first.step("seed")?.state == .skipped)
    // The record can no longer be read: a folder in its place.
    try FileManager.default.removeItem(at: folder.record.url)
    try FileManager.default.createDirectory(
      at: folder.record.url, withIntermediateDirectories: false)
    let retried = await session.retry()
    #expect(retried.step("fetch")?.state == .succeeded)
    #expect(retried.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
    #expect(stepRuns.withLock { $0["\(key)-seed"] } == nil)
  }

  /// A full disk at the launch's start: the record reads, but neither the launch nor a claim
  /// on a run-once step can be kept. Facts from it would be the same at every launch (each
  /// the first), and a run-once step would run in each.
  @Test func aRecordThatCannotBeWrittenMakesNoLaunchTheFirstAndRunsNoRunOnceStep() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perInstall" },
        { "id": "welcome", "plugin": "noop", "when": { "firstLaunch": true } }
      ] }
      """)
    let path = folder.record.url.path
    // The folder is there and writable: what the system said is all the failure names.
    try FileManager.default.createDirectory(
      at: folder.record.folder, withIntermediateDirectories: false)
    LaunchRecordFile.writeFaults.withLock {
      $0[path] = SafeFiles.failure(
        ENOSPC, writing: folder.record.url, doing: "write the new file")
    }
    for _ in 0..<2 {
      let report = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
      #expect(report.outcome == .succeeded)
      #expect(report.context?.isFirstLaunch == false)
      #expect(report.context?.launchNumber == 0)
      #expect(
        report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
      #expect(report.step("welcome")?.error == "condition: not the first launch")
      #expect(
        report.contextNotes == [
          "the launch record '\(path)' could not be written (cannot rewrite '\(path)': could not write the new file (\(String(cString: strerror(ENOSPC)))), so the file was left as it was)"
            + ContextKeeper.unkeptNote
        ])
    }
    _ = LaunchRecordFile.writeFaults.withLock { $0.removeValue(forKey: path) }
    #expect(!FileManager.default.fileExists(atPath: path))
    // Once it can be written, the first launch is the first.
    let first = await LaunchEngine().run(plan, environment: environment(version: "1.0"))
    #expect(first.context?.launchNumber == 1)
    #expect(first.step("seed")?.state == .succeeded)
    #expect(first.step("welcome")?.state == .succeeded)
    #expect(first.contextNotes.isEmpty)
  }

  /// What the system said, the folder, and what to do: never "The operation could not be
  /// completed" with the error's type. Root writes in a read-only folder, so this runs as
  /// another user only; the disk-full test above goes the same way as root.
  @Test(.enabled(if: geteuid() != 0))
  func aRecordInAFolderThisUserMayNotWriteIsANoteNamingTheFolder() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "seed", "plugin": "noop", "once": "perInstall" } ] }"#)
    _ = await LaunchEngine().run(plan, environment: environment())
    let records = folder.record.folder.path
    #expect(chmod(records, 0o555) == 0)
    defer { chmod(records, 0o755) }
    let report = await LaunchEngine().run(plan, environment: environment())
    #expect(report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
    let path = folder.record.url.path
    #expect(
      report.contextNotes == [
        "the launch record '\(path)' could not be written (cannot rewrite '\(path)': its folder '\(records)' is not writable, so the file was left as it was; make the folder writable)"
          + ContextKeeper.unkeptNote
      ])
  }

  /// The launch's end let go of its claims: another launch (another process here) may have
  /// claimed a run-once step since, and a retry leaves it to that launch, as a launch would.
  @MainActor @Test func aRetryLeavesARunOnceStepAnotherLaunchClaimedToIt() async throws {
    let folder = try DataFolder()
    let key = "retry-claim-\(UUID().uuidString)"
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "onboard", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "once": "perInstall" },
        { "id": "feed", "plugin": "noop", "dependsOn": ["onboard"] }
      ] }
      """)
    let session = LaunchSession()
    let first = await session.run(plan, on: LaunchEngine(), environment: environment())
    #expect(first.outcome == .failed)
    #expect(first.step("onboard")?.state == .failed)
    // Another process launching now, which lives (process 1 lives as long as the system).
    _ = folder.record.update(waiting: .seconds(1)) { record in
      let number = record.begin(version: nil, process: .number(1))
      record.claim("onboard", version: nil, process: .number(1), launch: number)
    }
    let retried = await session.retry()
    #expect(retried.step("onboard")?.error == "run by another launch now (process 1)")
    #expect(retried.step("feed")?.state == .succeeded)
    #expect(stepRuns.withLock { $0[key] } == 1)
    #expect(folder.record.read().record?.claims?["onboard"]?.process == 1)
  }

  /// A retry of a launch the record no longer counts (set aside, and started again, since)
  /// claims nothing: a claim naming a launch beyond the record's count would be damage, and
  /// the next launch would set the record aside again (and run every run-once step).
  @MainActor @Test func aRetryOfALaunchTheRecordNoLongerCountsClaimsNothing() async throws {
    let folder = try DataFolder()
    let key = "retry-uncounted-\(UUID().uuidString)"
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "onboard", "plugin": "count", "params": { "key": "\(key)", "failRuns": 2 },
          "once": "perInstall" }
      ] }
      """)
    _ = await LaunchEngine().run(plan, environment: environment())
    let session = LaunchSession()
    let failed = await session.run(plan, on: LaunchEngine(), environment: environment())
    #expect(failed.context?.launchNumber == 2)
    #expect(failed.step("onboard")?.state == .failed)
    _ = folder.record.update(waiting: .seconds(1)) { $0 = LaunchRecord() }

    let retried = await session.retry()

    #expect(
      retried.step("onboard")?.error
        == "launch not counted in the launch record; left to a later launch")
    #expect(folder.record.read().record?.claims == nil)
    let next = await LaunchEngine().run(plan, environment: environment())
    #expect(next.contextNotes.allSatisfy { !$0.contains("damaged") }, "\(next.contextNotes)")
    #expect(next.step("onboard")?.state == .succeeded)
  }

  /// A retry claims the run-once steps it runs, so a launch starting meanwhile leaves them to
  /// it, and lets the claims go at its end.
  @MainActor @Test func aRetryClaimsTheRunOnceStepsItRuns() async throws {
    let folder = try DataFolder()
    let key = "retry-claims-\(UUID().uuidString)"
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "onboard", "plugin": "count", "params": { "key": "\(key)", "failRuns": 1 },
          "once": "perInstall" }
      ] }
      """)
    let session = LaunchSession()
    _ = await session.run(plan, on: LaunchEngine(), environment: environment())
    // What another launch would find in the record at the retry's first update after its
    // start: the retry's claim.
    let record = folder.record
    let path = record.url.path
    let found = Locked<[LaunchRecord.Claim?]>([])
    SharedFile.beforeLocking.withLock {
      $0[path] = { found.withLock { $0.append(record.read().record?.claims?["onboard"]) } }
    }
    defer { _ = SharedFile.beforeLocking.withLock { $0.removeValue(forKey: path) } }
    let retried = await session.retry()
    #expect(retried.step("onboard")?.state == .succeeded)
    // The retry's start, then the step's success (with the retry's end, or before it).
    let claims = found.withLock { $0 }
    #expect(claims.count >= 2)
    #expect(claims.dropFirst().first??.process == getpid(), "\(claims)")
    #expect(record.read().record?.claims == nil)
  }

  @Test func withoutAFolderForTheRecordNoRunOnceStepRunsOnAGuess() async throws {
    let folder = try DataFolder()
    try Data("not a folder".utf8).write(
      to: folder.url.appendingPathComponent(LaunchRecordFile.folderName))
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perInstall" },
        { "id": "page", "plugin": "noop", "dependsOn": ["seed"] }
      ] }
      """)
    for _ in 0..<2 {
      let report = await LaunchEngine().run(plan, environment: environment())
      #expect(
        report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
      #expect(report.step("page")?.state == .skipped)
    }
  }

  @Test(arguments: [false, true])
  func aFolderOrALinkWhereTheRecordsLockGoesKeepsNoRecordAndRunsNoRunOnceStep(isLink: Bool)
    async throws
  {
    let folder = try DataFolder()
    let records = folder.url.appendingPathComponent(LaunchRecordFile.folderName)
    try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
    let lock = folder.record.lockURL
    if isLink {
      // To a file another launch would lock too: each would lock nothing, at once.
      let elsewhere = folder.url.appendingPathComponent("elsewhere")
      try Data().write(to: elsewhere)
      try FileManager.default.createSymbolicLink(at: lock, withDestinationURL: elsewhere)
    } else {
      try FileManager.default.createDirectory(at: lock, withIntermediateDirectories: false)
    }
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "seed", "plugin": "noop", "once": "perInstall" } ] }"#)
    let report = await LaunchEngine().run(plan, environment: environment())
    #expect(
      report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
    let what = isLink ? "a symbolic link" : "a folder"
    #expect(
      report.contextNotes == [
        "'\(folder.record.url.path)' cannot be locked to write it: its lock file '\(lock.path)' is \(what), not a file (move it away), so this writer could not take its turn with the others; it was left as it was"
      ])
    #expect(!FileManager.default.fileExists(atPath: folder.record.url.path))
  }

  @Test func aRecordWhoseLockCannotBeTakenGivesUnknownFactsNotFrozenOnes() async throws {
    let folder = try DataFolder()
    // Two launches that died, of an older version. No launch can write the record while the
    // lock cannot be taken, so facts read from it would hold for good: safe mode, an upgrade.
    folder.recordTwoLaunchesThatDied()
    let before = try Data(contentsOf: folder.record.url)
    try FileManager.default.removeItem(at: folder.record.lockURL)
    try FileManager.default.createDirectory(
      at: folder.record.lockURL, withIntermediateDirectories: false)
    let plan = try folder.plan(
      """
      { "version": 1, "safeMode": { "after": 2 }, "steps": [
        { "id": "refresh", "plugin": "noop", "when": { "safeMode": false } },
        { "id": "whatsNew", "plugin": "noop", "when": { "afterUpgrade": true } },
        { "id": "seed", "plugin": "noop", "once": "perInstall" }
      ] }
      """)
    for _ in 0..<2 {
      let report = await LaunchEngine().run(plan, environment: environment(version: "2.0"))
      #expect(report.context?.isSafeMode == false)
      #expect(report.context?.isFirstLaunchAfterUpgrade == false)
      #expect(report.step("refresh")?.state == .succeeded)
      #expect(report.step("whatsNew")?.state == .skipped)
      #expect(
        report.step("seed")?.error == "no launch record kept; left to a launch that keeps one")
      #expect(report.contextNotes.first?.contains("(move it away)") == true)
    }
    #expect(try Data(contentsOf: folder.record.url) == before)
  }

  @Test func aPerVersionStepOfALaunchGivenNoVersionSaysItRunsAsPerInstall() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "seed", "plugin": "noop", "once": "perVersion" } ] }"#)
    let unversioned = await LaunchEngine().run(plan, environment: environment())
    #expect(
      unversioned.contextNotes == [
        "'seed' runs once per app version, and the launch was given none (AppInfo, or the manifest's 'app'), so it runs once, as per install"
      ])
    let versioned = await LaunchEngine().run(plan, environment: environment(version: "2.0"))
    #expect(versioned.contextNotes.isEmpty)
    #expect(versioned.step("seed")?.state == .succeeded)

    // As per install: done in any version, it is done in a launch given none.
    let again = await LaunchEngine().run(plan, environment: environment())
    #expect(again.step("seed")?.state == .skipped)
    #expect(again.step("seed")?.error == "done before (version 2.0)")
    #expect(again.contextNotes.isEmpty, "a note only of a step that runs")
    // And a version given later runs it once for that version.
    let upgraded = await LaunchEngine().run(plan, environment: environment(version: "2.1"))
    #expect(upgraded.step("seed")?.state == .succeeded)
  }

  /// The report read after an on-demand step ran past the launch's end keeps what that end
  /// added: the context's notes.
  @Test func aReportReadAfterAnEnsureKeepsTheContextsNotes() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perVersion" },
        { "id": "index", "plugin": "token.make", "params": { "value": "i" }, "trigger": "onDemand" }
      ] }
      """)
    let control = LaunchControl()
    let report = await LaunchEngine().run(plan, environment: environment(), control: control)
    #expect(report.contextNotes.count == 1)
    _ = try await control.ensure("index", as: Token.self)
    let later = try #require(control.report)
    #expect(later.step("index")?.state == .succeeded)
    #expect(later.contextNotes == report.contextNotes)
    #expect(try LaunchReport(jsonText: later.jsonText).contextNotes == report.contextNotes)
  }

  @Test func aLaunchTiedToNoContextTouchesNoFile() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(#"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop" } ] }"#)
    let report = await LaunchEngine().run(plan)
    #expect(report.context == nil)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
  }

  @Test func reportsKeepTheContextAndOlderFormatsReadWithoutOne() throws {
    var report = LaunchReport(
      manifest: "a.json", name: "A", outcome: .succeeded, route: nil, duration: .seconds(1),
      milestones: [], criticalPath: [], steps: [])
    report.context = LaunchContext(
      reason: .url, isPrewarmed: true, isFirstLaunch: false, isFirstLaunchAfterUpgrade: true,
      launchNumber: 7, isSafeMode: false)
    #expect(try LaunchReport(jsonText: report.jsonText).context == report.context)
    let older = report.jsonText.replacingOccurrences(of: #""version": 5"#, with: #""version": 4"#)
    let withoutContext = try LaunchReport(
      jsonText: older.replacingOccurrences(
        of: #""context": {"#, with: #""ignored": {"#))
    #expect(withoutContext.context == nil)
  }

  @Test func validationNamesEachContextProblemAtItsPath() {
    let found = diagnostics(
      of:
        """
        { "version": 1, "safeMode": { "after": 0 }, "steps": [
          { "id": "a", "plugin": "token.make", "params": { "value": "x" }, "once": "perWeek" },
          { "id": "b", "plugin": "noop", "when": { "frstLaunch": true, "prewarmed": "no" } },
          { "id": "c", "plugin": "noop", "when": { "reason": [] } },
          { "id": "d", "plugin": "noop", "trigger": "onDemand", "when": { "firstLaunch": true },
            "once": "perInstall" }
        ] }
        """)
    #expect(
      found == [
        "1:40: error: safeMode.after: 'after' counts launches that never reached the first screen; use a number from 1 to 16.",
        "2:76: error: step 'a' (steps[0].once): unknown 'once' 'perWeek'. Use \"perInstall\" or \"perVersion\".",
        "3:44: error: step 'b' (steps[1].when.frstLaunch): unknown key 'frstLaunch'. Did you mean 'firstLaunch'?",
        "3:77: error: step 'b' (steps[1].when.prewarmed): expected true or false, found a string.",
        "4:54: error: step 'c' (steps[2].when.reason): 'reason' lists no launch reason, so the step never runs; list the reasons it runs for, like [\"userTap\", \"url\"], or remove 'reason'.",
        "5:65: error: step 'd' (steps[3].when): an on-demand step cannot have 'when': it runs when the app ensures it, whatever the launch. Check the context in the app before ensuring it, or remove 'trigger'.",
        "6:13: error: step 'd' (steps[3].once): an on-demand step cannot have 'once': it runs when the app ensures it, whatever the launch. Check the context in the app before ensuring it, or remove 'trigger'.",
      ])
  }

  @Test func aDependentThatNeedsARunOnceStepsOutputIsAValidationError() {
    let found = diagnostics(
      of:
        """
        { "version": 1, "steps": [
          { "id": "token", "plugin": "token.make", "params": { "value": "x" }, "once": "perVersion" },
          { "id": "use", "plugin": "token.use", "dependsOn": ["token"] }
        ] }
        """)
    #expect(
      found.contains {
        $0.hasSuffix(
          "error: step 'use' (steps[1].dependsOn): 'token.use' needs a Token from a dependency, and only 'token' provides one, which runs once (\"once\": \"perVersion\") and gives nothing on the launches that skip it; take the input as optional (StepInput.optional), or remove 'once' from 'token'."
        )
      }, "\(found)")
  }

  // MARK: - Processes the record names

  /// A process's number is given to another once it has ended: a `sleep` holding it is the
  /// process of the record only with the start the record has for it.
  @Test func aProcessIsAliveOnlyWithTheStartTheRecordHasForIt() throws {
    let sleeper = try Sleeper()
    let start = try #require(ProcessIdentity.start(of: sleeper.number))
    #expect(ProcessIdentity(number: sleeper.number, start: start).isAlive)
    // Another process's start: the one that had the number before.
    let other = try #require(ProcessIdentity.current.start)
    #expect(other != start)
    #expect(!ProcessIdentity(number: sleeper.number, start: other).isAlive)
    // A record written before starts were kept: the number alone says.
    #expect(ProcessIdentity(number: sleeper.number, start: nil).isAlive)
    sleeper.end()
    #expect(ProcessIdentity.start(of: sleeper.number) == nil)
    #expect(!ProcessIdentity(number: sleeper.number, start: start).isAlive)
  }

  /// A launch that crashed while it ran a run-once step left its claim; the system gave the
  /// process's number to another process since. The claim holds nothing: the step runs.
  /// The claim of the process that holds the number now holds.
  @Test func aClaimOfAProcessWhoseNumberAnotherProcessHasNowHoldsNothing() async throws {
    let sleeper = try Sleeper()
    let start = try #require(ProcessIdentity.start(of: sleeper.number))
    let crashed = ProcessIdentity(number: sleeper.number, start: ProcessIdentity.current.start)
    let json = """
      { "version": 1, "steps": [
        { "id": "seed", "plugin": "noop", "once": "perInstall" },
        { "id": "page", "plugin": "noop", "dependsOn": ["seed"] }
      ] }
      """
    var found: [String] = []
    for claimant in [crashed, ProcessIdentity(number: sleeper.number, start: start)] {
      let folder = try DataFolder()
      _ = folder.record.update(waiting: .seconds(1)) { record in
        let number = record.begin(version: nil, process: claimant)
        record.claim("seed", version: nil, process: claimant, launch: number)
      }
      let report = await LaunchEngine().run(try folder.plan(json), environment: environment())
      found.append(
        report.step("seed").map { $0.error ?? $0.state.rawValue } ?? "missing")
      // The launch took the dead claim over and let it go; the live one stays.
      let kept = folder.record.read().record?.claims?["seed"]
      #expect(kept?.owner == (claimant == crashed ? nil : claimant))
    }
    #expect(found == ["succeeded", "run by another launch now (process \(sleeper.number))"])
  }

  /// Safe mode counts launches that died before their first screen: those of a process the
  /// system gave the number of to another since (a `sleep` here, or this very process, as a
  /// container's first process has the same number at every start) died, and only a launch
  /// of the process that has the number now runs.
  @Test func launchesWhoseProcessNumberAnotherProcessHasNowCountAsDeadForSafeMode() async throws {
    let sleeper = try Sleeper()
    let sleeperStart = try #require(ProcessIdentity.start(of: sleeper.number))
    let ownStart = try #require(ProcessIdentity.current.start)
    let json = """
      { "version": 1, "safeMode": { "after": 2 }, "milestones": { "interactive": ["store"] },
        "steps": [
          { "id": "store", "plugin": "noop" },
          { "id": "refresh", "plugin": "noop", "when": { "safeMode": false } }
        ] }
      """
    var found: [String] = []
    for (name, process) in [
      ("sleep's number, another start", ProcessIdentity(number: sleeper.number, start: ownStart)),
      ("this number, another start", ProcessIdentity(number: getpid(), start: sleeperStart)),
      ("sleep, its start", ProcessIdentity(number: sleeper.number, start: sleeperStart)),
    ] {
      let folder = try DataFolder()
      _ = folder.record.update(waiting: .seconds(1)) { record in
        _ = record.begin(version: nil, process: process)
        _ = record.begin(version: nil, process: process)
      }
      let report = await LaunchEngine().run(try folder.plan(json), environment: environment())
      found.append("\(name): \(report.context?.isSafeMode == true ? "safe mode" : "normal")")
    }
    #expect(
      found == [
        "sleep's number, another start: safe mode",
        "this number, another start: safe mode",
        "sleep, its start: normal",
      ])
  }

  /// The record keeps each launch's and each claim's process start; one it cannot be this
  /// long is damage.
  @Test func theRecordKeepsTheProcessStartAndALongOneIsDamage() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop", "once": "perInstall" } ] }"#)
    _ = await LaunchEngine().run(plan, environment: environment())
    var record = try #require(folder.record.read().record)
    let start = try #require(ProcessIdentity.current.start)
    #expect(record.recent.map(\.owner) == [ProcessIdentity(number: getpid(), start: start)])
    #expect(record.damage == nil)
    let long = String(repeating: "1", count: LaunchRecord.startLength + 1)
    record.recent[0].processStart = long
    #expect(record.damage == "holds a process start longer than 128 bytes")
    record.recent[0].processStart = start
    record.claim("a", version: nil, process: ProcessIdentity(number: 1, start: long), launch: 1)
    #expect(record.damage == "holds a process start longer than 128 bytes")
  }

  // MARK: - First launches

  /// The first launch until one got to its first screen or to its end: one that died before
  /// it leaves the next the first; one that ended (a route, a failure), or one running now in
  /// another process, does not. Past the launches the record keeps, it does not know.
  @Test func aFirstLaunchThatDiedLeavesTheNextTheFirst() {
    func isFirst(_ states: [LaunchRecord.State?], alive: Bool = false) -> Bool {
      var record = LaunchRecord()
      for state in states {
        let number = record.begin(version: nil, process: .number(Int32.max))
        if let state { record.mark(number, state) }
      }
      return record.facts(
        for: LaunchContext(), version: nil, safeModeAfter: nil, process: .current
      ) { _ in alive }.isFirstLaunch
    }
    #expect(isFirst([]))
    #expect(isFirst([nil]))
    #expect(isFirst([nil, nil]))
    #expect(!isFirst([nil], alive: true))
    #expect(!isFirst([.firstScreen]))
    #expect(!isFirst([.ended]))
    #expect(!isFirst([nil, .ended, nil]))
    #expect(isFirst(Array(repeating: nil, count: LaunchRecord.recentLimit)))
    #expect(!isFirst(Array(repeating: nil, count: LaunchRecord.recentLimit + 1)))
  }

  // MARK: - Upgrades whose launches died

  /// The first launch after an upgrade until one of the new version got to its first screen
  /// or to its end: one that died before it leaves the next the first after the upgrade, from
  /// the version before (the last that got past a launch), whatever version the next is; one
  /// that ended, or one running now in another process, does not. The version before is
  /// known past the launches the record keeps.
  @Test func anUpgradeLaunchThatDiedLeavesTheNextTheFirstAfterTheUpgrade() {
    /// Launches of the versions with their states (`nil`: started, and died), then the facts
    /// and the version before for a launch of `next`.
    func judge(
      _ launches: [(String, LaunchRecord.State?)], next: String, alive: Bool = false
    ) -> (upgrade: Bool, previous: String?, downgrade: String?, passedOver: [Int]) {
      var record = LaunchRecord()
      for (version, state) in launches {
        let number = record.begin(version: version, process: .number(Int32.max))
        if let state { record.mark(number, state) }
      }
      let facts = record.facts(
        for: LaunchContext(), version: next, safeModeAfter: nil, process: .current
      ) { _ in alive }
      return (
        facts.isFirstLaunchAfterUpgrade,
        record.previousVersion(process: .current) { _ in alive },
        record.downgrade(to: next, process: .current) { _ in alive },
        record.passedOver(process: .current) { _ in alive }.map(\.number)
      )
    }
    let reached = ("1.0", LaunchRecord.State?.some(.firstScreen))
    // 2.0 killed before its first screen: 2.0 again, or 3.0, is the first after the upgrade
    // from 1.0.
    #expect(judge([reached, ("2.0", nil)], next: "2.0") == (true, "1.0", nil, [2]))
    #expect(
      judge([reached, ("2.0", nil), ("2.0", nil)], next: "3.0") == (true, "1.0", nil, [2, 3]))
    // Back to 1.0 after 2.0 died: no downgrade (2.0 never ran), no upgrade.
    #expect(judge([reached, ("2.0", nil)], next: "1.0") == (false, "1.0", nil, [2]))
    // 3.0 died, then 2.0: an upgrade from 1.0, not a downgrade from 3.0.
    #expect(judge([reached, ("3.0", nil)], next: "2.0") == (true, "1.0", nil, [2]))
    // 2.0 got to its first screen, or to its end, or runs now: the upgrade is done.
    #expect(judge([reached, ("2.0", .firstScreen)], next: "2.0") == (false, "2.0", nil, []))
    #expect(judge([reached, ("2.0", .ended)], next: "2.0") == (false, "2.0", nil, []))
    #expect(judge([reached, ("2.0", nil)], next: "2.0", alive: true) == (false, "2.0", nil, []))
    #expect(judge([reached, ("2.0", .firstScreen)], next: "1.0") == (false, "2.0", "2.0", []))
    // More launches of 2.0 that died than the record keeps: 1.0 is still the version before.
    let many = Array(repeating: ("2.0", LaunchRecord.State?.none), count: LaunchRecord.recentLimit)
    #expect(judge([reached] + many, next: "2.0").upgrade)
    #expect(judge([reached] + many, next: "2.0").previous == "1.0")
    #expect(judge([reached] + many, next: "1.0") == (false, "1.0", nil, Array(2...17)))
  }

  /// A record written before the version reached was kept (`reachedVersion` absent): its
  /// recent launches say which versions got past a launch; past them, the highest version
  /// given stands for it, as before. Once a launch of this build gets to its first screen,
  /// the record keeps the highest version reached.
  @Test func aRecordWrittenBeforeTheVersionReachedWasKeptJudgesByItsRecentLaunches() {
    var record = LaunchRecord()
    record.mark(record.begin(version: "1.0", process: .number(Int32.max)), .firstScreen)
    _ = record.begin(version: "2.0", process: .number(Int32.max))
    record.reachedVersion = nil
    #expect(record.newestVersion == "2.0")
    func upgrade(_ record: LaunchRecord, to version: String) -> Bool {
      record.facts(for: LaunchContext(), version: version, safeModeAfter: nil, process: .current)
        .isFirstLaunchAfterUpgrade
    }
    #expect(upgrade(record, to: "2.0"))
    #expect(record.previousVersion(process: .current) == "1.0")
    // Past the recent launches, the builds before knew only the highest version given.
    var long = record
    long.launchCount = 100
    long.recent.removeFirst()
    #expect(!upgrade(long, to: "2.0"))
    #expect(long.previousVersion(process: .current) == "2.0")
    // A launch of this build that gets to its first screen keeps the highest version of the
    // recent launches that did (1.0, 1.5), and a lower one after it changes nothing.
    record.mark(record.begin(version: "1.5", process: .number(Int32.max)), .firstScreen)
    #expect(record.reachedVersion == "1.5")
    _ = record.begin(version: "1.0", process: .number(Int32.max))
    record.mark(record.launchCount, .firstScreen)
    #expect(record.reachedVersion == "1.5")
    #expect(record.newestVersion == "2.0")
  }

  /// Through the engine and the record on disk: a launch of 2.0 that died before its first
  /// screen (started in the record, its process gone) leaves the next launch the first after
  /// the upgrade, which runs the upgrade's step and says why in a note; the record keeps 1.0
  /// as the version reached until a launch of 2.0 gets to its first screen.
  @Test func anUpgradeKilledBeforeItsFirstScreenRunsItsStepsInTheNextLaunch() async throws {
    let folder = try DataFolder()
    let plan = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "purge", "plugin": "noop", "when": { "afterUpgrade": true } }
      ] }
      """)
    func launch(_ version: String) async -> LaunchReport {
      await LaunchEngine().run(plan, environment: environment(version: version))
    }
    func kill(_ version: String) {
      _ = folder.record.update(waiting: .seconds(1)) {
        _ = $0.begin(version: version, process: .number(Int32.max))
      }
    }
    _ = await launch("1.0")
    kill("2.0")
    #expect(folder.record.read().record?.reachedVersion == "1.0")
    let again = await launch("2.0")
    #expect(again.context?.isFirstLaunchAfterUpgrade == true)
    #expect(again.context?.launchNumber == 3)
    #expect(again.step("purge")?.state == .succeeded)
    #expect(
      again.contextNotes == [
        "1 launch of 2.0 since 1.0 never reached its first screen (killed or crashed); this launch is the first after the upgrade from 1.0"
      ])
    #expect(folder.record.read().record?.reachedVersion == "2.0")
    let after = await launch("2.0")
    #expect(after.context?.isFirstLaunchAfterUpgrade == false)
    #expect(after.step("purge")?.state == .skipped)
    #expect(after.contextNotes == [])

    // 3.0 killed twice, then 4.0: the upgrade from 2.0.
    kill("3.0")
    kill("3.0")
    let skipped = await launch("4.0")
    #expect(skipped.context?.isFirstLaunchAfterUpgrade == true)
    #expect(
      skipped.contextNotes == [
        "2 launches of 3.0 since 2.0 never reached their first screen (killed or crashed); this launch is the first after the upgrade from 2.0"
      ])
    // The report keeps what the launch was told.
    let read = try LaunchReport(jsonText: skipped.jsonText)
    #expect(read.context == skipped.context)
    #expect(read.contextNotes == skipped.contextNotes)
  }

  // MARK: - Installs that ran before the record

  /// The update that first ships `when`/`once`: the launches before kept no record (their
  /// manifest used neither), and the store a step keeps is in the data folder. The launch is
  /// not the first (no onboarding, no sample data into the user's store), is the first after
  /// an upgrade, and says why; the record keeps it, so a takeover launch killed before its
  /// first screen leaves the next one the same.
  @Test func anInstallThatRanBeforeTheRecordIsNotANewOne() async throws {
    let folder = try DataFolder()
    let before = try folder.plan(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "keep.file" } ] }"#)
    let update = try folder.plan(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "keep.file" },
        { "id": "seed", "plugin": "noop", "dependsOn": ["store"], "when": { "firstLaunch": true } },
        { "id": "purge", "plugin": "noop", "when": { "afterUpgrade": true } }
      ] }
      """)
    let old = await LaunchEngine().run(before, environment: environment(version: "1.0"))
    #expect(old.context == nil)
    #expect(!FileManager.default.fileExists(atPath: folder.record.url.path))
    let store = folder.url.appendingPathComponent("library.sqlite")
    #expect(FileManager.default.fileExists(atPath: store.path))

    // What `orchestrate plan` shows is what the launch does.
    let next = update.nextContext(LaunchContext(), version: "2.0")
    #expect(next.context.isFirstLaunch == false)
    #expect(next.context.isFirstLaunchAfterUpgrade == true)

    let updated = await LaunchEngine().run(update, environment: environment(version: "2.0"))
    #expect(updated.context?.isFirstLaunch == false)
    #expect(updated.context?.isFirstLaunchAfterUpgrade == true)
    #expect(updated.context?.launchNumber == 1)
    #expect(updated.step("seed")?.state == .skipped)
    #expect(updated.step("seed")?.error == "condition: not the first launch")
    #expect(updated.step("purge")?.state == .succeeded)
    #expect(
      updated.contextNotes == [
        "the launch record holds no launch, and the data folder holds 'library.sqlite' (the 'path' of step 'store'): this install ran before the record was kept, so this launch is not the first, and is the first after an upgrade"
      ])
    #expect(next.notes == updated.contextNotes)
    #expect(folder.record.read().record?.existingInstall == true)
    let later = await LaunchEngine().run(update, environment: environment(version: "2.0"))
    #expect(later.context?.isFirstLaunchAfterUpgrade == false)
    #expect(later.contextNotes == [])

    // The takeover launch killed before its first screen: the next is still of an install
    // that ran before, and still the first after the upgrade.
    var killed = LaunchRecord()
    _ = killed.begin(version: "2.0", process: .number(Int32.max), existingInstall: true)
    let facts = killed.facts(
      for: LaunchContext(), version: "2.0", safeModeAfter: nil, process: .current)
    #expect(!facts.isFirstLaunch)
    #expect(facts.isFirstLaunchAfterUpgrade)
    killed.mark(1, .firstScreen)
    #expect(
      !killed.facts(for: LaunchContext(), version: "2.0", safeModeAfter: nil, process: .current)
        .isFirstLaunchAfterUpgrade)
  }

  /// Without a store the manifest declares, the app says it: `existingInstall: true` makes the
  /// launch of a record that holds no launch not the first; `false` makes it the first even
  /// with a store in the data folder (an app that copies a ready-made store before its first
  /// launch). Once the record holds a launch, the record says, whatever the app says: a first
  /// launch killed before its first screen leaves the next the first even after the app
  /// wrote what it reads its answer from.
  @Test func theAppSaysWhetherAnInstallRanBeforeTheRecord() async throws {
    let manifest = """
      { "version": 1, "steps": [
        { "id": "onboarding", "plugin": "noop", "when": { "firstLaunch": true } }
      ] }
      """
    func launch(
      _ folder: DataFolder, _ existingInstall: Bool?, manifest: String = manifest
    ) async throws -> LaunchReport {
      let context = LaunchContext(existingInstall: existingInstall)
      return await LaunchEngine().run(
        try folder.plan(manifest), environment: environment(context, version: "3.0"))
    }
    let said = try DataFolder()
    let report = try await launch(said, true)
    #expect(report.context?.isFirstLaunch == false)
    #expect(report.context?.isFirstLaunchAfterUpgrade == true)
    #expect(report.step("onboarding")?.error == "condition: not the first launch")
    #expect(
      report.contextNotes == [
        "the launch record holds no launch, and the app says the install ran before (existingInstall): this install ran before the record was kept, so this launch is not the first, and is the first after an upgrade"
      ])
    // Handed on to no one: the report and its text say the facts alone.
    #expect(report.context?.existingInstall == nil)
    #expect(try LaunchReport(jsonText: report.jsonText).context == report.context)

    let copied = try DataFolder()
    try Data("ready-made".utf8).write(to: copied.url.appendingPathComponent("library.sqlite"))
    let withStore = """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "keep.file" },
        { "id": "onboarding", "plugin": "noop", "when": { "firstLaunch": true } }
      ] }
      """
    let fresh = try await launch(copied, false, manifest: withStore)
    #expect(fresh.context?.isFirstLaunch == true)
    #expect(fresh.contextNotes == [])

    let killed = try DataFolder()
    var record = LaunchRecord()
    _ = record.begin(version: "3.0", process: .number(Int32.max))
    _ = killed.record.update(waiting: .seconds(1)) { $0 = record }
    let next = try await launch(killed, true)
    #expect(next.context?.isFirstLaunch == true)
    #expect(next.step("onboarding")?.state == .succeeded)
    #expect(next.contextNotes == [])
  }
}

/// A `sleep` child of the test: a live process with a number, ended with the value or by
/// ``end()``.
private final class Sleeper {
  private let process = Process()
  let number: Int32

  init() throws {
    process.executableURL = URL(fileURLWithPath: "/bin/sleep")
    process.arguments = ["600"]
    try process.run()
    number = process.processIdentifier
  }

  /// Ends the process and waits until it is gone. With `SIGKILL`: a child started from a
  /// thread of the test blocks the signals that thread blocks, `SIGTERM` among them.
  func end() {
    guard process.isRunning else { return }
    kill(number, SIGKILL)
    process.waitUntilExit()
  }

  deinit { end() }
}
