/// The launch's scheduling rules as a pure state machine, free of tasks and clocks.
///
/// The engine feeds it what happened (an attempt finished, time passed, the run was cancelled)
/// with the time since the launch started, then carries out the actions that produced (start
/// an attempt, cancel one) and publishes the events. Every rule of the execution semantics
/// lives here, so each can be tested by feeding explicit times, without concurrency.
struct LaunchScheduler {
  /// Something the engine must do.
  enum Action: Equatable {
    /// Run an attempt of a step.
    case start(Attempt)
    /// Cancel a running attempt's task; its result, if it ever comes, is ignored.
    case cancel(Attempt)
    /// The attempt did not stop within its grace period and was let go of, its code still
    /// running: a later launch of the session must not start its step beside it.
    case abandon(Attempt, AbandonedAttempt)
    /// The attempt of this token, abandoned before, has ended at last.
    case abandonedEnded(token: Int)
  }

  /// An attempt an earlier launch of the session abandoned that still runs: its step, the
  /// number the session's record gave it, and which attempt it is.
  typealias EarlierAttempt = (step: Int, id: Int, attempt: AbandonedAttempt)

  /// An attempt the launch let go of while its code still ran (it ignored its cancellation
  /// for the grace period): its step's next attempt, in this launch or a later one of the
  /// session, waits for it to end.
  struct AbandonedAttempt: Equatable, Sendable {
    /// Why it was let go of.
    enum Cause: Equatable, Sendable {
      /// After its timeout.
      case timedOut
      /// At the launch's end, as the launch ended: `was cancelled`,
      /// `was routed to 'login' by 'gate'`.
      case launchEnded(String)
    }

    /// Its attempt number.
    let number: Int
    let cause: Cause
    /// Whether an earlier launch of the session abandoned it.
    var isEarlier = false

    /// `attempt 1, abandoned after it timed out`;
    /// `its attempt 1 of an earlier launch, abandoned when that launch was cancelled`.
    var description: String {
      let attempt = isEarlier ? "its attempt \(number) of an earlier launch" : "attempt \(number)"
      switch cause {
      case .timedOut: return "\(attempt), abandoned after it timed out"
      case .launchEnded(let how):
        return "\(attempt), abandoned when \(isEarlier ? "that" : "the") launch \(how)"
      }
    }
  }

  /// One attempt of one step, identified by a token unique within the launch.
  struct Attempt: Equatable {
    let token: Int
    let step: Int
    let number: Int
    let isFallback: Bool
    /// Whether it refreshes an output served from the cache, at background priority.
    var isRefresh = false
    /// The priority it runs at: the step's effective one, or higher once an on-demand step
    /// that waits for it was ensured.
    var priority = StepPriority.normal
  }

  /// How an attempt's code ended.
  enum AttemptResult: Equatable {
    case succeeded
    case failed(String)
    case routed(LaunchRoute)
  }

  /// Why the launch ended before running every step.
  enum Ending: Equatable {
    case aborted(step: Int)
    case routed(LaunchRoute, step: Int)
    case cancelled
  }

  /// When one attempt was queued for a slot, started, began running its code (for a
  /// main-isolated step, after waiting for the main thread) and ended.
  struct AttemptTimes: Equatable {
    var queued: Duration
    var start: Duration
    var end: Duration?
    var began: Duration?
  }

  /// What is known about a step so far; it becomes the step's line in the report.
  struct Record: Equatable {
    var state: StepState?
    var start: Duration?
    var end: Duration?
    /// When its `dependsOn` and `after` steps had all ended.
    var ready: Duration?
    /// When it last entered the queue for a slot.
    var queued: Duration?
    /// Every attempt's times, kept only once it makes a second or a main-isolated attempt
    /// tells when its code began: a step that runs once has them in `queued`, `start` and
    /// `end`, so the hot path writes no array.
    var attemptLog: [AttemptTimes] = []
    var attempts = 0
    var usedFallback = false
    var error: String?
    var notes: [String] = []
    /// When its cached output was served; its attempts are then the refresh's.
    var servedAt: Duration?
    /// How the refresh of a served output ended.
    var refreshState: StepState?
    /// Whether its output was taken from an earlier run of the launch (a retry) instead of
    /// running it again.
    var reused = false
    /// When its first attempt, due, began waiting for an attempt of an earlier launch that
    /// was abandoned and still ran; `nil` when it did not wait.
    var waitedForEarlierAttempt: Duration?
  }

  private enum Phase {
    case waiting, delayed, ready, running, backingOff, cancelling, done
    /// An on-demand step nobody has asked for: not part of the launch until activated.
    case dormant
    /// Its timed-out attempt still holds its slot; the next attempt waits for it to end, and
    /// for its backoff, due at `retryTimes[step]` (counted from the timeout, as the event that
    /// announced it said).
    case waitingForTimedOutAttempt
    /// Due to start, but an earlier attempt of it still runs (abandoned, in this launch or an
    /// earlier one of the session, or timed out and still stopping): it waits for that to end,
    /// holding no slot, for up to its timeout.
    case waitingForPreviousAttempt
  }

  /// Which abandoned attempt: one of this launch's, by its token, or one of an earlier
  /// launch's, by the number the session gave it.
  private enum AbandonedKey: Equatable {
    case token(Int)
    case earlier(Int)
  }

  private struct ReadyEntry: Comparable {
    /// Whether it is a cached step's refresh: the last to get a slot, after `background` work.
    let isRefresh: Bool
    let priority: StepPriority
    let remainingPath: Duration
    let step: Int

    /// Steps before refreshes, then higher priority first, then the longer remaining path,
    /// then manifest order.
    static func < (lhs: Self, rhs: Self) -> Bool {
      if lhs.isRefresh != rhs.isRefresh { return rhs.isRefresh }
      if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
      if lhs.remainingPath != rhs.remainingPath { return lhs.remainingPath > rhs.remainingPath }
      return lhs.step < rhs.step
    }
  }

  private struct Deadline: Comparable {
    enum Kind: Equatable {
      case timeout(token: Int)
      case grace(token: Int)
      case delayElapsed(step: Int)
      case backoffElapsed(step: Int)
      /// The step's timeout ran out while it waited for an earlier attempt of it to end
      /// (which wait: the one that began a timeout before the deadline's time). One `Int`,
      /// as every kind: each deadline on the heap is as small as a timeout's.
      case previousAttemptWaitElapsed(step: Int)
    }
    let time: Duration
    let sequence: Int
    let kind: Kind

    static func < (lhs: Self, rhs: Self) -> Bool {
      (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence)
    }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.sequence == rhs.sequence }
  }

  let plan: LaunchPlan
  /// Whether events are kept; without a listener they would only be thrown away.
  let recordsEvents: Bool
  private let limit: Int
  private let gracePeriod: Duration

  private(set) var records: [Record]
  private(set) var milestoneTimes: [Duration?]
  private(set) var ending: Ending?
  private(set) var isFinished = false
  /// Whether the launch's ending holds steps back: from the moment it was aborted, routed or
  /// cancelled until it is over. Once it is, an on-demand step the app ensures runs as after
  /// a launch that succeeded (a login screen's step after a route).
  private var isEnding: Bool { ending != nil && !isFinished }
  /// Whether the app paused the launch: no attempt starts until it resumes.
  private(set) var isPaused = false
  /// Holds on the launch's end: while one is held, the launch does not finish even with
  /// every step ended (a rehearsal that will ensure a step later).
  private var holds = 0
  /// When each of the plan's signals arrived, if it has.
  private(set) var signalTimes: [Duration?]
  /// Whether the app said no more signals will come: a step still waiting for one is
  /// skipped once nothing else holds it.
  private var signalsClosed = false
  /// The signals each step still waits for; empty (not allocated) when no step waits for
  /// one, as in most launches.
  private var unmetSignals: [Int] = []
  /// The steps waiting for each signal.
  private var signalWaiters: [[Int]]
  /// The names the app sent that the manifest does not declare, each noted once.
  private var undeclaredSignals: Set<String> = []
  /// On-demand steps that ended since the last ``takeEndedOnDemandSteps()``: whoever
  /// ensured them is waiting.
  private var endedOnDemand: [Int] = []
  /// Set while a failure that ends the launch is applied: neither the step nor the dependents
  /// it skips reach a milestone, so the app shows the failure, never content it let through.
  private var isAborting = false
  /// The steps the launch's context kept out (`when`, `once`), those waiting for a signal
  /// the app said would not come (``closeSignals(at:)``: consent declined, say), and the
  /// dependents skipped because of them: skipped by design, they do not degrade the launch.
  /// Empty (not allocated) for a launch that skips none.
  private var skippedByDesign: [Bool] = []

  private var phase: [Phase]
  private var unmetHard: [Int]
  private var unmetOrder: [Int]
  private var onFallback: [Bool]
  private var milestoneRemaining: [Int]
  private var ready = BinaryHeap<ReadyEntry>()
  private var deadlines = BinaryHeap<Deadline>()
  private var deadlineSequence = 0
  /// The attempt of each step whose result still matters, if any.
  private var liveAttempts: [Attempt?]
  /// Each step's attempt that timed out but has not ended yet, by step: its result no longer
  /// matters, but it keeps its concurrency slot until it ends or its grace period runs out.
  /// A table, not an array of every step: empty (never allocated) in most launches, where an
  /// array was 40 bytes a step made and zeroed on every launch.
  private var timedOutAttempts: [Int: Attempt] = [:]
  private var timedOutCount = 0
  /// The attempts of each step abandoned (by this launch, or by an earlier one of the
  /// session) whose code still runs, by step: its next attempt waits for them. Empty (never
  /// allocated) in a launch that has none.
  private var abandoned: [Int: [(key: AbandonedKey, attempt: AbandonedAttempt)]] = [:]
  /// How many of this launch's own attempts are abandoned and still run.
  private(set) var abandonedRunning = 0
  /// The earlier launches' abandoned attempts said to have ended before the launch started.
  private var earlierEnded: Set<Int> = []
  /// When each step waiting for an earlier attempt of it began to wait.
  private var previousAttemptWaits: [Int: Duration] = [:]
  /// When each step waiting for its timed-out attempt to end (`waitingForTimedOutAttempt`)
  /// is due to try again. Empty in most launches, as ``timedOutAttempts``.
  private var retryTimes: [Int: Duration] = [:]
  /// Each step's priority once an ensured on-demand step raised any (``lendPriority(of:)``);
  /// made on the first raise, `nil` until then: most launches ensure nothing.
  private var raisedPriorities: [StepPriority]?
  /// The step of each token handed out; tokens count up from 0.
  private var tokenSteps: [Int] = []
  private var running = 0
  private var unfinished: Int
  private var finishQueue: [(step: Int, state: StepState, error: String?)] = []
  private var actions: [Action] = []
  private var events: [LaunchEvent] = []

  /// A scheduler for `plan`; `maxConcurrency` of `nil` means no limit. Attempts still running
  /// when the launch ends get `gracePeriod` to stop before they are abandoned.
  init(plan: LaunchPlan, maxConcurrency: Int?, gracePeriod: Duration, recordsEvents: Bool = true) {
    self.plan = plan
    self.recordsEvents = recordsEvents
    self.limit = max(1, maxConcurrency ?? .max)
    self.gracePeriod = gracePeriod
    let count = plan.steps.count
    records = Array(repeating: Record(), count: count)
    milestoneTimes = Array(repeating: nil, count: plan.milestones.count)
    phase = Array(repeating: .waiting, count: count)
    unmetHard = []
    unmetOrder = []
    unmetHard.reserveCapacity(count)
    unmetOrder.reserveCapacity(count)
    // By index: iterating the steps would copy each one, a retain per field.
    for step in plan.steps.indices {
      unmetHard.append(plan.steps[step].dependsOn.count)
      unmetOrder.append(
        plan.steps[step].after.count + (plan.steps[step].deferUntil == nil ? 0 : 1))
    }
    onFallback = Array(repeating: false, count: count)
    milestoneRemaining = plan.milestones.map(\.steps.count)
    liveAttempts = Array(repeating: nil, count: count)
    unfinished = count
    signalTimes = Array(repeating: nil, count: plan.signals.count)
    signalWaiters = Array(repeating: [], count: plan.signals.count)
    for step in plan.steps.indices {
      if plan.steps[step].trigger == .onDemand {
        phase[step] = .dormant
        unfinished -= 1
      }
      guard !plan.steps[step].waitFor.isEmpty else { continue }
      if unmetSignals.isEmpty { unmetSignals = Array(repeating: 0, count: count) }
      unmetSignals[step] = plan.steps[step].waitFor.count
      for signal in plan.steps[step].waitFor { signalWaiters[signal].append(step) }
    }
  }

  // MARK: Inputs

  /// Starts the launch at time `now` (normally zero), `served` steps' outputs coming from the
  /// cache: they count as done for their dependents and milestones at once, and run behind
  /// them at background priority to refresh their output.
  ///
  /// `reused` steps succeeded in an earlier run of the launch (a retry keeps their outputs):
  /// they are done at once, and run no more. Signals the app sent before the start are
  /// `signalled`.
  ///
  /// `skipped` steps are kept out by the launch's context: skipped at once with their reason.
  ///
  /// `earlier` are the attempts earlier launches of the session abandoned that still run,
  /// each with its step and the number the session gave it: a step does not start beside
  /// one (``earlierAttemptEnded(_:of:at:)`` says when one ends).
  mutating func start(
    at now: Duration, served: [Int] = [], reused: [Int] = [], signalled: [Int] = [],
    skipped: [ContextSkip] = [], cancelled: Bool = false,
    earlier: [EarlierAttempt] = []
  ) {
    for (step, id, attempt) in earlier where !earlierEnded.contains(id) {
      abandoned[step, default: []].append((.earlier(id), attempt))
    }
    earlierEnded = []
    for milestone in plan.milestones where milestone.steps.isEmpty {
      reach(milestone.index, at: now)
    }
    for signal in signalled { receive(signal, at: now) }
    for step in reused {
      records[step].reused = true
      records[step].notes.append("reused: it succeeded in the launch's previous run")
      emit(.reused(step: plan.steps[step].id), at: now)
      if phase[step] != .dormant { unfinished -= 1 }
      phase[step] = .done
      records[step].state = .succeeded
      releaseDependents(of: step, state: .succeeded, at: now)
    }
    for skip in skipped { keepOut(skip, at: now) }
    for step in served {
      records[step].servedAt = now
      records[step].state = .cached
      emit(.cached(step: plan.steps[step].id), at: now)
    }
    // Dependents that are served too wait for this refresh: theirs must start from fresh input.
    for step in served { releaseDependents(of: step, state: .succeeded, at: now, .notServed) }
    if cancelled {
      // Cancelled before it began: what was reused, served or kept out stays so, and nothing
      // starts; the rest is skipped.
      end(.cancelled, at: now)
      settle(at: now)
      return
    }
    for step in plan.steps.indices {
      noteReadyIfPossible(step, at: now)
      becomeReadyIfPossible(step, at: now)
    }
    settle(at: now)
  }

  /// Skips a step the launch's context keeps out. One whose condition fails takes its hard
  /// dependents with it; a run-once step done before lets them run without its output. Either
  /// way `after` edges and milestones take it as finished.
  private mutating func keepOut(_ skip: ContextSkip, at now: Duration) {
    let step = skip.step
    guard phase[step] == .waiting else { return }
    markSkippedByDesign(step)
    guard skip.keepsDependents else {
      finish(step, .skipped, error: skip.reason)
      return
    }
    phase[step] = .done
    unfinished -= 1
    records[step].state = .skipped
    records[step].error = skip.reason
    emit(.skipped(step: plan.steps[step].id, reason: skip.reason), at: now)
    releaseDependents(of: step, state: .succeeded, at: now)
  }

  /// Hands every action produced since the last drain to `body`, oldest first, and forgets them.
  ///
  /// The buffer is kept for the next input: the engine's hot path allocates nothing here.
  mutating func drainActions(_ body: (Action) -> Void) {
    for action in actions { body(action) }
    // One by one: `removeAll(keepingCapacity:)` destroys through the run time's generic
    // witness, on every input.
    while !actions.isEmpty { actions.removeLast() }
  }

  /// Every action produced since the last drain, oldest first; they are forgotten.
  mutating func takeActions() -> [Action] {
    var taken: [Action] = []
    drainActions { taken.append($0) }
    return taken
  }

  /// How many events ``takeEvents()`` would hand over.
  var pendingEventCount: Int { events.count }

  /// Every event since the last call, oldest first, handed over whole: the engine passes the
  /// array on to its listener without copying the events.
  ///
  /// The next events go to a new buffer with room for twice as many, at least 16: one made at
  /// the last burst's size grew again (a copy, an allocation) in about every other burst.
  mutating func takeEvents() -> [LaunchEvent] {
    guard !events.isEmpty else { return [] }
    var taken: [LaunchEvent] = []
    taken.reserveCapacity(Swift.max(16, 2 * events.count))
    swap(&taken, &events)
    return taken
  }

  /// The step an attempt token belongs to, while its result still matters.
  func step(forLiveToken token: Int) -> Int? {
    liveAttempt(token)?.step
  }

  private func liveAttempt(_ token: Int) -> Attempt? {
    guard tokenSteps.indices.contains(token), let attempt = liveAttempts[tokenSteps[token]],
      attempt.token == token
    else { return nil }
    return attempt
  }

  /// An attempt's code returned.
  mutating func attemptFinished(token: Int, result: AttemptResult, at now: Duration) {
    if timedOutCount > 0, releaseTimedOut(token, at: now) != nil {
      settle(at: now)
      return
    }
    guard let attempt = release(token) else {
      if abandonedRunning > 0 { abandonedAttemptEnded(token: token, at: now) }
      return
    }
    let step = attempt.step
    if phase[step] == .cancelling {
      finish(step, .cancelled, error: nil)
    } else {
      switch result {
      case .succeeded:
        records[step].usedFallback = attempt.isFallback
        finish(step, .succeeded, error: nil)
      case .routed(let route) where records[step].servedAt != nil:
        // The app went on with the cached output long ago; it cannot be routed away now.
        finish(
          step, .failed,
          error:
            "it ended on the route '\(route)', which a refresh cannot take once the cached output is shown"
        )
      case .routed(let route) where plan.steps[step].trigger == .onDemand:
        // As its failure, its route is the app's that ensured it, during the launch or after
        // it: the launch goes on (or stays as it ended). Not tried again: it answered.
        finish(
          step, .failed,
          error:
            "it ended on the route '\(route)', which is for the app that ensured it: an on-demand step does not route the launch"
        )
      case .routed(let route):
        // Ended before its success is applied: the launch ends on the route, so the routing
        // step reaches no milestone (the app never shows content it routed away from).
        finish(step, .succeeded, error: nil)
        end(.routed(route, step: step), at: now)
      case .failed(let message):
        attemptFailed(attempt, error: message, timedOut: false, at: now)
      }
    }
    settle(at: now)
  }

  /// An attempt this launch abandoned ended at last: its step's next attempt may start.
  private mutating func abandonedAttemptEnded(token: Int, at now: Duration) {
    guard tokenSteps.indices.contains(token) else { return }
    let step = tokenSteps[token]
    guard let index = abandoned[step]?.firstIndex(where: { $0.key == .token(token) }) else {
      return
    }
    abandoned[step]?.remove(at: index)
    abandonedRunning -= 1
    actions.append(.abandonedEnded(token: token))
    previousAttemptEnded(of: step, at: now)
    settle(at: now)
  }

  /// The attempt of `step` an earlier launch of the session abandoned, numbered `id` (as the
  /// launch's start was given it), ended at last.
  mutating func earlierAttemptEnded(_ id: Int, of step: Int, at now: Duration) {
    guard let index = abandoned[step]?.firstIndex(where: { $0.key == .earlier(id) }) else {
      // Told before the launch started: it starts without waiting for it.
      earlierEnded.insert(id)
      return
    }
    abandoned[step]?.remove(at: index)
    previousAttemptEnded(of: step, at: now)
    settle(at: now)
  }

  /// An earlier attempt of `step` ended: if the step waits for none any more, it is queued.
  private mutating func previousAttemptEnded(of step: Int, at now: Duration) {
    if abandoned[step]?.isEmpty == true { abandoned[step] = nil }
    guard phase[step] == .waitingForPreviousAttempt, !isEnding, !isHoldingBack(step) else {
      return
    }
    previousAttemptWaits[step] = nil
    enqueue(step, at: now)
  }

  /// A main-isolated attempt's code began running at `time`: since its start it waited for
  /// the main thread. Called before the attempt's result; kept for an attempt that timed out
  /// meanwhile, clamped to the attempt's end.
  mutating func attemptBegan(token: Int, at time: Duration) {
    guard tokenSteps.indices.contains(token) else { return }
    let step = tokenSteps[token]
    let live = liveAttempts[step]
    guard let attempt = live?.token == token ? live : timedOutAttempts[step],
      attempt.token == token, let start = records[step].start
    else { return }
    if records[step].attemptLog.isEmpty {
      guard time > start else { return }
      // Its first attempt, not logged yet: the log starts here, and the attempt's end (on
      // its result, or already at its timeout) is written to it as for any logged attempt.
      records[step].attemptLog.append(
        AttemptTimes(queued: records[step].queued ?? start, start: start, end: records[step].end))
    }
    let log = attempt.number - 1
    guard records[step].attemptLog.indices.contains(log) else { return }
    records[step].attemptLog[log].began = min(time, records[step].attemptLog[log].end ?? time)
  }

  /// A running step reported progress or logged a line.
  mutating func stepReported(token: Int, message: StepMessage, at now: Duration) {
    guard let step = liveAttempt(token)?.step else { return }
    switch message {
    case .progress(let fraction, let text):
      emit(.progress(step: plan.steps[step].id, fraction: fraction, message: text), at: now)
    case .log(let text):
      // A refresh's lines follow the note that the output was served: marked as the refresh's.
      note(records[step].servedAt == nil ? text : "refresh: " + text, for: step, at: now)
    }
  }

  /// Adds `text` to the step's notes, and sends it as a log line.
  mutating func note(_ text: String, for step: Int, at now: Duration) {
    records[step].notes.append(text)
    emit(.log(step: plan.steps[step].id, message: text), at: now)
  }

  /// Time has reached `now`: timeouts, delays, backoffs and grace periods that are due fire.
  mutating func advance(to now: Duration) {
    while let deadline = deadlines.min, deadline.time <= now {
      _ = deadlines.popMin()
      fire(deadline, at: now)
    }
    settle(at: now)
  }

  /// The app paused the launch: attempts running go on, but none starts until ``resume(at:)``,
  /// after the launch too (an on-demand step ensured while the app is away waits for it, its
  /// clock stopped meanwhile).
  mutating func pause(at now: Duration) {
    guard !isPaused else { return }
    isPaused = true
    if !isFinished { emit(.paused, at: now) }
  }

  /// The app resumed the launch after `pausedFor` of real time.
  mutating func resume(at now: Duration, pausedFor: Duration) {
    guard isPaused else { return }
    isPaused = false
    if !isFinished { emit(.resumed(pausedFor: pausedFor), at: now) }
    settle(at: now)
  }

  /// Keeps the launch from finishing until ``release(at:)``, unless it is cancelled, aborted
  /// or routed first.
  mutating func hold() {
    holds += 1
  }

  /// Lets go of a ``hold()``.
  mutating func release(at now: Duration) {
    holds = max(0, holds - 1)
    settle(at: now)
  }

  /// The app sent signal number `signal` of the plan.
  mutating func signal(_ signal: Int, at now: Duration) {
    receive(signal, at: now)
    settle(at: now)
  }

  /// The app sent `name`, which the manifest does not declare (`signals`): nothing hears it,
  /// and a step waiting for the signal the app meant would wait on. The first time, each step
  /// that waits for the declared signal closest to it (a typo: `consnet`), else each step
  /// that waits for any signal, gets a note saying so, with its log event. A manifest with no
  /// step waiting for a signal has nothing the app could have meant: no note.
  mutating func undeclaredSignal(_ name: String, at now: Duration) {
    guard undeclaredSignals.insert(name).inserted else { return }
    let meant = Suggestions.closest(to: name, in: plan.signals)
    var steps = meant.flatMap { plan.signals.firstIndex(of: $0) }.map { signalWaiters[$0] } ?? []
    if steps.isEmpty { steps = plan.steps.indices.filter { !plan.steps[$0].waitFor.isEmpty } }
    guard !steps.isEmpty else { return }
    let sent = "the app sent the signal '\(name)', which the manifest does not declare"
    let declared = plan.signals.map { "'\($0)'" }.joined(separator: ", ")
    let note =
      meant.map { "\(sent), so it was ignored. Did you mean '\($0)'?" }
      ?? "\(sent) (its signals: \(declared)), so it was ignored"
    for step in steps { self.note(note, for: step, at: now) }
  }

  private mutating func receive(_ signal: Int, at now: Duration) {
    // After `finish()` said none would come, the steps waiting for one were told it was not
    // sent: the report must not say it was.
    guard signalTimes[signal] == nil, !signalsClosed else { return }
    signalTimes[signal] = now
    emit(.signalled(name: plan.signals[signal]), at: now)
    for step in signalWaiters[signal] {
      unmetSignals[step] -= 1
      becomeReadyIfPossible(step, at: now)
    }
  }

  /// The app will send no more signals: steps waiting for one that never came are skipped
  /// once nothing else holds them.
  mutating func closeSignals(at now: Duration) {
    guard !signalsClosed else { return }
    signalsClosed = true
    for step in unmetSignals.indices where unmetSignals[step] > 0 {
      becomeReadyIfPossible(step, at: now)
    }
    drainFinishQueue(at: now)
    settle(at: now)
  }

  /// The app asked for the output of on-demand step `step`: it joins the launch (or runs after
  /// it), with its on-demand dependencies that have not run. A step that failed before runs
  /// again; one running or done already is left as it is.
  mutating func activate(_ step: Int, at now: Duration) {
    activateSteps(step, at: now)
    // First: a step skipped as it is ensured (a failed dependency) has ended, and lends none.
    drainFinishQueue(at: now)
    lendPriority(of: step)
    settle(at: now)
  }

  /// The priority `step` runs at now.
  private func priority(of step: Int) -> StepPriority {
    raisedPriorities?[step] ?? plan.steps[step].effectivePriority
  }

  /// Raises what ensured step `step` waits for, and what that waits for, to the priority of
  /// the most urgent step waiting for it, as the plan does for launch steps: a `critical`
  /// search ensured by a tap is not held up behind `background` work it needs. On-demand
  /// steps on the way lend their own priority too (the plan lends none of theirs); a step
  /// served from the cache is no wait (its refresh needs nothing raised), and a step that has
  /// ended, nothing. A running step is raised for a retry or fallback it may still need. A
  /// step ready already is queued again at the new priority; the lower entry is passed over.
  private mutating func lendPriority(of step: Int) {
    // A step that ended as it was ensured (a failed dependency) waits for nothing.
    guard phase[step] != .done else { return }
    var pending = [(step: step, priority: priority(of: step))]
    // The most each step was walked from: a step reached again at no more is passed over.
    var walked = [StepPriority?](repeating: nil, count: plan.steps.count)
    while let (waiting, lent) = pending.popLast() {
      if let before = walked[waiting], before >= lent { continue }
      walked[waiting] = lent
      for next in plan.steps[waiting].dependsOn + plan.steps[waiting].after {
        guard phase[next] != .done, records[next].servedAt == nil else { continue }
        let current = priority(of: next)
        // A launch step as urgent already has all it waits for as urgent too; an on-demand
        // one lends its own priority, which the plan did not.
        let isOnDemand = plan.steps[next].trigger == .onDemand
        guard current < lent || isOnDemand else { continue }
        if current < lent {
          if raisedPriorities == nil { raisedPriorities = plan.steps.map(\.effectivePriority) }
          raisedPriorities?[next] = lent
          if phase[next] == .ready {
            ready.insert(
              ReadyEntry(
                isRefresh: false, priority: lent, remainingPath: plan.steps[next].remainingPath,
                step: next))
          }
        }
        // What a running step waits for has ended.
        if phase[next] != .running, phase[next] != .cancelling {
          pending.append((next, max(current, lent)))
        }
      }
    }
  }

  private mutating func activateSteps(_ step: Int, at now: Duration) {
    guard plan.steps[step].trigger == .onDemand else { return }
    let runsAgain: Bool
    switch phase[step] {
    case .dormant:
      runsAgain = false
    case .done where records[step].state != .succeeded:
      // Ensured again after a failure: a fresh start, its earlier attempts kept in the count.
      let attempts = records[step].attempts
      records[step] = Record()
      records[step].attempts = attempts
      onFallback[step] = false
      runsAgain = true
    default:
      return
    }
    phase[step] = .waiting
    unfinished += 1
    if let ending, !isFinished {
      finish(
        step, .skipped,
        error: "the launch was ending (\(describe(ending))) when it was ensured")
      return
    }
    if runsAgain {
      // The steps `after` it wait for this run's end, as for the first's, which was counted:
      // without it, one would start beside this run, and one ensured later wait for ever.
      // (Its hard dependents were skipped, or never counted its failure.)
      for dependent in plan.steps[step].orderDependents {
        unmetOrder[dependent] += 1
        if phase[dependent] == .waiting || phase[dependent] == .dormant {
          records[dependent].ready = nil
        }
      }
    }
    for dependency in plan.steps[step].dependsOn + plan.steps[step].after {
      if plan.steps[dependency].trigger == .onDemand {
        activateSteps(dependency, at: now)
      } else if phase[dependency] == .done, plan.steps[step].dependsOn.contains(dependency),
        let state = records[dependency].state, state != .succeeded, state != .cached
      {
        finish(
          step, .skipped, error: "dependency '\(plan.steps[dependency].id)' \(Self.verb(state))")
        return
      }
    }
    noteReadyIfPossible(step, at: now)
    becomeReadyIfPossible(step, at: now)
  }

  /// Whether `step` has its final state.
  func isIdleStep(_ step: Int) -> Bool { phase[step] == .done }

  /// On-demand steps that ended since the last call, in the order they ended.
  mutating func takeEndedOnDemandSteps() -> [Int] {
    guard !endedOnDemand.isEmpty else { return [] }
    defer { endedOnDemand.removeAll() }
    return endedOnDemand
  }

  /// Whether every step activated so far has ended and every attempt has stopped: true after
  /// the launch, until an on-demand step is activated.
  var isIdle: Bool { unfinished == 0 && timedOutCount == 0 }

  private func describe(_ ending: Ending) -> String {
    switch ending {
    case .aborted(let step):
      "'\(plan.steps[step].id)' \(Self.verb(records[step].state ?? .failed))"
    case .routed(let route, _): "routed to '\(route)'"
    case .cancelled: "cancelled"
    }
  }

  private static func verb(_ state: StepState) -> String {
    switch state {
    case .failed: "failed"
    case .timedOut: "timed out"
    case .skipped: "was skipped"
    case .cancelled: "was cancelled"
    case .succeeded, .cached: "succeeded"
    }
  }

  /// The run was cancelled from outside.
  mutating func cancel(at now: Duration) {
    end(.cancelled, at: now)
    settle(at: now)
  }

  /// The earliest time at which ``advance(to:)`` has something to do.
  mutating func nextDeadline() -> Duration? {
    while let deadline = deadlines.min, isStale(deadline) {
      _ = deadlines.popMin()
    }
    return deadlines.min?.time
  }

  /// How the launch ended, once it has.
  var outcome: LaunchOutcome {
    switch ending {
    case .routed: .routed
    case .cancelled: .cancelled
    case .aborted: .failed
    case nil:
      // By index: a closure over the records would copy each one, a retain per field.
      // On-demand steps run for the app, not for the launch: theirs is ensure's outcome.
      records.indices.allSatisfy {
        records[$0].state == .succeeded || records[$0].state == .cached
          || plan.steps[$0].trigger == .onDemand
          || (!skippedByDesign.isEmpty && skippedByDesign[$0])
      } ? .succeeded : .degraded
    }
  }

  // MARK: Rules

  private mutating func settle(at now: Duration) {
    drainFinishQueue(at: now)
    dispatch(at: now)
    // The launch is over once every step has its state and every attempt it started has
    // ended or been abandoned: nothing it started outlives it unreported. A hold waits for
    // requests still to come, which a launch already cancelled, aborted or routed no longer
    // takes: an `--ensure` an hour away must not keep a Ctrl-C from ending it.
    if unfinished == 0, timedOutCount == 0, holds == 0 || ending != nil, !isFinished {
      isFinished = true
      emit(.finished(outcome: outcome), at: now)
    }
  }

  /// Records when the step's `dependsOn` and `after` steps have all ended: its deferral
  /// milestone, if any, is counted in `unmetOrder` too, so it is left out here. An on-demand
  /// step not ensured yet is not ready: it is once ensured, with its dependencies ended.
  private mutating func noteReadyIfPossible(_ step: Int, at now: Duration) {
    // The small counters first: most calls stop there, before touching the step's record or
    // its planned settings, which for a large plan are each a cache miss.
    guard unmetHard[step] == 0, records[step].ready == nil, phase[step] != .dormant else {
      return
    }
    let unmet = unmetOrder[step]
    if unmet == 0 {
      records[step].ready = now
    } else if unmet == 1, let milestone = plan.steps[step].deferUntil,
      milestoneTimes[milestone] == nil
    {
      records[step].ready = now
    }
  }

  private mutating func markSkippedByDesign(_ step: Int) {
    if skippedByDesign.isEmpty { skippedByDesign = Array(repeating: false, count: records.count) }
    skippedByDesign[step] = true
  }

  private mutating func becomeReadyIfPossible(_ step: Int, at now: Duration) {
    guard phase[step] == .waiting, unmetHard[step] == 0, unmetOrder[step] == 0, !isEnding else {
      return
    }
    if !unmetSignals.isEmpty, unmetSignals[step] > 0 {
      guard signalsClosed else { return }
      let missing = plan.steps[step].waitFor.first { signalTimes[$0] == nil } ?? 0
      markSkippedByDesign(step)
      finish(step, .skipped, error: "signal '\(plan.signals[missing])' was not sent")
      return
    }
    let delay = plan.steps[step].delay
    if delay > .zero {
      phase[step] = .delayed
      schedule(.delayElapsed(step: step), at: now + delay)
    } else {
      enqueue(step, at: now)
    }
  }

  private mutating func enqueue(_ step: Int, at now: Duration) {
    // Two attempts of a step never run at once: not even an attempt the launch let go of,
    // or an earlier launch did, and the next.
    if !abandoned.isEmpty || timedOutCount > 0, isHoldingBack(step) {
      return waitForPreviousAttempt(of: step, at: now)
    }
    phase[step] = .ready
    records[step].queued = now
    let isRefresh = records[step].servedAt != nil
    ready.insert(
      ReadyEntry(
        isRefresh: isRefresh,
        priority: isRefresh ? .background : priority(of: step),
        remainingPath: plan.steps[step].remainingPath, step: step))
  }

  /// Whether an earlier attempt of `step` that no longer counts still runs: one abandoned,
  /// here or in an earlier launch, or one that timed out and is still stopping.
  private func isHoldingBack(_ step: Int) -> Bool {
    abandoned[step]?.isEmpty == false || timedOutAttempts[step] != nil
  }

  /// Holds back `step`, due now, until its earlier attempts have ended, for up to its timeout;
  /// the step's notes, and a log event, say what it waits for.
  private mutating func waitForPreviousAttempt(of step: Int, at now: Duration) {
    phase[step] = .waitingForPreviousAttempt
    previousAttemptWaits[step] = now
    if records[step].attempts == 0 { records[step].waitedForEarlierAttempt = now }
    note(
      "waiting for \(previousAttempt(of: step)), to end: two attempts of a step never run at once",
      for: step, at: now)
    if let timeout = plan.steps[step].timeout {
      schedule(.previousAttemptWaitElapsed(step: step), at: now + timeout)
    }
  }

  /// The earlier attempt `step` waits for, in words: `attempt 1, abandoned after it timed out`.
  private func previousAttempt(of step: Int) -> String {
    if let first = abandoned[step]?.first { return first.attempt.description }
    let number = timedOutAttempts[step]?.number ?? records[step].attempts
    return "attempt \(number), which timed out and is still stopping"
  }

  private mutating func dispatch(at now: Duration) {
    while !isEnding, !isPaused, running < limit, let entry = ready.popMin() {
      guard phase[entry.step] == .ready else { continue }
      startAttempt(of: entry.step, at: now)
    }
  }

  private mutating func startAttempt(of step: Int, at now: Duration) {
    records[step].attempts += 1
    if records[step].start == nil { records[step].start = now }
    if records[step].attempts > 1 {
      records[step].attemptLog.append(AttemptTimes(queued: records[step].queued ?? now, start: now))
    }
    let attempt = Attempt(
      token: tokenSteps.count, step: step, number: records[step].attempts,
      isFallback: onFallback[step], isRefresh: records[step].servedAt != nil,
      priority: priority(of: step))
    tokenSteps.append(step)
    liveAttempts[step] = attempt
    running += 1
    phase[step] = .running
    if let timeout = plan.steps[step].timeout {
      schedule(.timeout(token: attempt.token), at: now + timeout)
    }
    emit(.started(step: plan.steps[step].id, attempt: attempt.number), at: now)
    actions.append(.start(attempt))
  }

  /// Forgets a live attempt, freeing its concurrency slot; `nil` if it was already forgotten.
  private mutating func release(_ token: Int) -> Attempt? {
    guard let attempt = liveAttempt(token) else { return nil }
    liveAttempts[attempt.step] = nil
    running -= 1
    return attempt
  }

  /// Records when the step's latest attempt stopped counting (it failed, timed out or the step
  /// ended), starting the log with the first attempt when a second is coming.
  private mutating func endLatestAttempt(of step: Int, at now: Duration) {
    let log = records[step].attemptLog.count
    if log == 0 {
      guard let start = records[step].start else { return }
      records[step].attemptLog.append(
        AttemptTimes(queued: records[step].queued ?? start, start: start, end: now))
    } else if records[step].attemptLog[log - 1].end == nil {
      records[step].attemptLog[log - 1].end = now
    }
  }

  private mutating func attemptFailed(
    _ attempt: Attempt, error: String, timedOut: Bool, at now: Duration
  ) {
    let step = attempt.step
    let planned = plan.steps[step]
    let id = planned.id
    if !attempt.isFallback, attempt.number < planned.retry.attempts {
      let delay = planned.retry.delay(before: attempt.number + 1)
      emit(
        .retrying(
          step: id, nextAttempt: attempt.number + 1, error: error, delay: delay, fallback: false),
        at: now)
      // Kept for the report, should the launch end before the next attempt.
      records[step].error = error
      endLatestAttempt(of: step, at: now)
      retry(step, after: delay, at: now)
    } else if !attempt.isFallback, planned.hasFallback, records[step].servedAt == nil {
      // A refresh has no fallback: the cached output is better than a fallback's.
      onFallback[step] = true
      emit(
        .retrying(
          step: id, nextAttempt: attempt.number + 1, error: error, delay: .zero, fallback: true),
        at: now)
      records[step].error = error
      endLatestAttempt(of: step, at: now)
      retry(step, after: .zero, at: now)
    } else {
      failForGood(step, error: error, timedOut: timedOut, at: now)
    }
  }

  /// Ends `step` failed (or timed out) with no attempt to come, ending the launch when the
  /// step aborts it.
  private mutating func failForGood(
    _ step: Int, error: String, timedOut: Bool, at now: Duration
  ) {
    finish(step, timedOut ? .timedOut : .failed, error: error)
    let planned = plan.steps[step]
    if planned.onFailure == .abort, records[step].servedAt == nil, planned.trigger == .launch {
      isAborting = true
      drainFinishQueue(at: now)
      end(.aborted(step: step), at: now)
    }
  }

  /// Starts the step's next attempt after `delay`, once a timed-out attempt of it, if any, has
  /// ended: two attempts of one step never run at once.
  private mutating func retry(_ step: Int, after delay: Duration, at now: Duration) {
    if timedOutAttempts[step] != nil {
      phase[step] = .waitingForTimedOutAttempt
      retryTimes[step] = now + delay
    } else if delay > .zero {
      phase[step] = .backingOff
      schedule(.backoffElapsed(step: step), at: now + delay)
    } else {
      enqueue(step, at: now)
    }
  }

  /// Frees the slot of a timed-out attempt that ended (or was abandoned), and lets its step's
  /// next attempt go ahead; `nil` if `token` is no such attempt.
  private mutating func releaseTimedOut(_ token: Int, at now: Duration) -> Attempt? {
    guard tokenSteps.indices.contains(token), let attempt = timedOutAttempts[tokenSteps[token]],
      attempt.token == token
    else { return nil }
    timedOutAttempts[attempt.step] = nil
    timedOutCount -= 1
    running -= 1
    if phase[attempt.step] == .waitingForTimedOutAttempt, !isEnding {
      retry(
        attempt.step, after: max(.zero, retryTimes[attempt.step, default: .zero] - now), at: now)
    } else {
      previousAttemptEnded(of: attempt.step, at: now)
    }
    return attempt
  }

  /// Lets go of `attempt`, past its grace period and still running: its step's next attempt
  /// waits for it all the same, and the session hears of it for its later launches.
  private mutating func abandon(_ attempt: Attempt, _ cause: AbandonedAttempt.Cause) {
    let abandonedAttempt = AbandonedAttempt(number: attempt.number, cause: cause)
    abandoned[attempt.step, default: []].append((.token(attempt.token), abandonedAttempt))
    abandonedRunning += 1
    actions.append(.abandon(attempt, abandonedAttempt))
  }

  private mutating func fire(_ deadline: Deadline, at now: Duration) {
    guard !isStale(deadline) else { return }
    switch deadline.kind {
    case .timeout(let token):
      guard let attempt = liveAttempt(token) else { return }
      // Its result no longer counts, but it keeps its slot until it really ends: a plugin
      // that ignores cancellation must not let the launch exceed its concurrency limit.
      liveAttempts[attempt.step] = nil
      timedOutAttempts[attempt.step] = attempt
      timedOutCount += 1
      schedule(.grace(token: token), at: now + gracePeriod)
      actions.append(.cancel(attempt))
      if phase[attempt.step] == .cancelling {
        finish(attempt.step, .cancelled, error: nil)
      } else {
        let timeout = plan.steps[attempt.step].timeout ?? .zero
        attemptFailed(
          attempt, error: "timed out after \(DurationText.format(timeout))", timedOut: true, at: now
        )
      }
    case .grace(let token):
      if let attempt = timedOutAttempts[tokenSteps[token]], attempt.token == token {
        records[attempt.step].notes.append(
          "attempt \(attempt.number) did not stop within \(DurationText.format(gracePeriod)) of its timeout and was abandoned"
        )
        // Before its slot is freed, which lets the step's next attempt go ahead: that one
        // waits for it still.
        abandon(attempt, .timedOut)
        _ = releaseTimedOut(token, at: now)
        return
      }
      guard let attempt = release(token) else { return }
      records[attempt.step].notes.append(
        "attempt \(attempt.number) did not stop within \(DurationText.format(gracePeriod)) of the launch's end and was abandoned"
      )
      abandon(attempt, .launchEnded(ending.map(describeEnd) ?? "ended"))
      finish(attempt.step, .cancelled, error: nil)
    case .delayElapsed(let step), .backoffElapsed(let step):
      enqueue(step, at: now)
    case .previousAttemptWaitElapsed(let step):
      let timeout = plan.steps[step].timeout ?? .zero
      previousAttemptWaits[step] = nil
      // Its retries and fallback would run beside it too: the step fails as it is.
      failForGood(
        step,
        error:
          "\(previousAttempt(of: step)), was still running after \(DurationText.format(timeout)) (the step's timeout): the step did not run again beside it",
        timedOut: false, at: now)
    }
    drainFinishQueue(at: now)
  }

  private func isStale(_ deadline: Deadline) -> Bool {
    switch deadline.kind {
    case .timeout(let token): liveAttempt(token) == nil
    case .grace(let token):
      liveAttempt(token) == nil && timedOutAttempts[tokenSteps[token]]?.token != token
    case .delayElapsed(let step): phase[step] != .delayed
    case .backoffElapsed(let step): phase[step] != .backingOff
    case .previousAttemptWaitElapsed(let step):
      phase[step] != .waitingForPreviousAttempt
        || previousAttemptWaits[step].map { $0 + (plan.steps[step].timeout ?? .zero) }
          != deadline.time
    }
  }

  private mutating func schedule(_ kind: Deadline.Kind, at time: Duration) {
    deadlines.insert(Deadline(time: time, sequence: deadlineSequence, kind: kind))
    deadlineSequence += 1
  }

  /// Queues a step's final state; ``drainFinishQueue(at:)`` applies it and its consequences.
  /// A queue rather than recursion, so skips can cascade down a 100,000-step chain.
  private mutating func finish(_ step: Int, _ state: StepState, error: String?) {
    finishQueue.append((step, state, error))
  }

  private mutating func drainFinishQueue(at now: Duration) {
    var head = 0
    while head < finishQueue.count {
      let (step, state, error) = finishQueue[head]
      head += 1
      guard phase[step] != .done, phase[step] != .dormant else { continue }
      apply(step, state, error: error, at: now)
    }
    while !finishQueue.isEmpty { finishQueue.removeLast() }
  }

  private mutating func apply(_ step: Int, _ state: StepState, error: String?, at now: Duration) {
    // Fields are read one by one: copying the whole planned step costs a retain per field,
    // and this runs for every step.
    let id = plan.steps[step].id
    phase[step] = .done
    unfinished -= 1
    records[step].error = error
    if records[step].start != nil {
      records[step].end = now
      if !records[step].attemptLog.isEmpty { endLatestAttempt(of: step, at: now) }
    }
    if records[step].servedAt != nil {
      endRefresh(of: step, state, error: error, at: now)
      return
    }
    records[step].state = state
    if plan.steps[step].trigger == .onDemand { endedOnDemand.append(step) }
    switch state {
    case .succeeded, .cached:
      emit(.succeeded(step: id, usedFallback: records[step].usedFallback), at: now)
    case .failed: emit(.failed(step: id, error: error ?? "failed"), at: now)
    case .timedOut: emit(.timedOut(step: id, timeout: plan.steps[step].timeout ?? .zero), at: now)
    case .skipped: emit(.skipped(step: id, reason: error ?? "skipped"), at: now)
    case .cancelled: emit(.cancelled(step: id), at: now)
    }
    releaseDependents(of: step, state: state, at: now)
  }

  /// Which of a step's dependents a release concerns.
  private enum Dependents {
    case all
    /// All but served ones, and the milestones: a step served from the cache.
    case notServed
    /// Only served ones: the end of a served step's refresh.
    case served
  }

  /// What a step's end means for the steps and milestones waiting for it.
  private mutating func releaseDependents(
    of step: Int, state: StepState, at now: Duration, _ which: Dependents = .all
  ) {
    guard !isEnding else { return }
    let id = plan.steps[step].id
    for dependent in plan.steps[step].hardDependents {
      if which != .all, (records[dependent].servedAt != nil) != (which == .served) { continue }
      if state == .succeeded {
        unmetHard[dependent] -= 1
        noteReadyIfPossible(dependent, at: now)
        becomeReadyIfPossible(dependent, at: now)
      } else if phase[dependent] != .done, phase[dependent] != .dormant {
        if !skippedByDesign.isEmpty, skippedByDesign[step] { skippedByDesign[dependent] = true }
        finish(dependent, .skipped, error: "dependency '\(id)' \(Self.verb(state))")
      }
    }
    for dependent in plan.steps[step].orderDependents {
      if which != .all, (records[dependent].servedAt != nil) != (which == .served) { continue }
      unmetOrder[dependent] -= 1
      noteReadyIfPossible(dependent, at: now)
      becomeReadyIfPossible(dependent, at: now)
    }
    guard which != .served, !isAborting else { return }
    for milestone in plan.steps[step].milestones {
      milestoneRemaining[milestone] -= 1
      if milestoneRemaining[milestone] == 0 { reach(milestone, at: now) }
    }
  }

  /// Records how the refresh of a served output ended; its dependents went on long ago.
  private mutating func endRefresh(
    of step: Int, _ state: StepState, error: String?, at now: Duration
  ) {
    records[step].refreshState = state
    releaseDependents(of: step, state: state, at: now, .served)
    let id = plan.steps[step].id
    if state == .succeeded {
      emit(.refreshed(step: id), at: now)
      return
    }
    let reason =
      switch state {
      case .timedOut: "timed out after \(DurationText.format(plan.steps[step].timeout ?? .zero))"
      case .cancelled: "cancelled when the launch ended"
      default: error ?? "failed"
      }
    records[step].error = reason
    emit(.refreshFailed(step: id, error: reason), at: now)
    records[step].notes.append(
      "refresh \(state == .skipped ? "skipped" : "failed"): \(reason); the cached output stays")
  }

  private mutating func reach(_ milestone: Int, at now: Duration) {
    milestoneTimes[milestone] = now
    emit(.milestone(name: plan.milestones[milestone].name), at: now)
    for step in plan.milestones[milestone].deferredSteps {
      unmetOrder[step] -= 1
      becomeReadyIfPossible(step, at: now)
    }
  }

  /// How the launch ended, after "the launch": `was cancelled`,
  /// `was routed to 'login' by 'gate'`, `was aborted because 'store' failed`.
  private func describeEnd(_ reason: Ending) -> String {
    switch reason {
    case .aborted(let step):
      "was aborted because '\(plan.steps[step].id)' \(Self.verb(records[step].state ?? .failed))"
    case .routed(let route, let step): "was routed to '\(route)' by '\(plan.steps[step].id)'"
    case .cancelled: "was cancelled"
    }
  }

  private mutating func end(_ reason: Ending, at now: Duration) {
    guard ending == nil else { return }
    ending = reason
    if case .routed(let route, let step) = reason {
      emit(.routed(route: route, step: plan.steps[step].id), at: now)
    }
    let skipReason = "the launch " + describeEnd(reason)
    for step in plan.steps.indices {
      switch phase[step] {
      case .waiting, .delayed:
        finish(step, .skipped, error: skipReason)
      case .ready where records[step].attempts == 0,
        .waitingForPreviousAttempt where records[step].attempts == 0:
        finish(step, .skipped, error: skipReason)
      case .ready, .backingOff, .waitingForTimedOutAttempt, .waitingForPreviousAttempt:
        // Not running, so not cancelled: its attempts so far failed and no more will come.
        let attempts = records[step].attempts
        let next = onFallback[step] ? "its fallback" : "attempt \(attempts + 1)"
        finish(
          step, .failed,
          error:
            "attempt \(attempts) failed (\(records[step].error ?? "no reason given")) and \(skipReason) before \(next)"
        )
      case .running:
        phase[step] = .cancelling
        if let attempt = liveAttempts[step] {
          actions.append(.cancel(attempt))
          schedule(.grace(token: attempt.token), at: now + gracePeriod)
        }
      case .cancelling, .done, .dormant:
        break
      }
    }
    drainFinishQueue(at: now)
  }

  private mutating func emit(_ kind: LaunchEvent.Kind, at now: Duration) {
    if recordsEvents { events.append(LaunchEvent(time: now, kind: kind)) }
  }
}

/// A step the launch's context keeps out, and why.
struct ContextSkip: Equatable, Sendable {
  let step: Int
  /// The report's reason: `condition: reason is notification`, `done before (version 2.3.0)`.
  let reason: String
  /// Whether its hard dependents still run (a run-once step done before), without its output.
  let keepsDependents: Bool
}
