import Foundation

/// Settings of one launch run that are not part of the manifest.
public struct LaunchOptions: Sendable {
  /// Overrides the manifest's `maxConcurrency` when set.
  public var maxConcurrency: Int?
  /// How long steps still running when the launch ends get to stop before they are
  /// reported `cancelled` and left behind.
  public var cancellationGracePeriod: Duration
  /// Whether steps with a `cache` are served from their entries; when `false` every step
  /// runs, and new entries are still saved.
  public var servesCachedOutputs: Bool
  /// The date and time now, for the age of cached outputs: given to the initializer (tests
  /// pass a fixed one), and read only by the engine.
  package var currentDate: @Sendable () -> Date
  /// How the launch treats the launch record in the data folder.
  package var launchRecord = LaunchRecordUse.automatic

  /// Creates options; `currentDate` gives the date and time now, for the age of cached
  /// outputs (tests pass a fixed one).
  public init(
    maxConcurrency: Int? = nil, cancellationGracePeriod: Duration = .seconds(1),
    servesCachedOutputs: Bool = true, currentDate: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.maxConcurrency = maxConcurrency
    self.cancellationGracePeriod = cancellationGracePeriod
    self.servesCachedOutputs = servesCachedOutputs
    self.currentDate = currentDate
  }
}

/// Runs launch plans: every step starts the moment its dependencies, deferral and the
/// concurrency limit allow, in priority order, with timeouts that hold.
///
/// ```swift
/// let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
/// async let report = LaunchEngine().run(plan, events: continuation)
/// for await event in events { print(event) }
/// print(await report.outcome)
/// ```
public struct LaunchEngine<C: Clock>: Sendable where C.Duration == Duration {
  /// The clock that times steps, delays, backoffs and timeouts.
  package var clock: C
  /// Run settings.
  package var options: LaunchOptions

  /// Creates an engine on `clock`; tests pass a manual clock.
  public init(clock: C, options: LaunchOptions = LaunchOptions()) {
    self.clock = clock
    self.options = options
  }

  /// Runs `plan` to its end and reports what happened.
  ///
  /// Steps read the app's values from `environment` (the manifest's `app` default fills in
  /// a missing ``AppInfo``); when a value some step requires is missing, no step starts and
  /// the report's outcome is `failed`, with ``LaunchReport/error`` naming the step, its kind
  /// and the type. Each step's output is in the report (``LaunchReport/output(of:as:)``).
  ///
  /// The app's `control`, when given, pauses, resumes, cancels and signals the launch, and
  /// ensures its on-demand steps, during the launch and after it. Times in the report and the
  /// events are active time: time spent paused is left out, and listed in
  /// ``LaunchReport/pauses``. While steps wait for signals, the launch goes on until they
  /// come or ``LaunchControl/finish()`` says none will; without a `control`, none can come,
  /// and such steps are skipped (`signal '<name>' was not sent`).
  ///
  /// Events are delivered to `events` in order, and the continuation is finished when the
  /// launch is: the events of on-demand steps ensured after it are not in it (one ensured
  /// the moment the launch ends may have its start in the launch's last burst). Cancelling
  /// the calling task cancels the launch: running steps are cancelled, the rest skipped, and
  /// the report's outcome is `cancelled`.
  public func run(
    _ plan: LaunchPlan, environment: LaunchEnvironment = LaunchEnvironment(),
    control: LaunchControl? = nil, events: AsyncStream<LaunchEvent>.Continuation? = nil
  ) async -> LaunchReport {
    // Made first, then run: an argument left to its default (`reusing: nil`, a report's
    // size) lived in this function's frame across the run.
    let (run, missing) = makeRun(
      plan, environment: environment, sink: events.map(EventSink.init), control: control,
      reusing: nil, hooks: RunHooks(), abandoned: nil)
    return await run.execute(missing: missing)
  }

  /// Runs `plan` as ``run(_:environment:control:events:)`` does, delivering events to the
  /// package's own channel: it hands over each burst of events at once (at most 256 while
  /// steps finish back to back), about 8 µs less per step than an `AsyncStream`.
  package func run(
    _ plan: LaunchPlan, environment: LaunchEnvironment = LaunchEnvironment(),
    control: LaunchControl? = nil, events: LaunchEvents.Continuation
  ) async -> LaunchReport {
    let (run, missing) = makeRun(
      plan, environment: environment, sink: EventSink(events), control: control, reusing: nil,
      hooks: RunHooks(), abandoned: nil)
    return await run.execute(missing: missing)
  }

  /// Runs `plan` from `start`, telling `hooks` of outputs and milestones as they happen,
  /// before their events are published: a session shares the run's start and learns of the
  /// splash's milestone without waiting for the event.
  ///
  /// `abandoned` is the session's record of the attempts its launches abandoned that still
  /// run: no step starts beside one of its own, and the attempts this launch abandons are
  /// added to it.
  func run(
    _ plan: LaunchPlan, environment: LaunchEnvironment, events: LaunchEvents.Continuation,
    control: LaunchControl, reusing previous: LaunchReport? = nil, hooks: RunHooks,
    abandoned: AbandonedAttempts? = nil
  ) async -> LaunchReport {
    let (run, missing) = makeRun(
      plan, environment: environment, sink: EventSink(events), control: control,
      reusing: previous, hooks: hooks, abandoned: abandoned)
    return await run.execute(missing: missing)
  }

  /// The run of `plan`, and the values its steps require that `environment` lacks.
  ///
  /// Made where nothing suspends: what making the run takes (the environment, the context,
  /// the scheduler's arrays as they are built) stays on the thread's stack. Made in the
  /// `async` function that runs it, it lived in that function's frame, 4.6 KB that the task
  /// allocated apart on every launch.
  @inline(never)
  private func makeRun(
    _ plan: LaunchPlan, environment: LaunchEnvironment, sink: EventSink?,
    control: LaunchControl?, reusing previous: LaunchReport?, hooks: RunHooks,
    abandoned: AbandonedAttempts?
  ) -> (LaunchRun, [MissingRequirement]) {
    let clock =
      control?.activeClock(self.clock, start: self.clock.now)
      ?? ActiveClock(self.clock, start: self.clock.now)
    // With the clock: what the launch record takes below is the launch's time, not the time
    // before it (its report's `sinceProcessStart`), which would count it twice.
    let processMark = ProcessStart.Mark()
    let environment = environment.withDefaults(of: plan.manifest)
    // Looked up once: the run refuses to start on them.
    let missing = plan.missingRequirements(in: environment)
    // Not for a launch refused for a missing value: it never started, so the record has
    // nothing to count.
    let context =
      missing.isEmpty
      ? ContextKeeper.start(
        plan: plan, environment: environment, use: options.launchRecord,
        previous: previous?.context)
      : nil
    // An app's launch is on the continuous clock, which keeps no count: known without the
    // cast's run-time search for a conformance (2-3 µs of a launch after a pause).
    let activity =
      C.self == ContinuousClock.self
      ? nil : (self.clock as? any ActivityTrackingClock)?.activity
    let run = LaunchRun(
      plan: plan, clock: clock, options: options, environment: environment, events: sink,
      hooks: hooks, control: control, reused: previous.map { Reuse(plan: plan, previous: $0) },
      abandoned: abandoned, context: context, activity: activity, processMark: processMark)
    return (run, missing)
  }
}

extension LaunchEngine where C == ContinuousClock {
  /// Creates an engine on the continuous clock.
  public init(options: LaunchOptions = LaunchOptions()) {
    self.init(clock: ContinuousClock(), options: options)
  }
}

/// One run of a plan.
///
/// There is no loop task: whoever posts a message to an idle run (a finishing step, the
/// timer, a cancellation) handles it and what arrives meanwhile, so a step that finishes
/// starts its dependents on its own thread. Not generic over the clock: this is the
/// engine's hot path, and unspecialized generic code there pays for runtime metadata
/// lookups on every step.
private final class LaunchRun: ControlledRun {
  let plan: LaunchPlan
  /// Active time: paused time left out.
  let activeClock: ActiveClock
  /// The same clock as steps see it.
  let clock: LaunchClock
  let control: LaunchControl?
  /// The steps whose outputs an earlier run made, for a retry.
  let reused: Reuse?
  /// The session's record of the attempts its launches abandoned that still run; `nil` for a
  /// launch outside a session.
  let abandoned: AbandonedAttempts?
  /// Whether the run outlives its launch: on-demand steps can still be ensured after it.
  let staysOpen: Bool
  let environment: LaunchEnvironment
  let events: EventSink?
  /// Whether `events` is set: asked on every batch, where testing the optional itself would
  /// copy it, a retain and a release of the channel each time.
  let hasEvents: Bool
  let hooks: RunHooks
  let options: LaunchOptions
  /// The launch's context and its record; `nil` when the launch keeps none.
  let context: ContextKeeper?
  /// The count of running tasks a test clock keeps; `nil` on any other clock.
  let activity: LaunchActivity?
  /// When the launch started, for the report's time since the process's start.
  let processMark: ProcessStart.Mark
  private let mailbox: Mailbox<RunMessage, RunHandler>
  /// What the run keeps beside the handler's state, the steps' outputs among it: one lock
  /// for all of it, each launch allocating and freeing one instead of four.
  let aside: Locked<Aside>
  /// Everything the handler changes that others read, in one value, locked once per batch of
  /// messages and once when the handler falls idle. Only the mailbox's handler changes it,
  /// and the lock is never held while the handler acts on the changes (``RunEffect``), so
  /// code the engine calls can read it; it is what lets the compiler check that the run is
  /// safe to share.
  private let state: Locked<RunState>

  /// What the run keeps beside the handler's state; its lock is never held while another
  /// is taken, nor taken by code that holds another than the state's.
  struct Aside {
    /// Step outputs, by step: written by the handler and read by dependents' tasks.
    var outputs: [(any Sendable)?]
    /// The hand-over between the handler that finishes the launch and `execute()`.
    var isOver = false
    var waiter: UnsafeContinuation<Void, Never>?
    /// What each failed step's plugin threw last, by step: empty (and never allocated) in a
    /// launch where nothing throws.
    var errors: [Int: any Error] = [:]
    /// The cache entries being saved, with their steps: the run returns once they are
    /// written.
    var saves: [(step: Int, task: Task<String?, Never>)] = []
    /// What the launch's end added to its report, once it ended, in a run that outlives it.
    var endNotes: EndNotes?
    /// How the run watches ``abandoned``, when it waits for attempts an earlier launch
    /// abandoned.
    var watcher: Int?
  }

  init(
    plan: LaunchPlan, clock: ActiveClock, options: LaunchOptions, environment: LaunchEnvironment,
    events: EventSink?, hooks: RunHooks, control: LaunchControl?, reused: Reuse?,
    abandoned: AbandonedAttempts?, context: ContextKeeper?, activity: LaunchActivity?,
    processMark: ProcessStart.Mark
  ) {
    self.activity = activity
    self.processMark = processMark
    self.plan = plan
    self.context = context
    self.activeClock = clock
    self.clock = clock.launchClock
    self.control = control
    self.reused = reused
    self.abandoned = abandoned
    staysOpen = control != nil && !plan.onDemandSteps.isEmpty
    self.environment = environment
    self.events = events
    hasEvents = events != nil
    self.hooks = hooks
    self.options = options
    aside = Locked(Aside(outputs: .nils(count: plan.steps.count)))
    state = Locked(
      RunState(
        scheduler: LaunchScheduler(
          plan: plan, maxConcurrency: options.maxConcurrency ?? plan.manifest.maxConcurrency,
          gracePeriod: options.cancellationGracePeriod, recordsEvents: events != nil)))
    mailbox = Mailbox(owning: RunHandler(stepCount: plan.steps.count))
  }

  var elapsed: Duration { activeClock.now() }

  /// Runs the launch to its end; `missing` are the values its steps require that the
  /// environment lacks, which refuse it.
  ///
  /// What happens before the launch starts, and the report at its end, are done in
  /// functions that do not suspend: the task allocates this function's frame on every
  /// launch, and whatever lived in it across a suspension (the report, the values making the
  /// start took) made it 2.9 KB, allocated apart from the task, where it is a few words now.
  func execute(missing: [MissingRequirement]) async -> LaunchReport {
    guard missing.isEmpty else { return refuse(missing) }
    let (signalled, earlier) = prepare()
    // Most launches cache nothing: no call, no frame for one.
    let lookups = plan.cachedSteps.isEmpty ? CacheLookups() : await serveFromCache()
    begin(lookups: lookups, signalled: signalled, earlier: earlier)
    await withTaskCancellationHandler {
      // Resumed exactly once: here, or by the handler that takes it.
      await withUnsafeContinuation { continuation in
        let isOver = aside.withLock { aside in
          if !aside.isOver { aside.waiter = continuation }
          return aside.isOver
        }
        if isOver { continuation.resume() }
      }
    } onCancel: {
      post(.cancel)
    }
    // The handler that ended the launch published the last events and ended them (and
    // stopped the timer, unless on-demand steps may still be ensured): the app hears the end
    // (the milestone reached by the last step, `finished`) while the report is made, not after.
    // Most launches keep no record, save no cache entry and end for good: nothing to wait for.
    if context == nil, !staysOpen, aside.withLock({ $0.saves.isEmpty }) { return endReport() }
    return await endReportAfterWrites()
  }

  /// What the launch does before it starts: the app hears of its context and of the outputs
  /// a retry reuses; returns the signals sent before, and the attempts of earlier launches
  /// the run waits for.
  @inline(never)
  private func prepare() -> (signalled: [Int], earlier: [LaunchScheduler.EarlierAttempt]) {
    if let context { hooks.onContext?(context.context) }
    if let reused {
      aside.withLock { aside in
        for (step, value) in reused.outputs { aside.outputs[step] = value }
      }
      for (step, value) in reused.outputs { hooks.onOutput?(plan.steps[step].id, value) }
    }
    let signalled = (control?.sentSignals ?? []).compactMap { plan.signals.firstIndex(of: $0) }
    let earlier = watchEarlierAttempts()
    // Before the first events: on a test clock their consumer is counted from the first burst.
    if let activity { events?.countConsumer(in: activity) }
    return (signalled, earlier)
  }

  /// Starts the launch: its first message, handled here unless this is the main thread.
  @inline(never)
  private func begin(
    lookups: CacheLookups, signalled: [Int], earlier: [LaunchScheduler.EarlierAttempt]
  ) {
    // Cancelled before it began (the control first, or the task before its body ran): told
    // with the start, as a pause is, so that no step's code starts only to be cancelled.
    func begin(cancelled: Bool, holds: Int) -> RunMessage {
      .begin(
        lookups, paused: activeClock.isPaused, cancelled: Task.isCancelled || cancelled,
        signalled: signalled, holds: holds, earlier: earlier)
    }
    if let control {
      // The start is queued as the control takes the run, in its lock, and what the app said
      // before follows it: a pause said as the run starts (by the app, or by a first step's
      // code) either is in the clock the start reads or comes after the start, and before
      // that step's end.
      let isHandler = control.attach(self) { said in
        let isHandler = mailbox.enqueue(begin(cancelled: said.isCancelled, holds: said.holds))
        for command in said.commands { _ = mailbox.enqueue(.control(command)) }
        return isHandler
      }
      if isHandler { handleQueued(onMainThread: CurrentThread.isMain) }
    } else {
      post(begin(cancelled: false, holds: 0))
      // No one can send a signal to a launch without a control: its steps that wait for one
      // are skipped once nothing else holds them, as after ``LaunchControl/finish()``.
      if !plan.signals.isEmpty { post(.control(.finish)) }
    }
    // The first steps are counted on their own now: a test's task that started the launch
    // waits for its end without holding the test clock back.
    if activity != nil { Participation.handOver() }
  }

  /// The report of a launch that ended for good, keeping no record and saving no cache
  /// entry: nothing of its end is left to wait for.
  @inline(never)
  private func endReport() -> LaunchReport {
    var report = state.withLock { makeReport($0) }
    if let watcher = aside.withLock({ $0.watcher }) { abandoned?.unwatch(watcher) }
    EndNotes().add(to: &report)
    return report
  }

  /// The report once the launch record and the cache entries are written, with what they
  /// had to say.
  private func endReportAfterWrites() async -> LaunchReport {
    var report = state.withLock { makeReport($0) }
    // Steps ensured after the launch may still wait for an earlier launch's attempts.
    if !staysOpen, let watcher = aside.withLock({ $0.watcher }) { abandoned?.unwatch(watcher) }
    var notes = EndNotes()
    if let context { notes.context = await context.finish(outcome: report.outcome) }
    for (step, save) in aside.withLock({ $0.saves }) {
      if let problem = await save.value { notes.steps.append((step, problem)) }
    }
    notes.add(to: &report)
    // Kept for the reports made later, with the on-demand steps ensured since.
    if staysOpen { aside.withLock { $0.endNotes = notes } }
    return report
  }

  /// The attempts earlier launches of the session abandoned that still run, each with the
  /// step of this plan it is an attempt of: the run hears as each ends. One look at the
  /// session's record, which is empty unless a launch abandoned an attempt.
  private func watchEarlierAttempts() -> [LaunchScheduler.EarlierAttempt] {
    guard let abandoned else { return [] }
    let plan = self.plan
    // Weakly: a run the session let go (a later retry's control replaced its own) is not
    // kept alive, with its plan and outputs, for as long as an earlier attempt runs.
    let watched = abandoned.watch { [weak self] entry in
      guard let self, let step = plan.steps.firstIndex(where: { $0.id == entry.step }) else {
        return
      }
      post(.earlierAttemptEnded(entry.id, step: step))
    }
    guard let (watcher, running) = watched else { return [] }
    aside.withLock { $0.watcher = watcher }
    return running.compactMap { entry in
      guard let step = plan.steps.firstIndex(where: { $0.id == entry.step }) else { return nil }
      var attempt = entry.attempt
      attempt.isEarlier = true
      return (step, entry.id, attempt)
    }
  }

  /// What the launch's end adds to its report: the context's notes, and the cache saves'
  /// problems of the steps they are about.
  struct EndNotes {
    var context: [String] = []
    var steps: [(step: Int, note: String)] = []

    func add(to report: inout LaunchReport) {
      report.contextNotes = context
      for (step, note) in steps { report.steps[step].notes.append(note) }
    }
  }

  /// The report of the launch so far: at its end, or later with the on-demand steps ensured
  /// since.
  private func makeReport(_ state: RunState) -> LaunchReport {
    // By index: mapping over the planned steps would copy each one, a retain per field.
    let ids = plan.steps.indices.map { plan.steps[$0].id }
    let outputs = StepOutputs(ids: ids, values: aside.withLock { $0.outputs })
    let duration = max(state.duration, state.lateEnd ?? .zero)
    var report = LaunchReport(
      plan: plan, scheduler: state.scheduler, duration: duration, outputs: outputs)
    report.pauses = activeClock.pauses.filter { $0.at <= duration }.map {
      LaunchReport.Pause(at: $0.at, duration: $0.duration)
    }
    report.context = context?.context
    report.stamp(environment: environment, start: processMark)
    return report
  }

  /// The report with what happened since the launch's end (on-demand steps ensured after it).
  func currentReport() -> LaunchReport {
    var report = state.withLock { makeReport($0) }
    aside.withLock { $0.endNotes }?.add(to: &report)
    return report
  }

  func control(_ command: ControlCommand) {
    post(.control(command))
  }

  var hasEnded: Bool { state.withLock { $0.scheduler.isFinished } }

  func refusal(ofEnsuring step: String) -> LaunchFailure? {
    let isOnDemand = plan.steps.first { $0.id == step }?.trigger == .onDemand
    return isOnDemand ? nil : Self.refusal(ofEnsuring: step, in: plan)
  }

  /// Why `step`, which `plan` has not as an on-demand step, cannot be ensured.
  static func refusal(ofEnsuring step: String, in plan: LaunchPlan) -> LaunchFailure {
    guard plan.steps.contains(where: { $0.id == step }) else {
      return LaunchFailure(
        kind: .unknownStep, step: step, message: "the manifest has no step '\(step)'.")
    }
    return LaunchFailure(
      kind: .notOnDemand, step: step,
      message:
        "'\(step)' runs in the launch, not on demand; read its output when it succeeds, or give it \"trigger\": \"onDemand\"."
    )
  }

  /// Looks up the entries of the steps with a `cache`: the outputs found are the steps'
  /// outputs from the start; the notes say what was served, or why not. Several entries are
  /// read and decoded at once, each on a task of its own on the blocking pool (file reads
  /// that would otherwise hold Swift's few cooperative threads): an entry can be megabytes of
  /// JSON, and the first steps wait for them all.
  private func serveFromCache() async -> CacheLookups {
    var lookups = CacheLookups()
    let plan = self.plan
    guard !plan.cachedSteps.isEmpty else { return lookups }
    // What the context keeps out: the steps it skips, and what depends on one that takes its
    // dependents with it (a `when`, not a run-once step done before, whose dependents run),
    // which the launch skips too; a cached output must not bring one back (and the steps
    // after it) in a launch whose context leaves that work out.
    let skips = context?.skips ?? []
    var keptOut = Set(skips.map(\.step))
    var pending = skips.filter { !$0.keepsDependents }.map(\.step)
    while let step = pending.popLast() {
      for dependent in plan.steps[step].hardDependents where keptOut.insert(dependent).inserted {
        pending.append(dependent)
      }
    }
    let wanted: [(step: Int, key: CacheKey)] = plan.cachedSteps.compactMap { step in
      guard !keptOut.contains(step), let key = plan.steps[step].cacheKey else { return nil }
      return (step, key)
    }
    guard options.servesCachedOutputs else {
      lookups.notes = wanted.map {
        ($0.step, "cache not used: cached outputs are off for this launch")
      }
      return lookups
    }
    let cache = OutputCache(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    let now = options.currentDate()
    @Sendable func lookup(_ step: Int, _ key: CacheKey) -> OutputCache.Lookup {
      cache.lookup(
        step: plan.steps[step].id, kind: plan.steps[step].plugin, key: key,
        maxAge: plan.steps[step].cache?.maxAge, now: now)
    }
    var found: [OutputCache.Lookup]
    if wanted.count == 1 {
      found = [lookup(wanted[0].step, wanted[0].key)]
    } else {
      found = Array(repeating: .miss(""), count: wanted.count)
      // As many at once as the device has cores: more would only start threads.
      let width = max(2, ProcessInfo.processInfo.activeProcessorCount)
      await withTaskGroup(of: (Int, OutputCache.Lookup).self) { group in
        var next = 0
        func readNext() {
          let (position, (step, key)) = (next, wanted[next])
          group.addTask(executorPreference: BlockingExecutor.shared) {
            (position, lookup(step, key))
          }
          next += 1
        }
        while next < min(width, wanted.count) { readNext() }
        for await (position, lookup) in group {
          found[position] = lookup
          if next < wanted.count { readNext() }
        }
      }
    }
    // In the plan's order, whichever was read first.
    for ((step, _), lookup) in zip(wanted, found) {
      switch lookup {
      case .hit(let output, let age):
        aside.withLock { $0.outputs[step] = output }
        hooks.onOutput?(plan.steps[step].id, output)
        lookups.served.append(step)
        lookups.notes.append(
          (
            step,
            "served from the cache (saved \(DurationText.format(age.roundedForPeople)) ago); refreshing behind"
          ))
      case .miss(let reason):
        lookups.notes.append((step, "cache not used: \(reason)"))
      }
    }
    return lookups
  }

  /// Saves `output`, which the launch took as the step's, as its cache entry, on a thread of
  /// its own: after the step, so the write never counts against its time or timeout, never
  /// holds up its dependents, and never saves an output the launch did not take.
  func save(_ output: any Sendable, of step: Int) {
    activity?.begin()
    let task = Task(executorPreference: BlockingExecutor.shared, priority: .utility) {
      [activity] in
      guard let activity else { return self.saveToCache(output, of: step) }
      return await activity.run { self.saveToCache(output, of: step) }
    }
    aside.withLock { $0.saves.append((step, task)) }
  }

  /// Saves a step's new output as its cache entry; a failure is a note, never the step's
  /// failure.
  private func saveToCache(_ output: any Sendable, of step: Int) -> String? {
    guard let key = plan.steps[step].cacheKey else { return nil }
    do {
      try OutputCache(dataDirectory: plan.dataDirectory, manifestName: plan.name).save(
        output, step: plan.steps[step].id, kind: plan.steps[step].plugin, key: key,
        now: options.currentDate())
      return nil
    } catch {
      return "the output was not saved to the cache: \(error)"
    }
  }

  /// The report of a launch that cannot start: every step skipped, outcome `failed`.
  private func refuse(_ missing: [MissingRequirement]) -> LaunchReport {
    let reason = missing.map(\.description).joined(separator: "; ")
    let error =
      "the launch did not start: \(reason). Put the value in the LaunchEnvironment the launch runs with."
    events?.publish(
      plan.steps.map {
        LaunchEvent(time: .zero, kind: .skipped(step: $0.id, reason: "the launch did not start"))
      } + [LaunchEvent(time: .zero, kind: .finished(outcome: .failed))])
    events?.finish()
    // An ensure asked for before, or after, hears it: no step of this run will ever run.
    control?.refuse(LaunchFailure.refused(missing, reason: error))
    var report = LaunchReport(
      plan: plan, scheduler: state.withLock(\.scheduler), duration: .zero)
    report.outcome = .failed
    report.error = error
    report.criticalPath = []
    report.stamp(environment: environment, start: processMark)
    for index in report.steps.indices {
      report.steps[index].state = .skipped
      report.steps[index].error = "the launch did not start"
    }
    return report
  }

  /// Queues `message`, handling it here unless another thread is already handling messages.
  ///
  /// The main thread never handles: it draws the app's first frame, so a main-isolated step
  /// that finishes leaves the handling (and whatever arrives meanwhile) to the pool.
  /// `onMainThread` is for a poster that knows where it runs: asking costs a read of a
  /// thread-specific value (``CurrentThread/isMain``), two system calls on a Linux thread's
  /// first time.
  func post(_ message: RunMessage, onMainThread: Bool = CurrentThread.isMain) {
    if !onMainThread {
      handleMessages(posting: message)
    } else if mailbox.enqueue(message) {
      handleQueued(onMainThread: true)
    }
  }

  /// Handles the messages queued as the handler ``Mailbox/enqueue(_:)`` made: here, or on a
  /// task of its own when this is the main thread.
  private func handleQueued(onMainThread: Bool) {
    guard onMainThread else { return handleMessages() }
    if let activity {
      activity.begin()
      Task { await activity.run { self.handleMessages() } }
    } else {
      Task { self.handleMessages() }
    }
  }

  /// Posts `message` and handles the run's messages if no one else is; without a message,
  /// handles them as the handler `post` made on a task of its own.
  private func handleMessages(posting message: RunMessage? = nil) {
    var launchEnded = false
    let handled = mailbox.handle(
      posting: message,
      with: { handler, batch in
        // Under the lock only the state changes; what the changes call for (tasks to start
        // and cancel, the timer, hooks, events, cache saves) is collected and done after it,
        // in order. Done under it, a plugin's cancellation handler or an app's hook that
        // calls back into the run (reads its report through the control, say) would
        // deadlock on the lock its own thread holds.
        let goesOn = state.withLock { state in
          let goesOn = state.handle(batch, of: self, handler: &handler)
          launchEnded = state.scheduler.isFinished
          return goesOn
        }
        perform(&handler)
        // No lull comes after the last batch: the ensure callers hear now; over for good
        // too when it only still hears of attempts it abandoned.
        if !goesOn || (launchEnded && !staysOpen) { handOverEnsured(&handler) }
        if launchEnded, !handler.eventsEnded {
          // The events end with the launch's last burst, published above: the consumer wakes
          // once for both. Those of on-demand steps ensured after it go to the hook.
          handler.eventsEnded = true
          events?.finish()
        }
        return goesOn
      },
      whenIdle: { handler in
        if hasEvents {
          let burst = state.withLock { $0.scheduler.takeEvents() }
          if !burst.isEmpty { publish(burst, eventsEnded: handler.eventsEnded) }
        }
        handOverEnsured(&handler)
      })
    guard let closed = handled, closed || launchEnded else { return }
    let waiter = aside.withLock { aside in
      aside.isOver = true
      defer { aside.waiter = nil }
      return aside.waiter
    }
    waiter?.resume()
  }

  /// Does what the handler collected, in order, holding no lock.
  private func perform(_ handler: inout RunHandler) {
    guard !handler.effects.isEmpty else { return }
    // Moved out while `handler` changes below, and back, keeping its capacity: a steady flow
    // of steps allocates nothing here.
    var effects: [RunEffect] = []
    swap(&effects, &handler.effects)
    // By index: iterating would copy each effect whole, through its value witnesses.
    for index in effects.indices {
      switch effects[index] {
      case .start(let attempt, let now):
        handler.tasks[attempt.step] = (attempt.token, launch(attempt, at: now))
      case .cancel(let attempt):
        if let current = handler.tasks[attempt.step], current.token == attempt.token {
          handler.tasks[attempt.step] = nil
          current.task.cancel()
        }
      case .forget(let step, let token):
        if handler.tasks[step]?.token == token { handler.tasks[step] = nil }
      case .output(let step, let value, let saves):
        hooks.onOutput?(plan.steps[step].id, value)
        context?.stepSucceeded(step)
        if saves { save(value, of: step) }
      case .milestone(let index, let time):
        hooks.onMilestone?(plan.milestones[index].name, time)
      case .firstScreen:
        context?.reachedFirstScreen()
      case .publish(let burst):
        publish(burst, eventsEnded: handler.eventsEnded)
      case .arm(let deadline):
        handler.timer?.cancel()
        @Sendable func fire() async {
          do {
            try await self.clock.sleep(deadline)
          } catch {
            return
          }
          self.post(.timer(deadline: deadline))
        }
        if let activity {
          // On a test clock: counted from before the task exists to its end.
          activity.begin()
          handler.timer = Task(priority: .high) { await activity.run { await fire() } }
        } else {
          handler.timer = Task(priority: .high) { await fire() }
        }
      case .stopTimer:
        handler.timer?.cancel()
        handler.timer = nil
      case .abandon(let step, let token, let attempt):
        if let abandoned {
          handler.abandonedEntries[token] = abandoned.add(
            step: plan.steps[step].id, attempt: attempt)
        }
      case .abandonedEnded(let token):
        if let entry = handler.abandonedEntries.removeValue(forKey: token) { abandoned?.end(entry) }
      }
    }
    // One by one from the end: `removeAll(keepingCapacity:)` destroys them through the run
    // time's generic array witness, a call through the type's metadata for every batch.
    while !effects.isEmpty { effects.removeLast() }
    swap(&effects, &handler.effects)
  }

  /// Hands `burst` to the events' consumer, or once the launch's events ended (on-demand
  /// steps ensured after it), to the hook that takes them.
  private func publish(_ burst: [LaunchEvent], eventsEnded: Bool) {
    if eventsEnded { hooks.onLateEvents?(burst) } else { events?.publish(burst) }
  }

  /// Hands the ensure callers the results gathered for them, once; outside the lock, so a
  /// caller resumed here may post to the run at once.
  private func handOverEnsured(_ handler: inout RunHandler) {
    guard !handler.ensured.isEmpty else { return }
    var ensured: [EnsureResult] = []
    swap(&ensured, &handler.ensured)
    for (waiters, result) in ensured {
      for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
  }

  /// Starts the attempt's task. Typed as throwing though it never throws: `Task`'s
  /// non-throwing initializer wraps its closure in another that throws, an allocation more on
  /// every attempt (four a step instead of three, with the task, its closure and the
  /// executor's job); a closure that already throws is handed to the task as it is.
  private func launch(_ attempt: LaunchScheduler.Attempt, at now: Duration) -> AttemptTask {
    // The planned step's fields are read in place: a copy of the plan or of the step would
    // retain every reference they hold, on every attempt.
    let step = attempt.step
    let isBlocking =
      attempt.isFallback
      ? (plan.steps[step].fallbackAction ?? plan.steps[step].action).isBlocking
      : plan.steps[step].action.isBlocking
    let isMain = plan.steps[step].isolation == .main
    let priority =
      attempt.isRefresh
      ? TaskPriority.background : attempt.priority.taskPriority
    // Unstructured on purpose: a timeout must let the launch move on even when a plugin
    // ignores cancellation, and a task group would wait for such a child forever. The run
    // keeps every handle and cancels it when the attempt times out or the launch ends.
    if let activity {
      // On a test clock: counted from before the task exists to its end, with the tasks it
      // starts, whose jobs the executor counts (a task group's children asleep on the clock
      // leave the step waiting for them, not running).
      activity.begin()
      let participation = Participation(activity: activity, tracksJobs: true)
      let executor = CountingExecutor(
        counting: participation, on: isMain ? .main : isBlocking ? .blocking : .pool)
      return Task(executorPreference: executor, priority: priority) { () async throws in
        await participation.run { await self.execute(attempt, start: now, isMain: isMain) }
      }
    }
    if isMain {
      return Task(executorPreference: MainThreadExecutor.shared, priority: priority) {
        () async throws in await self.execute(attempt, start: now, isMain: true)
      }
    }
    if isBlocking {
      return Task(executorPreference: BlockingExecutor.shared, priority: priority) {
        () async throws in await self.execute(attempt, start: now, isMain: false)
      }
    }
    return Task(priority: priority) { () async throws in
      await self.execute(attempt, start: now, isMain: false)
    }
  }

  /// Runs an attempt's plugin code, started at `start`, and posts how it ended. `isMain`: it
  /// runs on the main thread, so it times when its code begins (it waited for the main
  /// thread), and its end is posted from there.
  private func execute(_ attempt: LaunchScheduler.Attempt, start: Duration, isMain: Bool) async {
    let began = isMain ? elapsed : nil
    let step = attempt.step
    let context = StepContext(
      attempt: attempt.number, isFallback: attempt.isFallback, attemptStart: start,
      host: AttemptHost(run: self, step: step, token: attempt.token))
    let outcome: AttemptOutcome
    do {
      // The plugin's code is looked up here, on the step's thread: taking a reference to it
      // on the handler's, and letting go of it here, would move its reference count from
      // core to core on every step.
      let code =
        attempt.isFallback
        ? (plan.steps[step].fallbackAction ?? plan.steps[step].action).execute
        : plan.steps[step].action.execute
      outcome = .succeeded(try await code(context))
    } catch let route as LaunchRoute {
      outcome = .routed(route)
      // An on-demand step's route is its caller's (`ensure` throws it): kept as thrown.
      if plan.steps[step].trigger == .onDemand { aside.withLock { $0.errors[step] = route } }
    } catch {
      outcome = .failed(Self.describe(error))
      // Kept as thrown, for the app's `LaunchFailure.underlying`.
      aside.withLock { $0.errors[step] = error }
      hooks.onError?(plan.steps[step].id, error)
    }
    post(.finished(token: attempt.token, outcome: outcome, began: began), onMainThread: isMain)
  }

  /// The error in developers' words: its own description (Foundation's errors have one,
  /// naming the file), a `LocalizedError`'s, or else the value as Swift writes it with its
  /// fields (`OfflineError(host: "api.example.com")`), followed by its words for users when it
  /// has some; never Foundation's "The operation could not be completed" that names nothing.
  private static func describe(_ error: any Error) -> String {
    switch error {
    case let failure as StepFailure: failure.message
    case is CancellationError: "cancelled"
    case let error as any CustomStringConvertible: error.description
    // Its value names it for developers; its words for users say what happened. (Its
    // `errorDescription` is those words, unless it gave one of its own.)
    case let error as any UserFacingError
    where (error.errorDescription ?? error.userMessage) == error.userMessage:
      "\(String(describing: error)): \(error.userMessage)"
    case let error as any LocalizedError where error.errorDescription != nil:
      error.localizedDescription
    default: String(describing: error)
    }
  }
}

/// What a session hears of a run as it happens, ahead of the events.
struct RunHooks: Sendable {
  /// A step succeeded with this output.
  var onOutput: (@Sendable (String, any Sendable) -> Void)?
  /// A milestone was reached at this time since the launch started.
  var onMilestone: (@Sendable (String, Duration) -> Void)?
  /// A step's plugin threw this error (an attempt failed).
  var onError: (@Sendable (String, any Error) -> Void)?
  /// The launch's context, the record's facts filled in, before the first step starts.
  var onContext: (@Sendable (LaunchContext) -> Void)?
  /// Events of on-demand steps ensured after the launch ended, whose event stream ended with
  /// it: each burst in order.
  var onLateEvents: (@Sendable ([LaunchEvent]) -> Void)?
}

/// What only a run's handler touches: the tasks it acts on, and what it has to do once it
/// lets go of the run's state. It travels with the handler role through the mailbox, so it
/// needs no lock of its own.
private struct RunHandler: Sendable {
  /// The task of each step's current attempt, to cancel it.
  var tasks: [(token: Int, task: AttemptTask)?]
  var timer: Task<Void, Never>?
  var armedDeadline: Duration?
  /// What the state changes of the batch being handled call for, in order.
  var effects: [RunEffect] = []
  /// The ensure callers whose request the run has heard, by the on-demand step they wait for.
  var ensureWaiters: [Int: [EnsureWaiter]] = [:]
  /// The results of on-demand steps that ended, for their ensure callers.
  var ensured: [EnsureResult] = []
  /// Whether the launch's events ended (with the launch): later ones go to
  /// ``RunHooks/onLateEvents``.
  var eventsEnded = false
  /// The numbers the session's record gave the attempts this run abandoned, by token.
  var abandonedEntries: [Int: Int] = [:]

  init(stepCount: Int) {
    tasks = .nils(count: stepCount)
  }
}

/// An attempt's task: it never throws (``LaunchRun/launch(_:at:)`` says why it is typed so),
/// and nothing awaits its value; the run only cancels it.
private typealias AttemptTask = Task<Void, any Error>

/// The result of an on-demand step, for the ensure callers that asked for it before it ended.
private typealias EnsureResult = (
  waiters: [EnsureWaiter], result: Result<(any Sendable)?, LaunchFailure>
)

/// Something a state change calls for, done by the handler after it lets go of the state:
/// whatever may run code that is not the engine's (a plugin's cancellation handler, a hook, an
/// event consumer woken, a task started) or that takes other locks.
private enum RunEffect: Sendable {
  /// Start the attempt's task, timed from `at`.
  case start(LaunchScheduler.Attempt, at: Duration)
  /// Cancel the attempt's task, if it is still the step's current one.
  case cancel(LaunchScheduler.Attempt)
  /// The attempt ended: let go of its task.
  case forget(step: Int, token: Int)
  /// The step succeeded with `value`: tell the hook and the launch record, and save it to
  /// the cache when `saves`.
  case output(step: Int, value: any Sendable, saves: Bool)
  /// The milestone at this index was reached at this time.
  case milestone(Int, Duration)
  /// The first screen's milestone was reached: tell the launch record.
  case firstScreen
  case publish([LaunchEvent])
  /// Arm the timer for this deadline, replacing the armed one.
  case arm(Duration)
  /// The launch is over and nothing can be ensured after it: no timer is needed.
  case stopTimer
  /// The attempt of this step and token was abandoned, still running: the session's record
  /// keeps it for the later launches.
  case abandon(step: Int, token: Int, LaunchScheduler.AbandonedAttempt)
  /// The abandoned attempt of this token ended.
  case abandonedEnded(token: Int)
}

/// What a run's handler changes as messages arrive, behind the run's lock: read by others
/// (the app's control reads the report so far) while the launch goes on.
private struct RunState {
  var scheduler: LaunchScheduler
  var duration = Duration.zero
  /// When the last on-demand step ensured after the launch ended.
  var lateEnd: Duration?

  init(scheduler: LaunchScheduler) {
    self.scheduler = scheduler
  }

  /// Handles a batch of messages, collecting in `handler` what they call for; returns
  /// whether the launch goes on.
  ///
  /// Events wait for a lull (the handler's idle time) unless many have piled up or the
  /// launch is over: each delivery can wake the consumer's thread, and while steps finish
  /// back to back, waking it for every batch cost more than the scheduling itself.
  mutating func handle(_ batch: [RunMessage], of run: LaunchRun, handler: inout RunHandler)
    -> Bool
  {
    let wasFinished = scheduler.isFinished
    // By index: iterating would copy each message whole, through its value witnesses.
    for index in batch.indices {
      let finishedBefore = scheduler.isFinished
      guard !finishedBefore || run.staysOpen else {
        // A run without on-demand steps hears nothing after its launch: an ensure said as it
        // ended hears why it cannot be. An attempt it abandoned that ended at last is for the
        // session's later launches to hear of.
        if case .control(.activate(let id, let waiter?)) = batch[index] {
          handler.ensured.append(
            ([waiter], .failure(LaunchRun.refusal(ofEnsuring: id, in: run.plan))))
        } else if case .finished(let token, _, _) = batch[index] {
          scheduler.attemptFinished(token: token, result: .succeeded, at: run.elapsed)
          collectActions(at: run.elapsed, into: &handler.effects)
        }
        continue
      }
      handle(batch[index], of: run, handler: &handler)
      // After each message: a step that ended, then was asked for again in the same batch,
      // hands this run's result to those who asked before its end, and runs for the others.
      if collectEnsured(of: run, into: &handler), finishedBefore { lateEnd = run.elapsed }
    }
    if run.hooks.onMilestone != nil { collectMilestones(into: &handler.effects) }
    if let context = run.context, !toldFirstScreen, let screen = context.firstScreen,
      scheduler.milestoneTimes[screen] != nil
    {
      toldFirstScreen = true
      handler.effects.append(.firstScreen)
    }
    if run.hasEvents, scheduler.isFinished || scheduler.pendingEventCount >= 256 {
      let burst = scheduler.takeEvents()
      if !burst.isEmpty { handler.effects.append(.publish(burst)) }
    }
    rearmTimer(handler: &handler)
    if scheduler.isFinished, !wasFinished { duration = run.elapsed }
    let isOver = scheduler.isFinished && !run.staysOpen
    if isOver, !wasFinished { handler.effects.append(.stopTimer) }
    // Over, it still hears of the attempts it abandoned as they end, for the session's later
    // launches, which wait for them.
    return !isOver || (run.abandoned != nil && scheduler.abandonedRunning > 0)
  }

  /// Gathers the results of the on-demand steps that ended for the callers waiting for them;
  /// returns whether any ended.
  private mutating func collectEnsured(of run: LaunchRun, into handler: inout RunHandler) -> Bool {
    let ended = scheduler.takeEndedOnDemandSteps()
    for step in ended {
      guard let waiters = handler.ensureWaiters.removeValue(forKey: step) else { continue }
      handler.ensured.append((waiters, result(of: step, in: run)))
    }
    return !ended.isEmpty
  }

  /// An on-demand step's output, or why it has none.
  private func result(of step: Int, in run: LaunchRun) -> Result<(any Sendable)?, LaunchFailure> {
    let id = run.plan.steps[step].id
    let plugin = run.plan.steps[step].plugin
    let record = scheduler.records[step]
    let error = record.error ?? "no reason given"
    switch record.state {
    case .succeeded, .cached:
      return .success(run.aside.withLock { $0.outputs[step] })
    case .timedOut:
      return .failure(
        LaunchFailure(
          kind: .timedOut, step: id, plugin: plugin, message: "'\(id)' timed out: \(error)"))
    case .skipped:
      // Skipped for a dependency that failed: what that plugin threw, for the app to branch
      // on and its words for the failure screen, as when the app ensures that step itself.
      return .failure(
        LaunchFailure(
          kind: .skipped, step: id, plugin: plugin, message: "'\(id)' was skipped: \(error)",
          underlying: failedDependencyError(of: step, in: run)))
    case .cancelled:
      return .failure(
        LaunchFailure(
          kind: .cancelled, step: id, plugin: plugin, message: "'\(id)' was cancelled"))
    case .failed, nil:
      return .failure(
        LaunchFailure(
          kind: .stepFailed, step: id, plugin: plugin, message: "'\(id)' failed: \(error)",
          underlying: run.aside.withLock { $0.errors[step] }))
    }
  }

  /// What the plugin threw whose failure skipped `step`: the dependency its skip names
  /// (`dependency 'index' was skipped`), followed through the skips it names in turn to the
  /// step that failed. None for a skip by design (a `when`), or a step that timed out.
  private func failedDependencyError(of step: Int, in run: LaunchRun) -> (any Error)? {
    var current = step
    var seen: Set<Int> = [step]
    while let error = scheduler.records[current].error,
      let dependency = run.plan.steps[current].dependsOn.first(where: {
        error.hasPrefix("dependency '\(run.plan.steps[$0].id)' ")
      }),
      seen.insert(dependency).inserted
    {
      switch scheduler.records[dependency].state {
      case .failed: return run.aside.withLock { $0.errors[dependency] }
      case .skipped: current = dependency
      default: return nil
      }
    }
    return nil
  }

  /// Milestones reached and not told yet.
  private var toldMilestones: [Bool] = []
  /// Whether the launch record was told the first screen was reached.
  private var toldFirstScreen = false

  /// Collects the milestones reached and not told yet, for the hook.
  private mutating func collectMilestones(into effects: inout [RunEffect]) {
    let times = scheduler.milestoneTimes
    if toldMilestones.count != times.count {
      toldMilestones = Array(repeating: false, count: times.count)
    }
    for index in times.indices where !toldMilestones[index] {
      guard let time = times[index] else { continue }
      toldMilestones[index] = true
      effects.append(.milestone(index, time))
    }
  }

  private mutating func handle(
    _ message: RunMessage, of run: LaunchRun, handler: inout RunHandler
  ) {
    // One clock reading per message, which is also when the attempts it starts start.
    let now: Duration
    switch message {
    case .begin(let lookups, let paused, let cancelled, let signalled, let holds, let earlier):
      for _ in 0..<holds { scheduler.hold() }
      now = run.elapsed
      // Now, not zero: the launch record's lock and write, and a cache lookup, took time the
      // app's user waited through, which is no step's work.
      for (step, note) in lookups.notes { scheduler.note(note, for: step, at: now) }
      if paused, !cancelled { scheduler.pause(at: now) }
      scheduler.start(
        at: now, served: lookups.served, reused: run.reused?.steps ?? [], signalled: signalled,
        skipped: run.context?.skips ?? [], cancelled: cancelled, earlier: earlier)
    case .control(let command):
      now = run.elapsed
      handle(command, at: now, of: run, handler: &handler)
    case .finished(let token, let outcome, let began):
      now = run.elapsed
      if let began { scheduler.attemptBegan(token: token, at: began) }
      let liveStep = scheduler.step(forLiveToken: token)
      if let step = liveStep { handler.effects.append(.forget(step: step, token: token)) }
      let result: LaunchScheduler.AttemptResult
      switch outcome {
      case .succeeded: result = .succeeded
      case .failed(let message): result = .failed(message)
      case .routed(let route): result = .routed(route)
      }
      scheduler.attemptFinished(token: token, result: result, at: now)
      // Kept only when the step did succeed (not one cancelled meanwhile), and before its
      // dependents' tasks start below.
      if case .succeeded(let value) = outcome, let step = liveStep,
        scheduler.records[step].state == .succeeded
          || scheduler.records[step].refreshState == .succeeded
      {
        run.aside.withLock { $0.outputs[step] = value }
        // A fallback's output is no better than what the next launch's step would make.
        let saves = run.plan.steps[step].cacheKey != nil && !scheduler.records[step].usedFallback
        if saves || run.hooks.onOutput != nil || run.context != nil {
          handler.effects.append(.output(step: step, value: value, saves: saves))
        }
      }
    case .report(let token, let message):
      now = run.elapsed
      scheduler.stepReported(token: token, message: message, at: now)
    case .timer(let deadline):
      if handler.armedDeadline == deadline { handler.armedDeadline = nil }
      now = max(run.elapsed, deadline)
      scheduler.advance(to: now)
    case .cancel:
      now = run.elapsed
      scheduler.cancel(at: now)
    case .earlierAttemptEnded(let id, let step):
      now = run.elapsed
      scheduler.earlierAttemptEnded(id, of: step, at: now)
    }
    collectActions(at: now, into: &handler.effects)
  }

  /// Applies what the app said through its control.
  private mutating func handle(
    _ command: ControlCommand, at now: Duration, of run: LaunchRun, handler: inout RunHandler
  ) {
    switch command {
    case .pause: scheduler.pause(at: now)
    case .resume(let pausedFor): scheduler.resume(at: now, pausedFor: pausedFor)
    case .cancel: if !scheduler.isFinished { scheduler.cancel(at: now) }
    case .finish: scheduler.closeSignals(at: now)
    case .hold: scheduler.hold()
    case .release: scheduler.release(at: now)
    case .signal(let name):
      if let signal = run.plan.signals.firstIndex(of: name) {
        scheduler.signal(signal, at: now)
      } else {
        scheduler.undeclaredSignal(name, at: now)
      }
    case .activate(let id, let waiter):
      guard let step = run.plan.steps.firstIndex(where: { $0.id == id }),
        run.plan.steps[step].trigger == .onDemand
      else {
        if let waiter {
          handler.ensured.append(
            ([waiter], .failure(LaunchRun.refusal(ofEnsuring: id, in: run.plan))))
        }
        return
      }
      scheduler.activate(step, at: now)
      guard let waiter else { return }
      if scheduler.records[step].state == .succeeded, scheduler.isIdleStep(step) {
        handler.ensured.append(([waiter], result(of: step, in: run)))
      } else {
        // Until the step's run ends: a step that ended as it was asked for (skipped) is
        // collected after this message.
        handler.ensureWaiters[step, default: []].append(waiter)
      }
    }
  }

  /// Collects the attempts the scheduler asked to start and cancel.
  private mutating func collectActions(at now: Duration, into effects: inout [RunEffect]) {
    scheduler.drainActions { action in
      switch action {
      case .start(let attempt): effects.append(.start(attempt, at: now))
      case .cancel(let attempt): effects.append(.cancel(attempt))
      case .abandon(let attempt, let abandoned):
        effects.append(.abandon(step: attempt.step, token: attempt.token, abandoned))
      case .abandonedEnded(let token): effects.append(.abandonedEnded(token: token))
      }
    }
  }

  /// Keeps one timer armed for the scheduler's earliest deadline; a later deadline never
  /// replaces an armed earlier one, so steps with timeouts cost no timer each.
  private mutating func rearmTimer(handler: inout RunHandler) {
    guard let next = scheduler.nextDeadline() else { return }
    if let armed = handler.armedDeadline, armed <= next { return }
    handler.armedDeadline = next
    handler.effects.append(.arm(next))
  }
}

/// What the cache held for a launch: the steps served from it, and a note per cached step.
private struct CacheLookups: Sendable {
  var served: [Int] = []
  var notes: [(step: Int, text: String)] = []
}

/// A message to a run.
private enum RunMessage: Sendable {
  case begin(
    CacheLookups, paused: Bool, cancelled: Bool, signalled: [Int], holds: Int,
    earlier: [LaunchScheduler.EarlierAttempt])
  case control(ControlCommand)
  /// `began` is when a main-isolated attempt's code began running, after its hop to the
  /// main thread; `nil` for other steps, which read no clock for it.
  case finished(token: Int, outcome: AttemptOutcome, began: Duration?)
  case report(token: Int, message: StepMessage)
  case timer(deadline: Duration)
  case cancel
  /// The attempt an earlier launch of the session abandoned, numbered so by the session's
  /// record, of this step, ended.
  case earlierAttemptEnded(Int, step: Int)
}

/// How an attempt's code ended.
private enum AttemptOutcome: Sendable {
  case succeeded(any Sendable)
  case failed(String)
  case routed(LaunchRoute)
}

/// A step's attempt as its context sees the launch: the run, and which attempt it is. Three
/// words, which the context's `any StepHost` holds inline: an attempt allocates nothing for
/// its host, and its task's closure holds the rest.
private struct AttemptHost: StepHost {
  let run: LaunchRun
  let step: Int
  let token: Int

  var stepID: String { run.plan.steps[step].id }
  var manifestDirectory: URL { run.plan.manifestDirectory }
  var dataDirectory: URL { run.plan.dataDirectory }
  var environment: LaunchEnvironment { run.environment }
  var clock: LaunchClock { run.clock }

  func dependencyOutputs() -> [any Sendable] {
    // Walked only when a plugin asks for its inputs: most steps never do.
    let dependencies = run.plan.hardDependencyClosure(of: step)
    return run.aside.withLock { aside in dependencies.compactMap { aside.outputs[$0] } }
  }

  func firstDependencyOutput(where matches: (any Sendable) -> Bool) -> (any Sendable)? {
    let steps = run.plan.steps
    return run.aside.withLock { aside in
      var found: (any Sendable)?
      LaunchPlan.walk(from: step, edges: { steps[$0].dependsOn }) { dependency in
        guard let value = aside.outputs[dependency], matches(value) else { return true }
        found = value
        return false
      }
      return found
    }
  }

  func report(_ message: StepMessage) {
    run.post(.report(token: token, message: message))
  }
}

/// Where a run delivers its events. A class: the run publishes at every lull, and an enum
/// held in the run is copied for each call (a retain and a release, through its value
/// witnesses), where a reference the run holds is lent as it is.
private final class EventSink: Sendable {
  private let channel: LaunchEvents.Continuation?
  private let stream: AsyncStream<LaunchEvent>.Continuation?

  /// Delivers to the package's own channel.
  init(_ channel: LaunchEvents.Continuation) {
    self.channel = channel
    stream = nil
  }

  /// Delivers to an `AsyncStream`.
  init(_ stream: AsyncStream<LaunchEvent>.Continuation) {
    channel = nil
    self.stream = stream
  }

  func publish(_ burst: [LaunchEvent]) {
    channel?.yield(burst: burst)
    if let stream {
      for event in burst { stream.yield(event) }
    }
  }

  func finish() {
    channel?.finish()
    stream?.finish()
  }

  /// On a test clock, counts the consumer while it applies the events it is handed.
  func countConsumer(in activity: LaunchActivity) {
    channel?.countConsumer(in: activity)
  }
}

/// What a retry takes from the launch's previous run: the steps that succeeded, and their
/// outputs.
struct Reuse: Sendable {
  var steps: [Int] = []
  var outputs: [(Int, any Sendable)] = []

  /// The steps of `plan` that succeeded in `previous` (served from the cache and refreshed
  /// included), but not a step that routed the launch: the app retries to have it judged
  /// again.
  init(plan: LaunchPlan, previous: LaunchReport) {
    let routedBy = previous.routedStep
    // Every step is looked up: by an index made once, not a search each, which made a
    // retry quadratic in steps.
    let lines = Dictionary(
      zip(previous.steps.lazy.map(\.id), previous.steps.indices),
      uniquingKeysWith: { first, _ in first })
    var previousOutputs = previous.outputs
    previousOutputs.indexSteps()
    for step in plan.steps.indices {
      let id = plan.steps[step].id
      guard let line = lines[id], id != routedBy else { continue }
      let state = previous.steps[line].state
      guard state == .succeeded || state == .cached else { continue }
      // A cached step whose refresh did not succeed (what it waits for failed) is served and
      // refreshed again once that runs again: reused, it would keep the old output for good.
      if state == .cached, previous.steps[line].refresh?.state != .succeeded { continue }
      steps.append(step)
      if let value = previousOutputs.value(of: id) { outputs.append((step, value)) }
    }
  }
}

extension Array {
  /// `count` nils, made in code specialized for the element: `Array(repeating:count:)`
  /// allocates through the standard library's generic code, which looks up the array's type
  /// (of an optional existential or tuple) in the run time's metadata cache on every call,
  /// about 1% of a one-step launch for each array a launch makes so.
  fileprivate static func nils<Wrapped>(count: Int) -> Self where Element == Wrapped? {
    var array = Self()
    array.reserveCapacity(count)
    for _ in 0..<count { array.append(nil) }
    return array
  }
}
