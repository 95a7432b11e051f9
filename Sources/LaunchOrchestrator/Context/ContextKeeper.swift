import Foundation

/// How a launch treats the launch record.
package enum LaunchRecordUse: Sendable, Equatable {
  /// Kept when the manifest uses the context (`when`, `once`, `safeMode`) or the app hands a
  /// ``LaunchContext``: a launch tied to neither touches no file for it.
  case automatic
  /// Kept for every launch (`orchestrate run`).
  case kept
  /// A rehearsal with these facts: the record is read for run-once steps, never written.
  case rehearsed(LaunchContext)
}

/// One launch's side of its context: the facts at its start, the steps they keep out, and
/// the record's updates as the launch goes (the first screen reached, run-once steps that
/// succeeded), each written off the engine's thread and awaited at the launch's end.
final class ContextKeeper: Sendable {
  /// The launch's context, the record's facts filled in.
  let context: LaunchContext
  /// The steps the context keeps out.
  let skips: [ContextSkip]
  /// The milestone that is the first screen (the splash's `dismissOn`, else `interactive`);
  /// `nil` when the manifest has neither, and the launch's end counts.
  let firstScreen: Int?
  private let plan: LaunchPlan
  /// The record to update; `nil` for a rehearsal.
  private let file: LaunchRecordFile?
  /// The launch's number in the record, known at its start; 0 when it is counted later
  /// (``counting``) or not at all.
  private let number: Int
  /// The launch being counted off the launch's path, for a launch that found the record
  /// locked at its start: its number once counted, 0 when it could not be.
  private let counting: Task<Int, Never>?
  private let version: String?
  /// Whether the record was locked or unusable at the start: its end writes only what the
  /// record must keep (run-once steps that succeeded), and says nothing more about the lock.
  private let isBusy: Bool
  /// Whether the launch found that the install ran before the record was kept, for a launch
  /// counted after its start: the record keeps it if it still holds no launch then.
  private let existingInstall: Bool
  private let state: Locked<State>

  private struct State {
    var notes: [String]
    var markedScreen = false
    var writes: [Task<[String], Never>] = []
    /// The changes asked for that no write has taken yet, in order.
    var pending: [Change] = []
    /// Whether a write that will take ``pending`` has been started and has not taken it.
    var isTakerWaiting = false
  }

  /// A change to the record, given the launch's number; `evenUncounted` when it is made for a
  /// launch that could not be counted too.
  private typealias Change = (
    apply: @Sendable (inout LaunchRecord, Int) -> Void, evenUncounted: Bool
  )

  private init(
    context: LaunchContext, skips: [ContextSkip], plan: LaunchPlan, file: LaunchRecordFile?,
    number: Int, version: String?, notes: [String], isBusy: Bool = false,
    counting: Task<Int, Never>? = nil, existingInstall: Bool = false
  ) {
    self.isBusy = isBusy
    self.existingInstall = existingInstall
    self.counting = counting
    self.context = context
    self.skips = skips
    self.plan = plan
    self.file = file
    self.number = number
    self.version = version
    let screen = plan.manifest.splash?.dismissOn ?? "interactive"
    firstScreen = plan.milestones.firstIndex { $0.name == screen }
    // Without a version, every launch is of the same one: said of a step that runs, since
    // it is seldom meant.
    let unversioned =
      version != nil
      ? []
      : plan.contextSteps.compactMap { index in
        plan.manifest.steps[index].once == .perVersion && !skips.contains { $0.step == index }
          ? "'\(plan.steps[index].id)' runs once per app version, and the launch was given none (AppInfo, or the manifest's 'app'), so it runs once, as per install"
          : nil
      }
    state = Locked(State(notes: notes + unversioned))
  }

  /// The longest a launch waits for the record's lock at its start: longer, and the launch
  /// goes on with the record read without the lock, uncounted. Many launches starting at once
  /// take their turns well within it, since each holds the lock for a read and a write.
  static let startWait = Duration.milliseconds(250)
  /// The longest each of the record's updates during and at the end of a launch waits for the
  /// lock, off the launch's path: it delays only the launch's return, never its steps.
  static let updateWait = Duration.seconds(2)

  /// The launches of this process that are running, by record and number: their claims on
  /// run-once steps hold; a claim of a launch of this process that is over holds nothing.
  private static let running = Locked<Set<String>>([])

  /// Starts the context of a launch of `plan`: begins the launch in the record (or, for a
  /// retry, goes on with the `previous` run's context), claims the run-once steps it will
  /// run, and judges the context's steps. `nil` when the launch keeps no record.
  static func start(
    plan: LaunchPlan, environment: LaunchEnvironment, use: LaunchRecordUse,
    previous: LaunchContext?
  ) -> ContextKeeper? {
    let given = environment[LaunchContext.self]
    let usesContext =
      !plan.contextSteps.isEmpty || plan.manifest.safeMode != nil || given != nil
    // Before anything else: most launches keep no record, and pay for nothing of it.
    if case .automatic = use, !usesContext { return nil }
    let version = environment[AppInfo.self]?.version
    let file = LaunchRecordFile(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    switch use {
    case .rehearsed(let context):
      let (record, notes) = context.isFirstLaunch ? (LaunchRecord(), []) : file.read()
      return ContextKeeper(
        context: context,
        skips: skips(of: plan, in: context, record: record, version: version),
        plan: plan, file: nil, number: context.launchNumber, version: version, notes: notes)
    case .automatic, .kept:
      let process = ProcessIdentity.current
      let onceSteps = plan.contextSteps.filter { plan.manifest.steps[$0].once != nil }
      let onceIDs = Set(onceSteps.map { plan.steps[$0].id })
      if let previous {
        return retry(
          of: previous, plan: plan, file: file, version: version, onceSteps: onceSteps,
          process: process)
      }
      let started = file.update(waiting: startWait) { record in
        let (facts, factNotes, existingInstall) = plan.facts(
          by: record, given: given ?? LaunchContext(), version: version, process: process)
        var skips = Self.skips(of: plan, in: facts, record: record, version: version)
        let number = record.begin(
          version: version, process: process, existingInstall: existingInstall)
        record.keepOnce(of: onceIDs) { isRunning($0, file: file) }
        claim(
          onceSteps, of: plan, in: &record, skips: &skips, version: version, process: process,
          launch: number, file: file)
        var started = facts
        started.launchNumber = number
        return (started, skips, factNotes)
      }
      var notes = started.notes
      if let (context, skips, factNotes) = started.value {
        guard started.wasWritten else {
          // Read, but not written (a full disk, a folder this user may not write): neither
          // the launch nor its claims were kept. Facts from the record would stay as they
          // are for every launch (each the first), and a run-once step would run in each, so
          // the launch goes on as for a record that cannot be kept.
          _ = running.withLock { $0.remove("\(context.launchNumber) \(file.url.path)") }
          notes[notes.count - 1] += Self.unkeptNote
          let unknown = LaunchContext.unknown(given ?? LaunchContext())
          return ContextKeeper(
            context: unknown,
            skips: Self.skips(of: plan, in: unknown, record: nil, version: version),
            plan: plan, file: nil, number: 0, version: version, notes: notes)
        }
        notes += factNotes
        return ContextKeeper(
          context: context, skips: skips, plan: plan, file: file, number: context.launchNumber,
          version: version, notes: notes)
      }
      // The record is locked by another process, or cannot be kept (its folder is a file or
      // a link, a newer build wrote it, it cannot be read, its lock cannot be taken): the
      // launch goes on at once. A locked record is read without the lock for the launch's
      // facts, and the launch is counted off its path once the lock is free; run-once steps
      // not done yet are left to a later launch, since only a claim made holding the lock
      // keeps two launches from both running one. A record that cannot be kept gives unknown
      // facts.
      let given = given ?? LaunchContext()
      // A record whose lock cannot be taken is never written again: facts read from it would
      // stay as they are for good (after an upgrade, in safe mode), so they are unknown, as
      // for a record that cannot be kept.
      let (record, readNotes) = started.wasBusy ? file.read() : (nil, [])
      var context = LaunchContext.unknown(given)
      var skips: [ContextSkip] = []
      var counting: Task<Int, Never>?
      var existingInstall = false
      if let record {
        let facts: (context: LaunchContext, notes: [String], existingInstall: Bool)
        facts = plan.facts(by: record, given: given, version: version, process: process)
        (context, existingInstall) = (facts.context, facts.existingInstall)
        context.launchNumber = 0
        skips = Self.skips(of: plan, in: context, record: record, version: version)
        let skipped = Set(skips.map(\.step))
        for index in onceSteps where !skipped.contains(index) {
          skips.append(
            ContextSkip(
              step: index, reason: lockedReason, keepsDependents: false))
        }
        skips.sort { $0.step < $1.step }
        notes[0] +=
          "; this launch read it without the lock and went on (run-once steps not done yet are left to a later launch)"
        notes += facts.notes
        let key = file.url.path
        counting = Task(executorPreference: BlockingExecutor.shared, priority: .utility) {
          [existingInstall] in
          let update = file.update(waiting: updateWait) { record in
            let number = record.begin(
              version: version, process: process, existingInstall: existingInstall)
            running.withLock { _ = $0.insert("\(number) \(key)") }
            return number
          }
          guard let number = update.value, update.wasWritten else {
            // Not counted: a number the record does not hold names no launch of this one.
            if let number = update.value { _ = running.withLock { $0.remove("\(number) \(key)") } }
            return 0
          }
          return number
        }
      } else {
        if started.wasBusy {
          notes[0] +=
            "; this launch went on without its facts (not the first launch, not after an upgrade, not in safe mode)"
        }
        skips = Self.skips(
          of: plan, in: context, record: nil, version: version,
          unknownBecause: started.wasBusy
            ? lockedReason : Self.noRecordReason)
      }
      notes += readNotes
      return ContextKeeper(
        context: context, skips: skips, plan: plan, file: record == nil ? nil : file,
        number: 0, version: version, notes: notes, isBusy: true, counting: counting,
        existingInstall: existingInstall)
    }
  }

  /// Claims in `record` each run-once step of `steps` that `skips` does not keep out, for
  /// launch `launch` of this process, `process`, which is running from now on: a launch
  /// starting meanwhile leaves a step claimed by a live launch to it. A step a live launch
  /// claimed already is added to `skips` instead, which ends in manifest order.
  private static func claim(
    _ steps: [Int], of plan: LaunchPlan, in record: inout LaunchRecord,
    skips: inout [ContextSkip], version: String?, process: ProcessIdentity, launch: Int,
    file: LaunchRecordFile
  ) {
    running.withLock { _ = $0.insert("\(launch) \(file.url.path)") }
    let skipped = Set(skips.map(\.step))
    for index in steps where !skipped.contains(index) {
      guard let once = plan.manifest.steps[index].once else { continue }
      let id = plan.steps[index].id
      if let claimant = record.claimant(
        of: id, once, version: version, process: process, launch: launch,
        isRunning: { isRunning($0, file: file) })
      {
        skips.append(
          ContextSkip(
            step: index,
            reason: claimant.owner.isSame(as: process)
              ? "run by another launch of this process now (launch \(claimant.launch))"
              : "run by another launch now (process \(claimant.process))",
            keepsDependents: true))
      } else {
        record.claim(id, version: version, process: process, launch: launch)
      }
    }
    skips.sort { $0.step < $1.step }
  }

  /// The context of a retry of the launch whose run had `previous`: its facts stay, whether a
  /// run-once step is done is read again, and the run-once steps it will run are claimed as
  /// the launch claimed them. The launch's end let its claims go, and another launch may have
  /// claimed a step since: without a claim, both would run it at once.
  private static func retry(
    of previous: LaunchContext, plan: LaunchPlan, file: LaunchRecordFile, version: String?,
    onceSteps: [Int], process: ProcessIdentity
  ) -> ContextKeeper {
    let number = previous.launchNumber
    let claimed = file.update(waiting: startWait) { record in
      var skips = Self.skips(of: plan, in: previous, record: record, version: version)
      if number > 0, number <= record.launchCount {
        claim(
          onceSteps, of: plan, in: &record, skips: &skips, version: version, process: process,
          launch: number, file: file)
      } else {
        // Never counted (the record was locked, or could not be written), or counted in a
        // record set aside since: a claim must name a launch the record holds (one beyond
        // its count is damage), so the steps are left to a later launch, as they were.
        let skipped = Set(skips.map(\.step))
        for index in onceSteps where !skipped.contains(index) {
          skips.append(ContextSkip(step: index, reason: uncountedReason, keepsDependents: false))
        }
        skips.sort { $0.step < $1.step }
      }
      return skips
    }
    if let skips = claimed.value, claimed.wasWritten {
      return ContextKeeper(
        context: previous, skips: skips, plan: plan, file: file, number: number,
        version: version, notes: claimed.notes)
    }
    // No claim was kept: the run-once steps not done yet are left to a later launch, as for a
    // launch that finds the record locked or cannot keep it.
    if claimed.value != nil {
      _ = running.withLock { $0.remove("\(number) \(file.url.path)") }
    }
    let (record, readNotes) = claimed.wasBusy ? file.read() : (nil, [])
    var skips = Self.skips(
      of: plan, in: previous, record: record, version: version,
      unknownBecause: claimed.wasBusy ? lockedReason : noRecordReason)
    if record != nil {
      let skipped = Set(skips.map(\.step))
      for index in onceSteps where !skipped.contains(index) {
        skips.append(ContextSkip(step: index, reason: lockedReason, keepsDependents: false))
      }
      skips.sort { $0.step < $1.step }
    }
    // A locked record is still told how the retry ended, once the lock is free.
    return ContextKeeper(
      context: previous, skips: skips, plan: plan, file: record == nil ? nil : file,
      number: number, version: version, notes: claimed.notes + readNotes, isBusy: true)
  }

  /// Why a run-once step is skipped when the record stayed locked at the launch's start.
  static let lockedReason = "launch record locked; left to a later launch"
  /// Why a retry skips a run-once step when the record does not count its launch.
  static let uncountedReason = "launch not counted in the launch record; left to a later launch"

  /// Whether the launch holding `claim` is running: in another process that lives (the
  /// process it names, not one given its number since), or in this one and not over.
  private static func isRunning(_ claim: LaunchRecord.Claim, file: LaunchRecordFile) -> Bool {
    if claim.owner.isSame(as: .current) {
      return running.withLock { $0.contains("\(claim.launch) \(file.url.path)") }
    }
    return claim.owner.isAlive
  }

  /// Why a run-once step is skipped when the record cannot be read or kept.
  static let noRecordReason = "no launch record kept; left to a launch that keeps one"

  /// What a record that could be read but not written at the launch's start means for the
  /// launch, after the note saying why it could not be written.
  static let unkeptNote =
    "; this launch was not counted, its facts are unknown (not the first launch, not after an upgrade, not in safe mode) and its run-once steps are left to a launch that keeps the record"

  /// The steps `context` keeps out of a launch of `plan`, in manifest order. Without a
  /// `record` (it cannot be read), whether a run-once step ran is unknown, and none is
  /// claimed: the safe side is not to run it, for `reason`, rather than run it in every
  /// launch.
  static func skips(
    of plan: LaunchPlan, in context: LaunchContext, record: LaunchRecord?, version: String?,
    unknownBecause reason: String = noRecordReason
  ) -> [ContextSkip] {
    plan.contextSteps.compactMap { index in
      let declaration = plan.manifest.steps[index]
      if let reason = declaration.when?.skipReason(in: context) {
        return ContextSkip(step: index, reason: reason, keepsDependents: false)
      }
      guard let once = declaration.once else { return nil }
      guard let record else {
        return ContextSkip(step: index, reason: reason, keepsDependents: false)
      }
      guard let done = record.doneVersion(of: declaration.id, once, version: version)
      else { return nil }
      return ContextSkip(
        step: index, reason: done.map { "done before (version \($0))" } ?? "done before",
        keepsDependents: true)
    }
  }

  /// The launch reached its first screen: the record says so, so the next launch does not
  /// count this one as one that died.
  func reachedFirstScreen() {
    let first = state.withLock { state in
      defer { state.markedScreen = true }
      return !state.markedScreen
    }
    if first { write { record, number in record.mark(number, .firstScreen) } }
  }

  /// Step `step` succeeded: a run-once step is recorded as done, and its claim let go.
  func stepSucceeded(_ step: Int) {
    guard plan.manifest.steps[step].once != nil else { return }
    let id = plan.steps[step].id
    let (process, version) = (ProcessIdentity.current, version)
    write(evenUncounted: true) { record, number in
      record.recordOnce(id, version: version)
      record.release(process: process, launch: number, steps: [id])
    }
  }

  /// The launch is over with `outcome`: one that did not reach its first screen ended
  /// anyway (a route, a failure), which is not a crash. Returns every note, once the
  /// record's writes are done.
  func finish(outcome: LaunchOutcome) async -> [String] {
    let marked = state.withLock(\.markedScreen)
    let reached = firstScreen == nil && (outcome == .succeeded || outcome == .degraded)
    let process = ProcessIdentity.current
    // Claims on run-once steps that did not succeed (failed, skipped, cancelled) are let
    // go, so that a later launch runs them.
    write { record, number in
      if !marked { record.mark(number, reached ? .firstScreen : .ended) }
      record.release(process: process, launch: number)
    }
    var notes = state.withLock(\.notes)
    // Each write hands on the notes of those before it: the last has them all.
    if let last = state.withLock(\.writes.last) { notes += await last.value }
    let number = await launchNumber()
    if number > 0, let file {
      _ = Self.running.withLock { $0.remove("\(number) \(file.url.path)") }
    } else if counting != nil, let file {
      // Found locked at the start, and again all through the update that counts it: one more
      // try, as a launch over (not one that died, for the crash-loop guard).
      let (version, state) = (version, marked || reached ? LaunchRecord.State.firstScreen : .ended)
      let existingInstall = existingInstall
      // Off the cooperative pool, as every update: it may wait for the lock.
      let problems = await Task(executorPreference: BlockingExecutor.shared, priority: .utility) {
        let update = file.update(waiting: Self.updateWait) { record in
          record.mark(
            record.begin(version: version, process: process, existingInstall: existingInstall),
            state)
        }
        guard update.value == nil else { return update.notes }
        // What else went wrong (the record moved aside, its folder replaced) says itself.
        return update.wasBusy
          ? [
            "the launch record '\(file.url.path)' stayed locked by other processes until the launch's end; this launch was not counted"
          ] : update.notes
      }.value
      notes += problems
    }
    // One note for one problem, however many updates met it.
    var seen = Set<String>()
    return notes.filter { seen.insert($0).inserted }
  }

  /// The launch's number in the record, once it is counted; 0 when it is not.
  private func launchNumber() async -> Int {
    if let counting { return await counting.value }
    return number
  }

  /// Changes the record on a thread of its own, after the launch is counted: never on the
  /// engine's handler, which starts the next steps. `change` gets the launch's number; it
  /// runs only for a counted launch, unless `evenUncounted`.
  ///
  /// Changes asked for while a write is under way are made together by the next one, in the
  /// order they were asked for: steps that succeed back to back cost one write of the record
  /// (a read, and a replacement with two `fsync`s), not one each.
  private func write(
    evenUncounted: Bool = false,
    _ change: @escaping @Sendable (inout LaunchRecord, Int) -> Void
  ) {
    guard let file else { return }
    let isBusy = isBusy
    // In the order they were asked for: a step's success is recorded before the launch's
    // end lets go of its claims, so no launch starting in between runs the step again.
    state.withLock { state in
      state.pending.append((change, evenUncounted))
      guard !state.isTakerWaiting else { return }
      state.isTakerWaiting = true
      let previous = state.writes.last
      let task = Task(executorPreference: BlockingExecutor.shared, priority: .utility) {
        let notes = await previous?.value ?? []
        let changes = self.state.withLock { state in
          state.isTakerWaiting = false
          defer { state.pending = [] }
          return state.pending
        }
        let number = await self.launchNumber()
        let made = number > 0 ? changes : changes.filter(\.evenUncounted)
        guard !made.isEmpty else { return notes }
        let update = file.update(waiting: Self.updateWait) { record in
          for change in made { change.apply(&record, number) }
        }
        // A launch that found the record locked at its start said so once already.
        return notes + (isBusy && update.wasBusy ? [] : update.notes)
      }
      state.writes.append(task)
    }
  }
}
