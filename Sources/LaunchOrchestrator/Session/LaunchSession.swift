import Observation

/// A launch as the app's first screens see it: which screen to show (splash, skeleton,
/// content, a route's screen), how far along, what each step produced, which milestones are
/// reached, and where it routed or why it failed.
///
/// ```swift
/// @State private var launch = LaunchSession()
///
/// var body: some View {
///   Group {
///     switch launch.screen {
///     case .splash: SplashView(progress: launch.progress)
///     case .skeleton: LibrarySkeleton()
///     case .content: LibraryView(page: launch.output(of: "firstPage", as: MusicPage.self))
///     case .routed(let route): RouteView(route: route)
///     case .failed(let failure):
///       FailureView(message: failure.userMessage) { Task { await launch.retry() } }
///     case .cancelled: EmptyView()
///     }
///   }
///   .task { await launch.run(plan, on: LaunchEngine(), environment: environment) }
///   .onChange(of: scenePhase) { _, phase in
///     phase == .active ? launch.resume() : launch.pause()
///   }
/// }
/// ```
///
/// The session follows the app's life: ``pause()`` and ``resume()`` with the scene (paused
/// time counts for nothing: timeouts, delays and the splash wait), ``cancel()``, ``retry()``
/// after a failure (only what did not succeed runs again), ``signal(_:)`` for steps that wait
/// for the app, and ``ensure(_:as:)`` for on-demand steps. A ``run(_:on:environment:)`` called
/// while the launch runs joins it: each step runs once, and both calls get the same report.
@MainActor
@Observable
public final class LaunchSession {
  /// Where the launch is.
  public enum Phase: Sendable, Equatable {
    /// Not started.
    case idle
    /// Steps are running.
    case running
    /// Over, with this outcome.
    case finished(LaunchOutcome)
  }

  /// Where the launch is.
  public private(set) var phase: Phase = .idle
  /// The screen to show, by the manifest's `splash` rule; on the engine's clock. Without a
  /// `splash`, the content shows the moment `interactive` is reached (the default
  /// `dismissOn`, with no minimum and no skeleton), or at the launch's end for a manifest
  /// without that milestone.
  public private(set) var screen: LaunchScreen = .splash
  /// From 0 to 1: the steps finished (however they ended) among those the milestone that
  /// brings the content waits for, directly or not (the splash's `dismissOn`, else
  /// `interactive`); all steps when the manifest has neither. Deferred background work does
  /// not hold it back, so it reads 1 when content shows.
  public private(set) var progress = 0.0
  /// The ids of the steps running now, in the order they started.
  public private(set) var runningSteps: [String] = []
  /// The same ids, to tell whether a step is running without searching the list: a launch of
  /// many steps at once would search it for every step that starts.
  @ObservationIgnored private var running: Set<String> = []
  /// The latest progress message of a running step (`"Upgrading library... 45%"`), if any.
  public private(set) var currentMessage: String?
  /// When each reached milestone was reached, as time since the launch started.
  public private(set) var milestones: [String: Duration] = [:]
  /// The route a step ended the launch with.
  public private(set) var route: LaunchRoute?
  /// Why the launch failed, when it did: the step, the error its plugin threw
  /// (``LaunchFailure/underlying``), a message for developers and one for users.
  public private(set) var failure: LaunchFailure?
  /// The report, once the launch is over; on-demand steps ensured after it update it, from
  /// their start (no `end` while they run) to their end.
  public private(set) var report: LaunchReport?
  /// Whether the app paused the launch (``pause()``); a launch started while paused waits.
  public private(set) var isPaused = false
  /// What the steps produced so far, each the moment its step succeeded.
  package private(set) var outputs = StepOutputs()
  /// Why the app launched and what the launch record made of it (the first launch, the
  /// first after an upgrade, safe mode), from the launch's start; `nil` before it, and for
  /// a launch that keeps no record.
  public private(set) var context: LaunchContext?
  /// Whether the launch runs in safe mode, after launches that never reached the first
  /// screen: the app can say so, and offer help.
  public var isSafeMode: Bool { context?.isSafeMode ?? false }

  // The session's own bookkeeping, below, is ignored by observation: no property an app
  // observes reads it, and each read or change of a tracked property goes through the
  // observation registrar, for every event of the launch.

  /// The steps ``progress`` counts; `nil` counts every step.
  @ObservationIgnored private var countedSteps: Set<String>?
  @ObservationIgnored private var totalSteps = 0
  @ObservationIgnored private var finishedSteps = 0
  @ObservationIgnored private var splash = SplashState(policy: nil, dismissOn: nil, timed: false)
  /// The current launch's splash timer, which ``cancel()`` stops.
  @ObservationIgnored private var splashTimer: Task<Void, Never>?
  /// The current launch's steps, looked up when one fails (for its plugin kind, and whether
  /// its failure ends the launch, `onFailure: abort`, which makes it the failure screen's
  /// reason at once) or is ensured (whether it is on demand). Indexed by id when first looked
  /// up, not when the launch starts: most launches fail no step.
  @ObservationIgnored private var plannedSteps: [PlannedStep] = []
  @ObservationIgnored private var plannedStepIndex: [String: Int]?
  /// The first failure of an aborting step heard after the app cancelled (see `stepFailed`):
  /// the launch's failure if it still ends `failed`.
  @ObservationIgnored private var failureAtEnd: LaunchFailure?
  /// What the current run's engine told ahead of its events; a new run gets a new one, so a
  /// run still ending cannot write into the next.
  @ObservationIgnored private var heard = Locked(Heard())
  /// Counts runs, so a run still ending after a newer one started changes nothing.
  @ObservationIgnored private var generation = 0
  /// The current launch's control, once one started.
  @ObservationIgnored private var control: LaunchControl?
  /// The control of the ensure calls made before the first launch started, which that
  /// launch takes: the steps they asked for run in it.
  @ObservationIgnored private var earlyControl: LaunchControl?
  /// The signals the app sent in this session: a retry's launch has them from its start.
  @ObservationIgnored private var sentSignals: [String] = []
  /// Whether the app said no more signals will come (``finish()``): a retry's launch knows it
  /// from its start.
  @ObservationIgnored private var signalsFinished = false
  /// Callers of `run` or `retry` that joined a launch, with its ``generation``: a launch still
  /// ending after a newer one started hands its report only to those who joined it.
  @ObservationIgnored private var joiners:
    [(generation: Int, caller: CheckedContinuation<LaunchReport, Never>)] = []
  /// Runs the last launch's plan again on its engine, reusing what a report says succeeded.
  @ObservationIgnored private var relaunch:
    (@MainActor (LaunchSession, LaunchReport?) async -> LaunchReport)?
  /// The on-demand steps' runs under way, by step: concurrent ``ensure(_:as:)`` callers
  /// share one.
  @ObservationIgnored private var ensuring: [String: SharedEnsure] = [:]
  /// Whether the current launch's end is applied (its events, its report): the events of
  /// on-demand steps ensured after it are applied from then on.
  @ObservationIgnored private var takesLateEvents = false
  /// The attempts the session's launches abandoned (plugins that ignored their cancellation)
  /// whose code still runs: a retry, or a new launch, starts none of those steps beside them.
  @ObservationIgnored private let abandonedAttempts = AbandonedAttempts()

  /// Outputs waiting for their step's `succeeded` event, milestones reached, and the errors
  /// plugins threw (for the failure of a step's `failed` event).
  private struct Heard {
    var outputs: [String: any Sendable] = [:]
    var milestones: [String: Duration] = [:]
    var errors: [String: any Error] = [:]
    var context: LaunchContext?
    /// Events of on-demand steps ensured after the launch, not applied yet.
    var late: [LaunchEvent] = []
  }

  /// Where each finished launch's report is appended; `nil` keeps none.
  private let reportStore: LaunchReportStore?

  /// Called on the main actor with each event of the session's launches (a retry's too), in
  /// order, once the session has applied it: for signposts, MetricKit or the app's own log.
  /// After a launch's `finished` come the events of the on-demand steps ensured after it.
  /// The events that arrive together are applied, and handed here, in one turn of the main
  /// actor: keep it quick, as it runs for each of them before the main thread draws again.
  ///
  /// ```swift
  /// launch.onEvent = { event in
  ///   if case .milestone("interactive") = event.kind { logger.log("interactive at \(event.time)") }
  /// }
  /// ```
  @ObservationIgnored public var onEvent: (@MainActor (LaunchEvent) -> Void)?

  /// A session that has not started; with a `reportStore`, each launch that finishes (a
  /// retry too) is appended to it, off the main actor, before ``run(_:on:environment:)``
  /// returns. A store that cannot take it loses that report, never the launch.
  public init(reportStore: LaunchReportStore? = nil) {
    self.reportStore = reportStore
  }

  /// The output of step `step` as a `T`: `nil` until the step succeeded, or when it
  /// produced another type. Observable: a view reading it updates when the step succeeds.
  public func output<T>(of step: String, as type: T.Type = T.self) -> T? {
    outputs.output(of: step, as: type)
  }

  /// The output `key` names: `nil` until its step succeeded. Observable, as
  /// ``output(of:as:)`` is; check keys once with ``LaunchPlan/check(_:)``.
  public subscript<Value>(key: OutputKey<Value>) -> Value? {
    outputs.output(of: key.step, as: Value.self)
  }

  /// Whether `milestone` has been reached (say `interactive`, to dismiss the splash).
  public func isReached(_ milestone: String) -> Bool {
    milestones[milestone] != nil
  }

  /// Runs `plan` on `engine` with the app's `environment`, updating the session as events
  /// arrive, and returns the report once the launch is over and the splash has had its
  /// `minimum` time.
  ///
  /// The splash timing runs on the engine's clock, so tests drive it with a manual clock.
  ///
  /// Called while the session's launch runs, it joins that launch and returns its report.
  /// Cancelling the task that started the launch cancels it, as ``cancel()`` does.
  public func run<C: Clock>(
    _ plan: LaunchPlan, on engine: LaunchEngine<C>,
    environment: LaunchEnvironment = LaunchEnvironment()
  ) async -> LaunchReport where C.Duration == Duration {
    if phase == .running { return await join() }
    relaunch = { session, previous in
      await session.launch(plan, on: engine, environment: environment, reusing: previous)
    }
    return await launch(plan, on: engine, environment: environment, reusing: nil)
  }

  /// Runs again what did not succeed in the last launch (failed, timed out, skipped or
  /// cancelled steps, the step that routed it, and their dependents), reusing the outputs of
  /// the steps that succeeded; the splash rule applies again from the retry's start. The
  /// report marks the reused steps (``LaunchReport/Step/reused``).
  ///
  /// After a launch that succeeded it returns that launch's report; while a launch runs it
  /// joins it. Asked for from the failure screen, which shows as soon as the launch's failure
  /// is known, or after ``cancel()``, whose screen shows at once, while the launch still
  /// finishes (its other steps stopping, its report made, its record written), it waits for
  /// the launch's end and retries it; callers asking at once share one retry.
  ///
  /// A step whose attempt an earlier launch of the session abandoned (its code ignored its
  /// cancellation past the grace period) does not run beside that attempt: it waits for it to
  /// end, saying so in a `log` event and its notes, for up to the step's timeout, and then
  /// fails with the reason. A new ``run(_:on:environment:)`` of the session does the same.
  ///
  /// A session that never launched has nothing to retry: it returns at once, launching
  /// nothing and changing nothing, a report with the outcome `failed`, no steps, and an
  /// ``LaunchReport/error`` that says to call ``run(_:on:environment:)`` first.
  @discardableResult
  public func retry() async -> LaunchReport {
    var previous = report
    // Asked for once the failure is known (on the failure screen, or while the splash's
    // minimum still hides it from an app that retries on `failure`), or once the app
    // cancelled, before the launch is over (the other steps still stop, or its report is
    // still to come: a launch's report is `nil` until then): the launch is retried once it is.
    let showsFailure = if case .failed = screen { true } else { false }
    let stillEnding =
      phase == .running
      && (showsFailure || splash.endsOnFailure || splash.ending == .cancelled)
    let reportToCome = phase != .running && previous == nil && relaunch != nil
    if stillEnding || reportToCome { previous = await join() }
    // A launch running, or one a call retried meanwhile: this call joins it.
    if phase == .running { return await join() }
    guard let relaunch, let previous else { return Self.nothingToRetry }
    if previous.outcome == .succeeded { return previous }
    return await relaunch(self, previous)
  }

  /// What ``retry()`` returns for a session that never launched.
  private static var nothingToRetry: LaunchReport {
    LaunchReport(
      manifest: "", name: "", outcome: .failed, route: nil, duration: .zero, milestones: [],
      criticalPath: [], steps: [],
      error:
        "retry() found no launch to retry: the session never ran one. Call run(_:on:environment:) first."
    )
  }

  /// Waits for the report of the session's latest launch.
  private func join() async -> LaunchReport {
    await withCheckedContinuation { joiners.append((generation, $0)) }
  }

  /// Pauses the launch, as when the app leaves the foreground: running steps go on, no step
  /// starts, and timeouts, delays, backoffs and the splash's `minimum` and `skeletonAfter`
  /// stop counting until ``resume()``. Report times leave the pause out, and list it.
  public func pause() {
    isPaused = true
    control?.pause()
  }

  /// Resumes a paused launch; every deadline moves by the time it was paused.
  public func resume() {
    isPaused = false
    control?.resume()
  }

  /// Cancels the running launch: running steps are cancelled, the rest skipped, the outcome
  /// is `cancelled` and ``failure`` stays `nil`.
  ///
  /// The screen is ``LaunchScreen/cancelled`` when this returns: a splash's `minimum`, paused
  /// or not, is not waited for, nor a step that ignores its cancellation (the launch waits for
  /// it up to the engine's grace period), and nothing the launch still tells as it stops
  /// changes it again; only a ``retry()`` or a new ``run(_:on:environment:)`` does. A screen
  /// that already left the splash (the content, a route's, a failure's) stays. With no launch
  /// running it does nothing: a later ``run(_:on:environment:)`` or ``retry()`` runs.
  public func cancel() {
    control?.cancel()
    guard phase == .running, control != nil else { return }
    // The screen is settled from now on (only a route replaces the content, and the content
    // is not replaced here): no event of the launch, nor the splash's timer, moves it again.
    splash.ending = .cancelled
    splash.minimumPassed = true
    splashTimer?.cancel()
    updateScreen()
  }

  /// Sends the signal `name` (declared in the manifest's `signals`): steps that `waitFor` it
  /// may start. A signal sent early is remembered, by this launch and by a retry. A name the
  /// manifest does not declare starts nothing: the steps waiting for the signal closest to it
  /// (a typo), else every step waiting for one, get a note in the report saying so.
  public func signal(_ name: String) {
    if !sentSignals.contains(name) { sentSignals.append(name) }
    control?.signal(name)
  }

  /// Says no more signals will come: steps still waiting for one are skipped with the reason
  /// `signal '<name>' was not sent`, and the launch ends once the rest has. Said before the
  /// launch, it applies from its start; a retry's launch knows it too.
  public func finish() {
    signalsFinished = true
    control?.finish()
  }

  /// Runs the on-demand step `step` (`"trigger": "onDemand"`), with its on-demand
  /// dependencies that have not run, during the launch or after it, and returns its output.
  ///
  /// It runs once, with its timeout and retries: concurrent callers share that run, and later
  /// calls return the output at once. Its events reach ``onEvent`` like any step's, during
  /// the launch and after it (its failure leaves ``screen`` and ``failure`` as they are: it is
  /// the caller's), and ``runningSteps`` lists it while it runs. After the launch,
  /// ``report`` lists it from its start (no `end` while it runs) to its end, succeeded or
  /// failed, and ``output(of:as:)`` hands its output over.
  ///
  /// A caller whose task is cancelled stops waiting at once and throws `CancellationError`;
  /// the run goes on for the other callers, and its output still becomes the session's. A
  /// task cancelled before it asks starts no run.
  ///
  /// Asked for before the session's first launch starts (its `run` on a task that has not
  /// begun yet, say), it waits for that launch, in which or after which the step runs.
  ///
  /// - Throws: ``LaunchFailure`` when the step failed (it may be ensured again), does not
  ///   exist, is not on demand, or outputs another type; `CancellationError` when the
  ///   calling task is cancelled.
  public func ensure<T>(_ step: String, as type: T.Type = T.self) async throws -> T {
    // Only an on-demand step's output is handed at once: a launch step's is refused as not
    // on demand, before it is in as after.
    if plannedStep(step)?.trigger == .onDemand, let value = outputs.output(of: step, as: T.self) {
      return value
    }
    try Task.checkCancellation()
    let control = self.control ?? earlyControl ?? LaunchControl()
    if self.control == nil { earlyControl = control }
    let shared: SharedEnsure
    if let running = ensuring[step] {
      shared = running
    } else {
      shared = SharedEnsure()
      ensuring[step] = shared
      // A task of its own rather than the caller's: the run is every caller's, and goes on
      // when one of them is cancelled (its output is the session's all the same).
      Task { @MainActor in
        let result: Result<(any Sendable)?, any Error>
        do {
          result = .success(try await control.ensureOutput(of: step))
        } catch {
          result = .failure(error)
        }
        if ensuring[step] === shared { ensuring[step] = nil }
        ensured(step, result, on: control)
        shared.end(with: result)
      }
    }
    return try LaunchFailure.cast(try await shared.value(), of: step, to: T.self)
  }

  /// Takes in the end of an on-demand step's run: its output, and after the launch, the
  /// report with the step's line, whether it succeeded or failed.
  private func ensured(
    _ step: String, _ result: Result<(any Sendable)?, any Error>, on control: LaunchControl
  ) {
    // A run of an earlier launch's control tells the session nothing.
    guard self.control === control else { return }
    // The step's events came before its result: applied now, `runningSteps` no longer lists
    // it when `ensure` returns, whichever of the two main-actor tasks ran first.
    applyLateEvents(run: generation)
    if case .success(let output?) = result { outputs.set(output, for: step) }
    // Only a step the launch has on demand ran: a refused one (not on demand, no such step)
    // changed nothing in the report.
    guard phase != .running, plannedStep(step)?.trigger == .onDemand,
      let updated = control.report
    else { return }
    report = updated
  }

  private func launch<C: Clock>(
    _ plan: LaunchPlan, on engine: LaunchEngine<C>, environment: LaunchEnvironment,
    reusing previous: LaunchReport?
  ) async -> LaunchReport where C.Duration == Duration {
    // The first launch takes the control of the ensure calls made before it.
    let control = earlyControl ?? LaunchControl()
    earlyControl = nil
    if isPaused { control.pause() }
    for name in sentSignals { control.signal(name) }
    if signalsFinished { control.finish() }
    self.control = control
    ensuring = [:]
    // One start for the engine and the splash's timer, so both measure the same moments.
    let clock = control.activeClock(engine.clock, start: engine.clock.now)
    start(plan: plan, timesSplash: true)
    generation += 1
    let run = generation
    let heard = heard
    @Sendable func timeSplash() async {
      guard let policy = plan.manifest.splash else { return }
      await Self.timeSplash(policy, clock: clock, session: self, run: run)
    }
    let timer: Task<Void, Never>
    if let activity = Participation.current?.activity {
      // On a test clock the splash's timer is counted like the engine's, so the clock does not
      // move past its moments before the screen changed.
      activity.begin()
      timer = Task { await activity.run(timeSplash) }
    } else {
      timer = Task { await timeSplash() }
    }
    splashTimer = timer
    let (events, continuation) = LaunchEvents.makeStream()
    continuation.expectConsumer()
    let hooks = RunHooks(
      onOutput: { step, value in heard.withLock { $0.outputs[step] = value } },
      onMilestone: { name, time in heard.withLock { $0.milestones[name] = time } },
      onError: { step, error in heard.withLock { $0.errors[step] = error } },
      onContext: { context in heard.withLock { $0.context = context } },
      onLateEvents: { [weak self] burst in
        heard.withLock { $0.late += burst }
        // A task of its own: the run's handler does not wait for the main actor. Each task
        // applies every burst queued so far, in order, so tasks that run out of turn change
        // nothing.
        Task { @MainActor in self?.applyLateEvents(run: run) }
      })
    async let report = engine.run(
      plan, environment: environment, events: continuation, control: control,
      reusing: previous, hooks: hooks, abandoned: abandonedAttempts)
    // The context is told before the first event: read once, at that event.
    var awaitsContext = true
    for await event in events where generation == run {
      if awaitsContext {
        awaitsContext = false
        context = heard.withLock(\.context)
      }
      apply(event)
      onEvent?(event)
    }
    let finished = await report
    let joined = joiners.filter { $0.generation == run }
    joiners.removeAll { $0.generation == run }
    for joiner in joined { joiner.caller.resume(returning: finished) }
    guard generation == run else {
      timer.cancel()
      return finished
    }
    self.report = finished
    context = finished.context ?? context
    takesLateEvents = true
    applyLateEvents(run: run)
    if let reason = finished.error {
      // A launch refused before it started: the reason is the app developer's to see, and
      // the first step that needs a value the app did not provide is its step. Looked up
      // again only here, on a launch that never ran.
      let refused = LaunchFailure.refused(
        plan.missingRequirements(in: environment), reason: reason)
      failure = refused
      if case .failed = screen { screen = .failed(refused) }
      splash.ending = .failed(refused)
    }
    if screen.isSettled || Task.isCancelled { timer.cancel() }
    if let reportStore { await Self.keep(finished, in: reportStore) }
    await timer.value
    return finished
  }

  /// Applies the events of on-demand steps ensured after launch `run` ended, and hands them
  /// to ``onEvent``, as the launch's own: ``runningSteps`` lists such a step while it runs,
  /// and ``report`` shows it from its start.
  private func applyLateEvents(run: Int) {
    guard run == generation, takesLateEvents else { return }
    let events = heard.withLock { heard in
      defer { heard.late = [] }
      return heard.late
    }
    guard !events.isEmpty else { return }
    for event in events {
      apply(event)
      onEvent?(event)
    }
    // Progress changes no line of the report: a step that reports it often rebuilds none.
    let changesReport = events.contains {
      if case .progress = $0.kind { return false }
      return true
    }
    if changesReport, let updated = control?.report { report = updated }
  }

  /// Appends `report` to `store` on a thread of its own: the write is synchronous file work,
  /// and neither the main actor nor the cooperative pool should wait on it.
  private nonisolated static func keep(_ report: LaunchReport, in store: LaunchReportStore) async {
    await withTaskExecutorPreference(BlockingExecutor.shared) {
      try? store.append(report)
    }
  }

  /// Sleeps on the engine's clock to the splash's two moments: the end of its minimum time,
  /// then just past the skeleton deadline (unless the screen settled before).
  private nonisolated static func timeSplash(
    _ policy: SplashPolicy, clock: ActiveClock, session: LaunchSession, run: Int
  ) async {
    do {
      try await clock.sleep(until: policy.minimum)
    } catch {
      return
    }
    guard await !session.passMinimum(run: run) else { return }
    do {
      // Content ready at the deadline itself shows no skeleton; woken at the deadline, the
      // timer could not tell content on its way at that instant from content still to come.
      try await clock.sleep(until: policy.skeletonDeadline + .nanoseconds(1))
    } catch {
      return
    }
    await session.passSkeletonDeadline(run: run)
  }

  /// Resets the session for a launch of `plan` whose events are applied one by one with
  /// ``apply(_:)``: the package's tests of the screen rules.
  ///
  /// ``progress`` then counts the steps the splash's dismiss milestone waits for, and the
  /// screen leaves the splash for the content (or a route, or a failure) as soon as the
  /// events bring it: the splash's `minimum` and `skeletonAfter` need a clock, which
  /// ``run(_:on:environment:)`` has and events alone do not.
  package func start(plan: LaunchPlan) {
    start(plan: plan, timesSplash: false)
  }

  private func start(plan: LaunchPlan, timesSplash: Bool) {
    reset()
    // On-demand steps are the app's to run, not the launch's: they hold no progress back.
    // Gathered when the plan was built, so a plan without them sets nothing up here.
    let dismissOn = plan.contentMilestone
    countedSteps =
      dismissOn.map { plan.steps(before: $0) }
      ?? (plan.onDemandSteps.isEmpty
        ? nil
        : Set(plan.steps.lazy.filter { $0.trigger == .launch }.map(\.id)))
    plannedSteps = plan.steps
    plannedStepIndex = nil
    totalSteps = countedSteps?.count ?? plan.steps.count
    progress = totalSteps == 0 ? 1 : 0
    splash = SplashState(policy: plan.manifest.splash, dismissOn: dismissOn, timed: timesSplash)
  }

  /// Resets the session for a launch of `stepCount` steps, counting all of them in
  /// ``progress`` and showing content when the launch ends.
  package func start(stepCount: Int) {
    reset()
    totalSteps = stepCount
    progress = stepCount == 0 ? 1 : 0
  }

  private func reset() {
    phase = .running
    screen = .splash
    countedSteps = nil
    plannedSteps = []
    plannedStepIndex = nil
    splash = SplashState(policy: nil, dismissOn: nil, timed: false)
    finishedSteps = 0
    runningSteps = []
    running = []
    currentMessage = nil
    milestones = [:]
    route = nil
    failure = nil
    failureAtEnd = nil
    report = nil
    context = nil
    outputs = StepOutputs()
    heard = Locked(Heard())
    takesLateEvents = false
  }

  /// Marks the splash's minimum time as over; returns whether the screen has settled.
  private func passMinimum(run: Int) -> Bool {
    guard run == generation else { return true }
    splash.minimumPassed = true
    updateScreen()
    return screen.isSettled
  }

  private func passSkeletonDeadline(run: Int) {
    guard run == generation else { return }
    // Content that came in time shows no skeleton, even when its event is still on its way.
    if let policy = splash.policy,
      let readyAt = heard.withLock({ $0.milestones[policy.dismissOn] }),
      readyAt <= policy.skeletonDeadline
    {
      return
    }
    splash.skeletonDeadlinePassed = true
    updateScreen()
  }

  private func updateScreen() {
    if let next = splash.screen(current: screen), next != screen { screen = next }
  }

  /// Updates the session with one event, as ``run(_:on:environment:)`` does with each.
  package func apply(_ event: LaunchEvent) {
    switch event.kind {
    case .started(let step, _):
      if running.insert(step).inserted { runningSteps.append(step) }
    case .progress(_, let fraction, let message):
      let percent = fraction.map { " \(Int(($0 * 100).rounded()))%" } ?? ""
      currentMessage = message.map { $0 + percent } ?? currentMessage
    case .succeeded(let step, _), .cached(let step), .reused(let step):
      takeOutput(of: step)
      stepEnded(step)
    case .refreshed(let step):
      takeOutput(of: step)
      stopRunning(step)
    case .refreshFailed(let step, _):
      stopRunning(step)
    case .cancelled(let step):
      stepEnded(step)
    case .failed(let step, let message):
      stepEnded(step)
      stepFailed(
        LaunchFailure(
          kind: .stepFailed, step: step, plugin: plannedStep(step)?.plugin,
          message: "'\(step)' failed: \(message)",
          underlying: heard.withLock { $0.errors.removeValue(forKey: step) }))
    case .timedOut(let step, let timeout):
      stepEnded(step)
      stepFailed(
        LaunchFailure(
          kind: .timedOut, step: step, plugin: plannedStep(step)?.plugin,
          message: "'\(step)' timed out after \(DurationText.format(timeout))"))
    case .skipped(let step, _):
      stepEnded(step)
    case .retrying(let step, _, _, _, _):
      leaveRunning(step)
    case .milestone(let name):
      milestones[name] = event.time
      if name == splash.dismissOn { splash.ending = .content }
    case .routed(let route, _):
      self.route = route
      splash.ending = .routed(route)
    case .log, .paused, .resumed, .signalled:
      break
    case .finished(let outcome):
      phase = .finished(outcome)
      if outcome != .failed { failure = nil }
      currentMessage = nil
      switch outcome {
      case .succeeded, .degraded: if splash.ending == nil { splash.ending = .content }
      case .failed where !splash.endsOnFailure:
        failure = failureAtEnd ?? failure
        splash.ending = .failed(
          failure ?? LaunchFailure(kind: .stepFailed, message: "the launch failed"))
      case .failed: break
      case .cancelled:
        // The app asked for it: the splash's minimum is for a launch going on, not one stopped.
        splash.ending = .cancelled
        splash.minimumPassed = true
      case .routed: break
      }
    }
    updateScreen()
  }

  /// The current launch's step `id`: only a failed step is looked up.
  private func plannedStep(_ id: String) -> PlannedStep? {
    let index =
      plannedStepIndex
      ?? Dictionary(
        plannedSteps.indices.map { (plannedSteps[$0].id, $0) },
        uniquingKeysWith: { first, _ in first })
    plannedStepIndex = index
    return index[id].map { plannedSteps[$0] }
  }

  /// The first failure is the launch's, unless a step that aborts the launch fails: that one
  /// ends it, so it is the reason, shown at once.
  private func stepFailed(_ stepFailure: LaunchFailure) {
    // An on-demand step's failure is its caller's (``ensure(_:as:)`` throws it): the launch's
    // screen and failure stay as they are, as its outcome does.
    guard plannedStep(stepFailure.step ?? "")?.trigger != .onDemand else { return }
    // A step the launch's end failed (it waited for its next attempt when the app cancelled
    // the launch or a step routed it) did not end it: the screen is the cancel's or the
    // route's. An aborting step's failure that reached the run before the cancel did is
    // kept for a launch that still ends `failed`: the first such one is what ended it (the
    // events come in order, the aborting failure before the steps its abort failed).
    if route != nil || control?.isCancelled == true {
      if plannedStep(stepFailure.step ?? "")?.onFailure == .abort {
        failureAtEnd = failureAtEnd ?? stepFailure
      }
      return
    }
    guard let step = stepFailure.step, plannedStep(step)?.onFailure == .abort,
      !splash.endsOnFailure
    else {
      failure = failure ?? stepFailure
      return
    }
    failure = stepFailure
    splash.ending = .failed(stepFailure)
  }

  /// Publishes the output the run told of ahead of the step's event.
  private func takeOutput(of step: String) {
    if let value = heard.withLock({ $0.outputs.removeValue(forKey: step) }) {
      outputs.set(value, for: step)
    }
  }

  private func stopRunning(_ step: String) {
    leaveRunning(step)
    if runningSteps.isEmpty { currentMessage = nil }
  }

  private func leaveRunning(_ step: String) {
    // Searched only when running; steps mostly end in the order they started, so the search
    // stops near the front.
    guard running.remove(step) != nil, let index = runningSteps.firstIndex(of: step) else {
      return
    }
    runningSteps.remove(at: index)
  }

  private func stepEnded(_ step: String) {
    stopRunning(step)
    guard countedSteps?.contains(step) ?? true else { return }
    finishedSteps += 1
    progress = totalSteps == 0 ? 1 : Double(finishedSteps) / Double(totalSteps)
  }
}

/// One run of an on-demand step that ``LaunchSession/ensure(_:as:)`` callers share: each
/// caller waits on its own, so one whose task is cancelled stops waiting while the run goes
/// on for the others.
@MainActor
private final class SharedEnsure {
  private var result: Result<(any Sendable)?, any Error>?
  private var waits: [EnsureWait] = []

  /// The run's output once it ended; throws its failure, or `CancellationError` as soon as
  /// the calling task is cancelled.
  func value() async throws -> (any Sendable)? {
    if let result { return try result.get() }
    let wait = EnsureWait()
    waits.append(wait)
    return try await withTaskCancellationHandler {
      try await wait.value()
    } onCancel: {
      wait.end(with: .failure(CancellationError()))
    }
  }

  /// Ends every caller's wait with the run's `result`.
  func end(with result: Result<(any Sendable)?, any Error>) {
    self.result = result
    for wait in waits { wait.end(with: result) }
    waits = []
  }
}

/// One caller's wait for a shared run: it ends once, at the run's end or at the caller's
/// cancellation, whichever comes first (a cancellation handler runs on the thread that
/// cancels, hence the lock).
private final class EnsureWait: Sendable {
  private struct State {
    var continuation: CheckedContinuation<(any Sendable)?, any Error>?
    var result: Result<(any Sendable)?, any Error>?
  }

  private let state = Locked(State())

  func value() async throws -> (any Sendable)? {
    try await withCheckedThrowingContinuation { continuation in
      let ended = state.withLock { state in
        if state.result == nil { state.continuation = continuation }
        return state.result
      }
      if let ended { continuation.resume(with: ended) }
    }
  }

  func end(with result: Result<(any Sendable)?, any Error>) {
    let continuation = state.withLock { state -> CheckedContinuation<(any Sendable)?, any Error>? in
      guard state.result == nil else { return nil }
      state.result = result
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: result)
  }
}

/// The splash rule's state: what the launch is ready to show, and which of the splash's
/// moments have passed.
private struct SplashState {
  /// The manifest's `splash`, whose times the session's timer keeps; `nil` without one.
  let policy: SplashPolicy?
  /// The milestone that brings the content (``LaunchPlan/contentMilestone``); `nil`: the
  /// launch's end.
  let dismissOn: String?
  /// What shows once the splash may go: content, a route or a failure.
  var ending: LaunchScreen?
  var minimumPassed: Bool
  var skeletonDeadlinePassed = false

  var endsOnFailure: Bool {
    if case .failed = ending { return true }
    return false
  }

  /// A splash whose minimum time is waited for only when `timed`: a clock must say when
  /// it passed.
  init(policy: SplashPolicy?, dismissOn: String?, timed: Bool) {
    self.policy = policy
    self.dismissOn = dismissOn
    minimumPassed = !timed || (policy?.minimum ?? .zero) <= .zero
  }

  /// The screen to show now, or `nil` to keep `current`.
  func screen(current: LaunchScreen) -> LaunchScreen? {
    if let ending, minimumPassed {
      // A route after the content still takes the app to its screen (a forced update, a
      // logout); nothing else replaces a settled screen.
      if case .routed = ending, current == .content { return ending }
      return current.isSettled ? nil : ending
    }
    if skeletonDeadlinePassed, current == .splash { return .skeleton }
    return nil
  }
}

extension LaunchPlan {
  /// The milestone that brings the content (``LaunchSession/screen``): the splash's
  /// `dismissOn`; for a manifest without a `splash`, the default `dismissOn` (`interactive`)
  /// when the manifest has that milestone, with no minimum and no skeleton; else `nil`, and
  /// the content shows at the launch's end.
  var contentMilestone: String? {
    if let splash = manifest.splash { return splash.dismissOn }
    let byDefault = SplashPolicy().dismissOn
    return milestones.contains { $0.name == byDefault } ? byDefault : nil
  }

  /// The ids of the steps milestone `name` waits for, directly or not: its steps, what they
  /// depend on or run after, and the steps of the milestones they are deferred until.
  func steps(before name: String) -> Set<String> {
    guard let milestone = milestones.first(where: { $0.name == name }) else { return [] }
    var seen: Set<Int> = []
    var pending = milestone.steps
    while let step = pending.popLast() {
      guard seen.insert(step).inserted else { continue }
      pending += steps[step].dependsOn + steps[step].after
      if let deferral = steps[step].deferUntil { pending += milestones[deferral].steps }
    }
    return Set(seen.map { steps[$0].id })
  }
}
