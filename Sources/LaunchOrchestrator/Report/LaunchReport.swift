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
    /// When it ended; `nil` if it never started.
    public var end: Duration?
    /// Attempts made, the fallback included.
    public var attempts: Int
    /// Whether its fallback produced its result.
    public var usedFallback: Bool
    /// Why it failed, timed out or was skipped.
    public var error: String?
    /// What the step logged, in order: what it did, what it recovered from.
    public var notes: [String]

    /// Creates a step line.
    public init(
      id: String, plugin: String, state: StepState, start: Duration?, end: Duration?, attempts: Int,
      usedFallback: Bool, error: String?, notes: [String] = []
    ) {
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
  }

  /// When a milestone was reached; `nil` if it never was.
  public struct Milestone: Sendable, Equatable {
    /// The milestone's name.
    public var name: String
    /// When it was reached.
    public var time: Duration?

    /// Creates a milestone line.
    public init(name: String, time: Duration?) {
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
  /// How long the launch took.
  public var duration: Duration
  /// Milestones in manifest order.
  public var milestones: [Milestone]
  /// The chain of steps, each waiting for the one before, that ended last.
  public var criticalPath: [String]
  /// Steps in manifest order.
  public var steps: [Step]
  /// Why the launch failed before any step started (a required environment value was
  /// missing); `nil` otherwise.
  public var error: String?
  /// When the splash gave way, for a manifest with a `splash` object.
  public var splash: SplashTiming?
  /// What the steps produced; empty for a report read from a file.
  public var outputs: StepOutputs

  /// Creates a report.
  public init(
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
  init(
    plan: LaunchPlan, scheduler: LaunchScheduler, duration: Duration,
    outputs: StepOutputs = StepOutputs()
  ) {
    // By index: mapping over the planned steps would copy each one, a retain per field.
    let steps = plan.steps.indices.map { index in
      let record = scheduler.records[index]
      let plugin = plan.steps[index].plugin
      return Step(
        id: plan.steps[index].id,
        plugin: record.usedFallback ? plan.steps[index].fallbackPlugin ?? plugin : plugin,
        state: record.state ?? .skipped, start: record.start, end: record.end,
        attempts: record.attempts,
        usedFallback: record.usedFallback, error: record.error, notes: record.notes)
    }
    var route: LaunchRoute?
    var endedAt = duration
    switch scheduler.ending {
    case .routed(let routed, let step):
      route = routed
      endedAt = steps[step].end ?? duration
    case .aborted(let step): endedAt = steps[step].end ?? duration
    case .cancelled, nil: break
    }
    self.init(
      manifest: plan.manifestPath, name: plan.name, outcome: scheduler.outcome, route: route,
      duration: duration,
      milestones: plan.milestones.map {
        Milestone(name: $0.name, time: scheduler.milestoneTimes[$0.index])
      },
      criticalPath: CriticalPath.measured(plan: plan, steps: steps).map { plan.steps[$0].id },
      steps: steps, outputs: outputs)
    if let policy = plan.manifest.splash {
      let readyAt = plan.milestones.first { $0.name == policy.dismissOn }.flatMap {
        scheduler.milestoneTimes[$0.index]
      }
      splash = SplashTiming(policy: policy, readyAt: readyAt, endedAt: endedAt)
    }
  }
}

/// Finds the chain of steps that decided when a launch ended.
enum CriticalPath {
  /// Starting from the step that ended last, walk back through whatever it waited for
  /// (`dependsOn`, `after`, the steps of its deferral milestone), each time to the one that
  /// ended last. Iterative, so a 100,000-step chain is no problem.
  static func measured(plan: LaunchPlan, steps: [LaunchReport.Step]) -> [Int] {
    func later(_ lhs: Int, _ rhs: Int) -> Bool {
      (steps[lhs].end ?? .zero, lhs) < (steps[rhs].end ?? .zero, rhs)
    }
    guard var current = steps.indices.filter({ steps[$0].end != nil }).max(by: later) else {
      return []
    }
    var path = [current]
    while true {
      let planned = plan.steps[current]
      var waitedFor = planned.dependsOn + planned.after
      if let milestone = planned.deferUntil { waitedFor += plan.milestones[milestone].steps }
      guard let previous = waitedFor.filter({ steps[$0].end != nil }).max(by: later) else { break }
      path.append(previous)
      current = previous
    }
    return path.reversed()
  }
}
