import Foundation

/// What happened in a launch: its outcome, each step's times and state, milestones and the
/// critical path. Times are durations since the launch started.
public struct LaunchReport: Sendable, Equatable {
  /// One step's line in the report.
  public struct Step: Sendable, Equatable {
    /// The step's id.
    public var id: String
    /// Its plugin kind.
    public var plugin: String
    /// How it ended.
    public var state: StepState
    /// When its first attempt started; `nil` if it never started.
    public var start: Duration?
    /// When it ended; `nil` if it never started, or still runs: an on-demand step ensured
    /// after the launch is in ``LaunchSession/report`` from its start, with no `end` (and the
    /// state `skipped`) until it ends.
    public var end: Duration?
    /// Attempts made, the fallback included.
    public var attempts: Int
    /// Whether its fallback produced its result.
    public var usedFallback: Bool
    /// Why it failed, timed out or was skipped.
    public var error: String?
    /// What the step logged, in order: what it did, what it recovered from.
    public var notes: [String]
    /// Whether its output was taken from the launch's previous run (a retry) instead of
    /// running it again.
    public var reused = false
    /// When its `dependsOn` and `after` steps had all ended; `nil` if they never did or the
    /// report predates wait reasons.
    package var ready: Duration?
    /// What it waited for between becoming ready and its last attempt's code beginning, in
    /// time order.
    package var waits: [Wait]
    /// Its priority in the manifest; `nil` in reports that predate it.
    package var priority: StepPriority?
    /// The milestone it was deferred until (`deferUntil`); `nil` when it was not, or the
    /// report predates it.
    package var deferUntil: String?
    /// How running the step again behind its cached output went; `nil` unless it was
    /// `cached`.
    public var refresh: Refresh? {
      get {
        if case .some(let refresh) = refreshStorage { return refresh }
        return nil
      }
      set { refreshStorage = newValue.map(RefreshStorage.some) ?? .none }
    }
    /// Boxed: only cached steps have one, and held in place it would add its size to every
    /// line of every report (a 10,000-step launch builds 10,000 lines).
    private var refreshStorage = RefreshStorage.none
    /// Each attempt's own work, in order.
    package var work: [Work] {
      get {
        guard attemptWork.isEmpty, state != .cached, let start, let end else { return attemptWork }
        return [Work(attempt: 1, start: start, end: end)]
      }
      set { attemptWork = newValue }
    }
    /// The work spans, kept only when they are not the step's start and end (more than one
    /// attempt, or a wait for the main thread): a report of 100,000 steps need not hold
    /// 100,000 arrays.
    private var attemptWork: [Work]

    /// Creates a step line.
    package init(
      id: String, plugin: String, state: StepState, start: Duration?, end: Duration?, attempts: Int,
      usedFallback: Bool, error: String?, notes: [String] = [], ready: Duration? = nil,
      waits: [Wait] = [], work: [Work] = [], reused: Bool = false, priority: StepPriority? = nil,
      deferUntil: String? = nil
    ) {
      self.reused = reused
      self.priority = priority
      self.deferUntil = deferUntil
      self.ready = ready
      self.waits = waits
      self.attemptWork = work.count == 1 && work[0].start == start && work[0].end == end ? [] : work
      self.id = id
      self.plugin = plugin
      self.state = state
      self.start = start
      self.end = end
      self.attempts = attempts
      self.usedFallback = usedFallback
      self.error = error
      self.notes = notes
    }

    /// How long it ran, when it started.
    public var duration: Duration? {
      guard let start, let end else { return nil }
      return end - start
    }

    /// Whether it has a ``refresh``, asked without copying the refresh out of its box.
    /// Inlined, as ``workTime(endingBy:)`` is: called on a line of an array, a function left
    /// apart takes a copy of the whole line (a retain per field).
    @inline(__always) var hasRefresh: Bool {
      if case .some = refreshStorage { return true }
      return false
    }

    /// Its attempts' own work (``work``) that ended by `bound`, summed, read in place: the
    /// spans of a step that ran once are not made into an array for it.
    @inline(__always) func workTime(endingBy bound: Duration) -> Duration {
      guard attemptWork.isEmpty else {
        var time = Duration.zero
        for span in attemptWork where span.end <= bound { time += span.end - span.start }
        return time
      }
      guard state != .cached, let start, let end, end <= bound else { return .zero }
      return end - start
    }
  }

  private enum RefreshStorage: Sendable, Equatable {
    case none
    indirect case some(Refresh)
  }

  /// The run of a cached step behind its served output.
  public struct Refresh: Sendable, Equatable {
    /// How it ended: `succeeded` when its output replaced the cached one.
    public var state: StepState
    /// When its first attempt started; `nil` if it never started.
    public var start: Duration?
    /// When it ended; `nil` if it never started, or still runs: an on-demand step ensured
    /// after the launch is in ``LaunchSession/report`` from its start, with no `end` (and the
    /// state `skipped`) until it ends.
    public var end: Duration?
    /// Attempts made.
    public var attempts: Int
    /// Why it did not succeed.
    public var error: String?
    /// When its `dependsOn` and `after` steps had all ended.
    package var ready: Duration?
    /// What it waited for before its attempts, in time order.
    package var waits: [Wait]
    /// Each attempt's own work, in order.
    package var work: [Work]

    /// Creates a refresh record.
    package init(
      state: StepState, start: Duration?, end: Duration?, attempts: Int, error: String?,
      ready: Duration? = nil, waits: [Wait] = [], work: [Work] = []
    ) {
      self.state = state
      self.start = start
      self.end = end
      self.attempts = attempts
      self.error = error
      self.ready = ready
      self.waits = waits
      self.work = work
    }
  }

  /// A stretch of time the launch was paused (the app in the background, the process
  /// stopped), left out of every other time in the report.
  public struct Pause: Sendable, Equatable {
    /// When it began, in active time since the launch started.
    public var at: Duration
    /// How long it lasted, in real time.
    public var duration: Duration

    /// Creates a pause record.
    package init(at: Duration, duration: Duration) {
      self.at = at
      self.duration = duration
    }
  }

  /// When the app sent one of the manifest's signals.
  public struct Signal: Sendable, Equatable {
    /// The signal's name.
    public var name: String
    /// When it was sent, in active time since the launch started; `nil` if it never was.
    public var time: Duration?

    /// Creates a signal record.
    package init(name: String, time: Duration?) {
      self.name = name
      self.time = time
    }
  }

  /// When a milestone was reached; `nil` if it never was.
  public struct Milestone: Sendable, Equatable {
    /// The milestone's name.
    public var name: String
    /// When it was reached.
    public var time: Duration?

    /// Creates a milestone line.
    package init(name: String, time: Duration?) {
      self.name = name
      self.time = time
    }
  }

  /// The manifest file as the user named it.
  public var manifest: String
  /// The manifest's name.
  public var name: String
  /// How the launch ended.
  public var outcome: LaunchOutcome
  /// The route a step ended the launch with.
  public var route: LaunchRoute?
  /// How long the launch took, in active time (pauses left out).
  public var duration: Duration
  /// How long the launch took in real time: ``duration`` and every pause.
  public var wallDuration: Duration {
    pauses.reduce(duration) { $0 + $1.duration }
  }
  /// Each time the launch was paused, in order.
  public var pauses: [Pause] = []
  /// The manifest's signals, in its order, with when each was sent.
  public var signals: [Signal] = []
  /// The step that ended the launch with its route; `nil` in a report read from a file.
  var routedStep: String?
  /// Milestones in manifest order.
  public var milestones: [Milestone]
  /// The ids of the launch's end chain: the step that ended last, and back through whatever
  /// held each (a dependency, a slot holder, a deferral milestone).
  package var criticalPath: [String]
  /// The chain to each reached milestone, in manifest order, then to the launch's end
  /// (`milestone` `nil`); empty for reports that predate them.
  package var criticalChains: [CriticalChain] = []
  /// Steps in manifest order.
  public var steps: [Step]
  /// Why the launch failed before any step started (a required environment value was
  /// missing); `nil` otherwise.
  public var error: String?
  /// When the splash gave way, for a manifest with a `splash` object.
  package var splash: SplashTiming?
  /// What the steps produced; empty for a report read from a file.
  package var outputs: StepOutputs
  /// Why the app launched and what the launch record made of it; `nil` for a launch that
  /// kept no record, and in reports that predate it.
  public var context: LaunchContext?
  /// What went wrong with the launch record (damaged and set aside, not writable); it never
  /// fails the launch.
  package var contextNotes: [String] = []
  /// The app's version and build (its ``AppInfo``, else the manifest's `app` default); `nil`
  /// when neither gave one.
  public var app: AppInfo?
  /// The experiment arm and device class the app put in the environment.
  public var labels: LaunchLabels?
  /// When the launch started, on the wall clock; `nil` in reports that predate it.
  public var startedAt: Date?
  /// The time from the process's start to the launch's start, as the operating system tells
  /// it (on Linux to its clock tick); `nil` where it does not, and in reports that predate it.
  public var sinceProcessStart: Duration?

  /// Creates a report.
  package init(
    manifest: String, name: String, outcome: LaunchOutcome, route: LaunchRoute?, duration: Duration,
    milestones: [Milestone], criticalPath: [String], steps: [Step], error: String? = nil,
    splash: SplashTiming? = nil, outputs: StepOutputs = StepOutputs()
  ) {
    self.manifest = manifest
    self.name = name
    self.outcome = outcome
    self.route = route
    self.duration = duration
    self.milestones = milestones
    self.criticalPath = criticalPath
    self.steps = steps
    self.error = error
    self.splash = splash
    self.outputs = outputs
  }

  /// The output of step `step` as a `T`; `nil` when it produced none or another type.
  public func output<T>(of step: String, as type: T.Type = T.self) -> T? {
    outputs.output(of: step, as: type)
  }

  /// The time `milestone` was reached: `nil` if the manifest has no such milestone,
  /// `.some(nil)` if it was never reached.
  public func time(ofMilestone milestone: String) -> Duration?? {
    milestones.first { $0.name == milestone }.map(\.time)
  }

  /// The line of the step with `id`.
  public func step(_ id: String) -> Step? {
    steps.first { $0.id == id }
  }
}

extension LaunchReport {
  // Borrowed: an initializer takes its arguments owned, so the engine would copy the whole
  // plan and scheduler (a retain per array they hold) only for this to let go of them.
  init(
    plan: borrowing LaunchPlan, scheduler: borrowing LaunchScheduler, duration: Duration,
    outputs: StepOutputs = StepOutputs()
  ) {
    let steps = Self.stepLines(plan: plan, records: scheduler.records)
    let chains = WaitAnalysis.chains(
      plan: plan, steps: steps, milestoneTimes: scheduler.milestoneTimes)
    let (route, endedAt) = Self.ending(scheduler.ending, steps: steps, duration: duration)
    // Each field set in place: delegating to the memberwise initializer made the report
    // aside and then copied it into `self`, a retain per field, in every launch.
    manifest = plan.manifestPath
    name = plan.name
    outcome = scheduler.outcome
    self.route = route
    self.duration = duration
    milestones = plan.milestones.map {
      Milestone(name: $0.name, time: scheduler.milestoneTimes[$0.index])
    }
    criticalPath = chains.last { $0.milestone == nil }?.links.map(\.step) ?? []
    self.steps = steps
    self.outputs = outputs
    criticalChains = chains
    signals = plan.signals.indices.map {
      Signal(name: plan.signals[$0], time: scheduler.signalTimes[$0])
    }
    if case .routed(_, let step) = scheduler.ending { routedStep = plan.steps[step].id }
    splash = plan.manifest.splash.map {
      Self.splashTiming($0, plan: plan, scheduler: scheduler, endedAt: endedAt)
    }
  }

  /// One line per planned step, in plan order, each made whole: its priority and deferral
  /// milestone filled in after, the lines were written twice.
  private static func stepLines(plan: LaunchPlan, records: [LaunchScheduler.Record]) -> [Step] {
    let extras = WaitAnalysis.waitsAndWork(plan: plan, records: records)
    var steps: [Step] = []
    steps.reserveCapacity(records.count)
    // The next step with waits or work of its own: the list is in step order.
    var next = 0
    // By index: mapping over the planned steps would copy each one, a retain per field.
    for index in records.indices {
      var waits: [Wait] = []
      var work: [Work] = []
      if next < extras.count, extras[next].step == index {
        waits = extras[next].waits
        work = extras[next].work
        next += 1
      }
      let deferUntil = plan.steps[index].deferUntil.map { plan.milestones[$0].name }
      if let servedAt = records[index].servedAt {
        steps.append(
          cachedStepLine(
            id: plan.steps[index].id, plugin: plan.steps[index].plugin, record: records[index],
            servedAt: servedAt, waits: waits, work: work, priority: plan.steps[index].priority,
            deferUntil: deferUntil))
      } else {
        steps.append(
          stepLine(
            plan: plan, records: records, index: index, waits: waits, work: work,
            deferUntil: deferUntil))
      }
    }
    return steps
  }

  /// The line of a step that ran, or ended without running.
  private static func stepLine(
    plan: LaunchPlan, records: [LaunchScheduler.Record], index: Int, waits: [Wait], work: [Work],
    deferUntil: String?
  ) -> Step {
    // Fields read in place: copying a whole record costs a retain per field.
    let plugin = plan.steps[index].plugin
    // An on-demand step ensured after the launch shows from its start: its `start` and no
    // `end` while it runs (its state, how it ended, is not known yet: `skipped` until then).
    if records[index].state == nil, records[index].start == nil,
      plan.steps[index].trigger == .onDemand
    {
      return Step(
        id: plan.steps[index].id, plugin: plugin, state: .skipped, start: nil, end: nil,
        attempts: 0, usedFallback: false, error: "on demand, and not ensured",
        notes: records[index].notes, priority: plan.steps[index].priority,
        deferUntil: deferUntil)
    }
    // Made whole, not changed after: a step changed after its init was copied and destroyed
    // once more, for every step of every report.
    return Step(
      id: plan.steps[index].id,
      plugin: records[index].usedFallback ? plan.steps[index].fallbackPlugin ?? plugin : plugin,
      state: records[index].state ?? .skipped, start: records[index].start,
      end: records[index].end, attempts: records[index].attempts,
      usedFallback: records[index].usedFallback, error: records[index].error,
      notes: records[index].notes, ready: records[index].ready, waits: waits, work: work,
      reused: records[index].reused, priority: plan.steps[index].priority,
      deferUntil: deferUntil)
  }

  /// The line of a step served from its cache at `servedAt`, its run behind that as its
  /// refresh.
  private static func cachedStepLine(
    id: String, plugin: String, record: LaunchScheduler.Record, servedAt: Duration,
    waits: [Wait], work: [Work], priority: StepPriority, deferUntil: String?
  ) -> Step {
    var step = Step(
      id: id, plugin: plugin, state: .cached, start: servedAt, end: servedAt, attempts: 0,
      usedFallback: false, error: nil, notes: record.notes, ready: servedAt, priority: priority,
      deferUntil: deferUntil)
    step.refresh = Refresh(
      state: record.refreshState ?? .skipped, start: record.start, end: record.end,
      attempts: record.attempts, error: record.error, ready: record.ready, waits: waits,
      work: work.isEmpty
        ? record.start.map { [Work(attempt: 1, start: $0, end: record.end ?? $0)] } ?? [] : work)
    return step
  }

  /// The route a step ended the launch with, and when the launch ended: when the step that
  /// routed or aborted it ended, or after `duration`.
  private static func ending(
    _ ending: LaunchScheduler.Ending?, steps: [Step], duration: Duration
  ) -> (route: LaunchRoute?, endedAt: Duration) {
    switch ending {
    case .routed(let route, let step): (route, steps[step].end ?? duration)
    case .aborted(let step): (nil, steps[step].end ?? duration)
    case .cancelled, nil: (nil, duration)
    }
  }

  /// When the splash gave way to the content or the skeleton.
  private static func splashTiming(
    _ policy: SplashPolicy, plan: LaunchPlan, scheduler: LaunchScheduler, endedAt: Duration
  ) -> SplashTiming {
    let readyAt = plan.milestones.first { $0.name == policy.dismissOn }.flatMap {
      scheduler.milestoneTimes[$0.index]
    }
    var timing = SplashTiming(policy: policy, readyAt: readyAt, endedAt: endedAt)
    // A route, a failure or a cancellation before the splash may go replaces the content
    // that was ready: the app shows that instead.
    if scheduler.ending != nil, let contentAt = timing.contentAt, endedAt < contentAt {
      timing.contentAt = nil
    }
    return timing
  }
}
