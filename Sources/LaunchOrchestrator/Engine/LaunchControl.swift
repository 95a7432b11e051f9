/// A handle on a running launch for the app: pause and resume it with the app's scene,
/// cancel it, send it signals, and ask for on-demand steps.
///
/// ```swift
/// let control = LaunchControl()
/// async let report = LaunchEngine().run(plan, environment: environment, control: control)
/// control.signal("consent")          // the user accepted the privacy prompt
/// let index = try await control.ensure("search", as: SearchIndex.self)
/// ```
///
/// One control drives one run; ``LaunchSession`` makes its own for each launch. Everything
/// said before the run starts (a pause, a signal, a cancellation) applies from its start.
public final class LaunchControl: Sendable {
  private struct State {
    var run: (any ControlledRun)?
    var clock: ActiveClock?
    /// What was said before a run took the control, replayed when one does.
    var isPaused = false
    var isCancelled = false
    /// Whether a cancel stopped the launch's pauses (see ``cancel()``): said while it ran.
    var ignoresPauses = false
    var isFinished = false
    var holds = 0
    var signals: [String] = []
    /// The on-demand steps asked for, each with its ensure caller (none for a ``request(_:)``),
    /// handed to the run that takes the control: from then on, the run holds the callers.
    var activations: [(step: String, waiter: EnsureWaiter?)] = []
    /// Why the run never started, once it refused to: what every ensure caller hears.
    var refusal: LaunchFailure?
  }

  private let state = Locked(State())
  /// Whether the active clock counts a gap in its readings as a pause (the CLI: a
  /// `kill -STOP` cannot be caught, only noticed).
  let detectsSuspensions: Bool

  /// A control for one launch.
  public convenience init() {
    self.init(detectsSuspensions: false)
  }

  /// A control whose launch counts a stretch of `ActiveClock`'s readings longer than half a
  /// second without one as a pause: the process was stopped.
  package init(detectsSuspensions: Bool) {
    self.detectsSuspensions = detectsSuspensions
  }

  /// Pauses the launch (the app went to the background): running steps go on, no step
  /// starts, and timeouts, delays, backoffs and the splash's timing stop until ``resume()``.
  public func pause() {
    let run = state.withLock { state -> (any ControlledRun)? in
      // A launch cancelled while it ran starts nothing more; its time runs on for the grace
      // its running steps get to stop (see ``cancel()``).
      guard !state.ignoresPauses else { return nil }
      state.isPaused = true
      // The clock stops here, on the caller's thread, and under the lock: a run starting
      // meanwhile finds it stopped (``attach(_:starting:)``). The run hears of it next.
      guard state.clock?.pause() != nil else { return nil }
      return state.run
    }
    run?.control(.pause)
  }

  /// Resumes a paused launch: every deadline moves by the time it was paused.
  public func resume() {
    let told = state.withLock { state -> (run: any ControlledRun, pausedFor: Duration)? in
      state.isPaused = false
      guard let (_, pausedFor) = state.clock?.resume(), let run = state.run else { return nil }
      return (run, pausedFor)
    }
    if let (run, pausedFor) = told { run.control(.resume(pausedFor: pausedFor)) }
  }

  /// Whether the launch is paused.
  public var isPaused: Bool { state.withLock(\.isPaused) }

  /// Cancels the launch: running steps are cancelled, the rest skipped, and the outcome is
  /// `cancelled`. A paused launch's time runs again: a step that ignores cancellation is
  /// waited for only the grace period (``LaunchOptions/cancellationGracePeriod``), which a
  /// pause would otherwise hold for as long as the app stays away. Said after the launch
  /// ended, it changes nothing: on-demand steps ensured later still wait out a pause.
  public func cancel() {
    // Asked before this control's lock is taken: the run's own lock is never taken inside it.
    let isRunning = state.withLock(\.run).map { !$0.hasEnded } ?? true
    let (run, pausedFor) = state.withLock { state -> ((any ControlledRun)?, Duration?) in
      state.isCancelled = true
      guard isRunning else { return (state.run, nil) }
      state.ignoresPauses = true
      state.isPaused = false
      return (state.run, state.clock?.resume()?.pausedFor)
    }
    if let pausedFor { run?.control(.resume(pausedFor: pausedFor)) }
    run?.control(.cancel)
  }

  /// Sends the signal `name`, which the manifest declares in `signals`: steps that `waitFor`
  /// it may start. A signal sent before a step is ready is remembered; sending it again does
  /// nothing, and so does sending it after ``finish()``, which said none would come. A name
  /// the manifest does not declare starts nothing: the steps waiting for the signal closest
  /// to it (a typo), else every step waiting for one, get a note saying so, with its `log`
  /// event.
  public func signal(_ name: String) {
    let run = state.withLock { state in
      if !state.signals.contains(name) { state.signals.append(name) }
      return state.run
    }
    run?.control(.signal(name))
  }

  /// Says no more signals will come: steps still waiting for one are skipped with the reason
  /// `signal '<name>' was not sent`, and the launch ends once the rest has.
  public func finish() {
    let run = state.withLock { state in
      state.isFinished = true
      return state.run
    }
    run?.control(.finish)
  }

  /// Keeps the launch from finishing, even with every step ended, until ``release()``: for a
  /// rehearsal that ensures a step at a later time.
  package func hold() {
    let run = state.withLock { state in
      state.holds += 1
      return state.run
    }
    run?.control(.hold)
  }

  /// Lets go of a ``hold()``.
  package func release() {
    let run = state.withLock { state in
      state.holds -= 1
      return state.run
    }
    run?.control(.release)
  }

  /// Reads the launch clock, so that with suspension detection a quiet stretch is not taken
  /// for a stopped process: call it more often than every half second.
  package func heartbeat() {
    clock?.heartbeat()
  }

  /// Runs the on-demand step `step` (`"trigger": "onDemand"`) with its on-demand
  /// dependencies that have not run, during the launch or after it, and returns its output.
  ///
  /// The step runs once: concurrent callers share its run, and later calls return its output
  /// at once. When it fails, this throws, and the step may be ensured again. A caller whose
  /// task is cancelled stops waiting (`CancellationError`); the step's run goes on for the
  /// others and for later calls.
  ///
  /// - Throws: ``LaunchFailure`` when the step does not exist, is not on demand, failed,
  ///   timed out, was skipped, or its output is not a `T`; `CancellationError` when the
  ///   calling task was cancelled.
  public func ensure<T>(_ step: String, as type: T.Type = T.self) async throws -> T {
    try LaunchFailure.cast(try await ensureOutput(of: step), of: step, to: T.self)
  }

  /// The output of on-demand step `step` once it ran; see ``ensure(_:as:)``.
  package func ensureOutput(of step: String) async throws -> (any Sendable)? {
    let waiter = EnsureWaiter()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        guard waiter.wait(continuation) else { return }
        let (run, refusal) = state.withLock { state -> ((any ControlledRun)?, LaunchFailure?) in
          if let refusal = state.refusal { return (nil, refusal) }
          // Said at once, without the run: after a launch without on-demand steps, nothing is
          // left to hear it.
          if let refusal = state.run?.refusal(ofEnsuring: step) { return (nil, refusal) }
          if state.run == nil { state.activations.append((step, waiter)) }
          return (state.run, nil)
        }
        if let refusal {
          waiter.resume(throwing: refusal)
          return
        }
        // The caller travels with the request: the run hands it the result of the step's run
        // that ends after the run heard it, never of one that ended before (a failure the
        // step is now asked to run again after).
        run?.control(.activate(step, waiter: waiter))
        // The step is counted on its own now: on a test clock, the caller waits uncounted.
        Participation.handOver()
      }
    } onCancel: {
      // The caller stops waiting; the step's run goes on for the others and later calls.
      waiter.resume(throwing: CancellationError())
    }
  }

  /// Asks for on-demand step `step` without waiting for it: a rehearsal's `--ensure`, whose
  /// outcome is the step's line in the report.
  package func request(_ step: String) {
    let run = state.withLock { state in
      if state.run == nil { state.activations.append((step, nil)) }
      return state.run
    }
    run?.control(.activate(step, waiter: nil))
  }

  /// Whether the launch was cancelled, before its run took the control or since.
  var isCancelled: Bool { state.withLock(\.isCancelled) }

  /// Tells the ensure callers, those waiting and those to come, that the run refused to start
  /// (`failure`): no step of it will ever run.
  func refuse(_ failure: LaunchFailure) {
    let waiters = state.withLock { state in
      state.refusal = failure
      defer { state.activations = [] }
      return state.activations.compactMap(\.waiter)
    }
    for waiter in waiters { waiter.resume(throwing: failure) }
  }

  /// The active clock a run on `clock` from `start` uses: the one already set for this control
  /// (a session times its splash on it too), or a new one.
  func activeClock<C: Clock>(_ clock: C, start: C.Instant) -> ActiveClock
  where C.Duration == Duration {
    state.withLock { state in
      if let existing = state.clock { return existing }
      let made = ActiveClock(
        clock, start: start, suspensionGap: detectsSuspensions ? .milliseconds(500) : nil)
      // Paused before the launch began: it begins paused.
      if state.isPaused { _ = made.pause() }
      state.clock = made
      return made
    }
  }

  /// Starts the launch's active time now on the continuous clock, before the run: a
  /// rehearsal times its signals on it from the same start.
  package func startClock() {
    _ = activeClock(ContinuousClock(), start: ContinuousClock.now)
  }

  /// Sleeps until the launch's active time reaches `time`; returns at once when no clock was
  /// started.
  package func sleep(untilActive time: Duration) async throws {
    try await clock?.sleep(until: time)
  }

  /// The active clock, once a run (or a session) made it.
  var clock: ActiveClock? { state.withLock(\.clock) }

  /// What was said before a run took the control: what the run starts with.
  struct SaidBefore {
    var isCancelled: Bool
    var holds: Int
    /// The signals and the on-demand steps asked for, and whether no more signals come.
    var commands: [ControlCommand]
  }

  /// Attaches `run` and starts it: `start` queues the run's start with what was said before,
  /// in this control's lock, so that what is said from then on (a pause, whose clock this lock
  /// also orders) reaches the run after its start; returns what `start` returns.
  func attach(_ run: any ControlledRun, starting start: (SaidBefore) -> Bool) -> Bool {
    state.withLock { state in
      state.run = run
      var commands: [ControlCommand] = []
      commands += state.signals.map(ControlCommand.signal)
      commands += state.activations.map { ControlCommand.activate($0.step, waiter: $0.waiter) }
      state.activations = []
      if state.isFinished { commands.append(.finish) }
      return start(
        SaidBefore(isCancelled: state.isCancelled, holds: state.holds, commands: commands))
    }
  }

  /// The report of the run so far, with on-demand steps ensured after the launch; `nil`
  /// before a run took the control.
  var report: LaunchReport? { state.withLock(\.run)?.currentReport() }

  /// The signals sent so far.
  var sentSignals: [String] { state.withLock(\.signals) }
}

/// What the app tells a run through its ``LaunchControl``.
enum ControlCommand: Sendable {
  case pause, cancel, finish, hold, release
  case resume(pausedFor: Duration)
  case signal(String)
  /// Run on-demand step `step`, and hand its result to `waiter`, if any.
  case activate(String, waiter: EnsureWaiter?)
}

/// A caller of ``LaunchControl/ensure(_:as:)`` waiting for a step's result: resumed once,
/// by the run with the result or by the caller's cancellation, whichever comes first (the
/// run may still hold it when the caller was cancelled).
final class EnsureWaiter: Sendable {
  private enum State {
    case notWaiting
    case waiting(CheckedContinuation<(any Sendable)?, any Error>)
    case resumed
  }

  private let state = Locked(State.notWaiting)

  /// Starts waiting on `continuation`; `false`, with `continuation` resumed, when the caller
  /// was cancelled before.
  func wait(_ continuation: CheckedContinuation<(any Sendable)?, any Error>) -> Bool {
    let isResumed = state.withLock { state in
      if case .resumed = state { return true }
      state = .waiting(continuation)
      return false
    }
    if isResumed { continuation.resume(throwing: CancellationError()) }
    return !isResumed
  }

  /// Hands the caller `result`, unless it heard already.
  func resume(with result: Result<(any Sendable)?, any Error>) {
    let continuation = state.withLock { state -> CheckedContinuation<(any Sendable)?, any Error>? in
      defer { state = .resumed }
      if case .waiting(let continuation) = state { return continuation }
      return nil
    }
    continuation?.resume(with: result)
  }

  /// Throws `error` to the caller, unless it heard already.
  func resume(throwing error: any Error) {
    resume(with: .failure(error))
  }
}

/// A run a ``LaunchControl`` drives.
protocol ControlledRun: Sendable {
  func control(_ command: ControlCommand)
  func currentReport() -> LaunchReport
  /// Why `step` cannot be ensured in this run whatever happens (no such step, or one that is
  /// not on demand); `nil` when it can.
  func refusal(ofEnsuring step: String) -> LaunchFailure?
  /// Whether the launch has ended (its on-demand steps may still run).
  var hasEnded: Bool { get }
}
