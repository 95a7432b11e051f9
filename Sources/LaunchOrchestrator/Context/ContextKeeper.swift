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
  private let number: Int
  private let version: String?
  private let state: Locked<State>

  private struct State {
    var notes: [String]
    var markedScreen = false
    var writes: [Task<[String], Never>] = []
  }

  private init(
    context: LaunchContext, skips: [ContextSkip], plan: LaunchPlan, file: LaunchRecordFile?,
    number: Int, version: String?, notes: [String]
  ) {
    self.context = context
    self.skips = skips
    self.plan = plan
    self.file = file
    self.number = number
    self.version = version
    let screen = plan.manifest.splash?.dismissOn ?? "interactive"
    firstScreen = plan.milestones.firstIndex { $0.name == screen }
    state = Locked(State(notes: notes))
  }

  /// Starts the context of a launch of `plan`: begins the launch in the record (or, for a
  /// retry, goes on with the `previous` run's context), and judges the context's steps.
  /// `nil` when the launch keeps no record.
  static func start(
    plan: LaunchPlan, environment: LaunchEnvironment, use: LaunchRecordUse,
    previous: LaunchContext?
  ) -> ContextKeeper? {
    let given = environment[LaunchContext.self]
    let usesContext =
      !plan.contextSteps.isEmpty || plan.manifest.safeMode != nil || given != nil
    let version = environment[AppInfo.self]?.version
    let file = LaunchRecordFile(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    switch use {
    case .automatic where !usesContext:
      return nil
    case .rehearsed(let context):
      let (record, notes) = context.isFirstLaunch ? (LaunchRecord(), []) : file.read()
      return ContextKeeper(
        context: context, skips: skips(of: plan, in: context, record: record, version: version),
        plan: plan, file: nil, number: context.launchNumber, version: version, notes: notes)
    case .automatic, .kept:
      if let previous {
        let (record, notes) = file.read()
        return ContextKeeper(
          context: previous,
          skips: skips(of: plan, in: previous, record: record, version: version), plan: plan,
          file: file, number: previous.launchNumber, version: version, notes: notes)
      }
      let process = getpid()
      let onceSteps = Set(
        plan.contextSteps.filter { plan.manifest.steps[$0].once != nil }.map {
          plan.steps[$0].id
        })
      let (started, notes) = file.update { record in
        let facts = record.facts(
          for: given ?? LaunchContext(), version: version,
          safeModeAfter: plan.manifest.safeMode?.after, process: process)
        let skips = skips(of: plan, in: facts, record: record, version: version)
        _ = record.begin(version: version, process: process)
        record.keepOnce(only: onceSteps)
        return (facts, skips)
      }
      return ContextKeeper(
        context: started.0, skips: started.1, plan: plan, file: file,
        number: started.0.launchNumber, version: version, notes: notes)
    }
  }

  /// The steps `context` keeps out of a launch of `plan`, in manifest order.
  static func skips(
    of plan: LaunchPlan, in context: LaunchContext, record: LaunchRecord, version: String?
  ) -> [ContextSkip] {
    plan.contextSteps.compactMap { index in
      let declaration = plan.manifest.steps[index]
      if let reason = declaration.when?.skipReason(in: context) {
        return ContextSkip(step: index, reason: reason, keepsDependents: false)
      }
      guard let once = declaration.once,
        let done = record.doneVersion(of: declaration.id, once, version: version)
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
    if first { write { $0.mark(self.number, .firstScreen) } }
  }

  /// Step `step` succeeded: a run-once step is recorded as done.
  func stepSucceeded(_ step: Int) {
    guard plan.manifest.steps[step].once != nil else { return }
    let id = plan.steps[step].id
    write { $0.recordOnce(id, version: self.version) }
  }

  /// The launch is over with `outcome`: one that did not reach its first screen ended
  /// anyway (a route, a failure), which is not a crash. Returns every note, once the
  /// record's writes are done.
  func finish(outcome: LaunchOutcome) async -> [String] {
    let marked = state.withLock(\.markedScreen)
    if !marked {
      let reached = firstScreen == nil && (outcome == .succeeded || outcome == .degraded)
      write { $0.mark(self.number, reached ? .firstScreen : .ended) }
    }
    var notes = state.withLock(\.notes)
    for write in state.withLock(\.writes) { notes += await write.value }
    return notes
  }

  /// Changes the record on a thread of its own: never on the engine's handler, which starts
  /// the next steps.
  private func write(_ change: @escaping @Sendable (inout LaunchRecord) -> Void) {
    guard let file else { return }
    let task = Task(executorPreference: BlockingExecutor.shared, priority: .utility) {
      file.update(change).notes
    }
    state.withLock { $0.writes.append(task) }
  }
}
