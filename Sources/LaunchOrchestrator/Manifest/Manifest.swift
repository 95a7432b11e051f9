import LaunchJSON

/// A launch manifest (format version 1), as read from JSON and checked field by field.
///
/// A manifest is data: ``ManifestLoader`` turns it into a ``LaunchPlan`` once every step's
/// plugin, parameters and dependencies have been checked.
package struct Manifest: Sendable {
  /// The format version; only `1` exists.
  package var version: Int
  /// The app or launch name shown in reports.
  package var name: String
  /// How many steps may run at once; `nil` means no limit.
  package var maxConcurrency: Int?
  /// Settings every step takes unless it sets its own.
  package var defaults: StepDefaults
  /// Named milestones, in manifest order.
  package var milestones: [MilestoneDeclaration]
  /// When the app's splash gives way to content or a skeleton; `nil` when the manifest says
  /// nothing (content then shows when the launch ends).
  package var splash: SplashPolicy?
  /// The app's identity for rehearsals outside the app; an app's own ``AppInfo`` in the
  /// ``LaunchEnvironment`` wins over it.
  package var app: AppInfo?
  /// The names of the signals the app may send during the launch (`consent`, say), which
  /// steps wait for with `waitFor`.
  package var signals: [String]
  /// The steps, in manifest order.
  package var steps: [StepDeclaration]
  /// When a launch runs in safe mode; `nil` when it never does.
  package var safeMode: SafeModePolicy?

  /// Creates a manifest.
  package init(
    version: Int = 1, name: String, maxConcurrency: Int? = nil, defaults: StepDefaults = .init(),
    milestones: [MilestoneDeclaration] = [], splash: SplashPolicy? = nil, app: AppInfo? = nil,
    signals: [String] = [], steps: [StepDeclaration]
  ) {
    self.version = version
    self.name = name
    self.maxConcurrency = maxConcurrency
    self.defaults = defaults
    self.milestones = milestones
    self.splash = splash
    self.app = app
    self.signals = signals
    self.steps = steps
  }
}

/// Settings that apply to every step that does not set its own.
package struct StepDefaults: Sendable, Equatable {
  /// The per-attempt time limit; `nil` means none.
  package var timeout: Duration?
  /// The priority.
  package var priority: StepPriority
  /// What a final failure does to the launch.
  package var onFailure: FailurePolicy
  /// How often and how patiently to retry.
  package var retry: RetryPolicy

  /// Creates defaults; the built-in ones are no timeout, `normal`, `abort`, one attempt.
  package init(
    timeout: Duration? = nil, priority: StepPriority = .normal, onFailure: FailurePolicy = .abort,
    retry: RetryPolicy = .once
  ) {
    self.timeout = timeout
    self.priority = priority
    self.onFailure = onFailure
    self.retry = retry
  }
}

/// A milestone: a name for the moment a set of steps has finished.
package struct MilestoneDeclaration: Sendable, Equatable {
  /// The milestone's name, such as `firstFrame` or `interactive`.
  package var name: String
  /// The ids of the steps that must finish for the milestone to be reached.
  package var steps: [String]

  /// Creates a milestone.
  package init(name: String, steps: [String]) {
    self.name = name
    self.steps = steps
  }
}

/// One step as the manifest declares it.
package struct StepDeclaration: Sendable {
  /// The step's unique id.
  package var id: String
  /// The plugin kind that runs it, such as `store.init`.
  package var plugin: String
  /// The plugin's own parameters, decoded by the plugin when the manifest is loaded.
  package var params: JSONValue?
  /// The step's priority, or `nil` for the manifest's default.
  package var priority: StepPriority?
  /// Steps that must succeed before this one runs.
  package var dependsOn: [String]
  /// Whether the step runs in the launch, or only when the app asks for it.
  package var trigger: StepTrigger
  /// The members most steps leave out, kept apart: inline they took two thirds of a
  /// declaration's 360 bytes, paid by every step of a large manifest in fresh memory.
  private var uncommon: Uncommon?

  /// Steps that must finish, however they end, before this one runs.
  package var after: [String] {
    get { uncommon?.after ?? [] }
    set { edit(unless: newValue.isEmpty) { $0.after = newValue } }
  }
  /// The per-attempt time limit, or `nil` for the manifest's default.
  package var timeout: Duration? {
    get { uncommon?.timeout }
    set { edit(unless: newValue == nil) { $0.timeout = newValue } }
  }
  /// The retry policy, or `nil` for the manifest's default.
  package var retry: RetryPolicy? {
    get { uncommon?.retry }
    set { edit(unless: newValue == nil) { $0.retry = newValue } }
  }
  /// What a final failure does, or `nil` for the manifest's default.
  package var onFailure: FailurePolicy? {
    get { uncommon?.onFailure }
    set { edit(unless: newValue == nil) { $0.onFailure = newValue } }
  }
  /// What to run when every attempt failed.
  package var fallback: FallbackDeclaration? {
    get { uncommon?.fallback }
    set { edit(unless: newValue == nil) { $0.fallback = newValue } }
  }
  /// How long to wait after the step becomes ready.
  package var delay: Duration {
    get { uncommon?.delay ?? .zero }
    set { edit(unless: newValue == .zero) { $0.delay = newValue } }
  }
  /// A milestone the step must not start before.
  package var deferUntil: String? {
    get { uncommon?.deferUntil }
    set { edit(unless: newValue == nil) { $0.deferUntil = newValue } }
  }
  /// Where the step runs; `nil` leaves it to the plugin (``StepPlugin/isolation``).
  package var isolation: StepIsolation? {
    get { uncommon?.isolation }
    set { edit(unless: newValue == nil) { $0.isolation = newValue } }
  }
  /// How long the step is expected to take, a hint for planning.
  package var expectedDuration: Duration? {
    get { uncommon?.expectedDuration }
    set { edit(unless: newValue == nil) { $0.expectedDuration = newValue } }
  }
  /// Whether the step's last output is served at once on the next launch while the step
  /// runs again behind it.
  package var cache: CachePolicy? {
    get { uncommon?.cache }
    set { edit(unless: newValue == nil) { $0.cache = newValue } }
  }
  /// The signals from the app (declared in the manifest's `signals`) the step waits for, on
  /// top of its dependencies.
  package var waitFor: [String] {
    get { uncommon?.waitFor ?? [] }
    set { edit(unless: newValue.isEmpty) { $0.waitFor = newValue } }
  }
  /// Facts of the launch's context that must all hold for the step to run.
  package var when: StepCondition? {
    get { uncommon?.when }
    set { edit(unless: newValue == nil) { $0.when = newValue } }
  }
  /// Whether the step runs only until it succeeds once (per install or per app version).
  package var once: RunOnce? {
    get { uncommon?.once }
    set { edit(unless: newValue == nil) { $0.once = newValue } }
  }

  /// Creates a step declaration.
  package init(
    id: String, plugin: String, params: JSONValue? = nil, priority: StepPriority? = nil,
    dependsOn: [String] = [], after: [String] = [], timeout: Duration? = nil,
    retry: RetryPolicy? = nil, onFailure: FailurePolicy? = nil,
    fallback: FallbackDeclaration? = nil, delay: Duration = .zero, deferUntil: String? = nil,
    isolation: StepIsolation? = nil, expectedDuration: Duration? = nil,
    cache: CachePolicy? = nil, waitFor: [String] = [], trigger: StepTrigger = .launch
  ) {
    self.id = id
    self.plugin = plugin
    self.params = params
    self.priority = priority
    self.dependsOn = dependsOn
    self.trigger = trigger
    self.after = after
    self.timeout = timeout
    self.retry = retry
    self.onFailure = onFailure
    self.fallback = fallback
    self.delay = delay
    self.deferUntil = deferUntil
    self.isolation = isolation
    self.expectedDuration = expectedDuration
    self.cache = cache
    self.waitFor = waitFor
  }

  /// Changes the uncommon members with `change`, on a box of this declaration's own; a value
  /// left at its default makes no box.
  private mutating func edit(unless isDefault: Bool, _ change: (Uncommon) -> Void) {
    if uncommon == nil {
      if isDefault { return }
      uncommon = Uncommon()
    } else if !isKnownUniquelyReferenced(&uncommon!) {
      uncommon = uncommon!.copy()
    }
    change(uncommon!)
  }

  /// A declaration's members that most steps leave out, shared by copies of the declaration
  /// until one of them changes. Set them whole: an in-place change (`after.append(id)`) goes
  /// through the getter and the setter, and copies the array while the box still holds it.
  private final class Uncommon: @unchecked Sendable {
    // Changed only while its declaration holds the one reference (`edit`).
    var after: [String] = []
    var timeout: Duration?
    var retry: RetryPolicy?
    var onFailure: FailurePolicy?
    var fallback: FallbackDeclaration?
    var delay: Duration = .zero
    var deferUntil: String?
    var isolation: StepIsolation?
    var expectedDuration: Duration?
    var cache: CachePolicy?
    var waitFor: [String] = []
    var when: StepCondition?
    var once: RunOnce?

    func copy() -> Uncommon {
      let copy = Uncommon()
      copy.after = after
      copy.timeout = timeout
      copy.retry = retry
      copy.onFailure = onFailure
      copy.fallback = fallback
      copy.delay = delay
      copy.deferUntil = deferUntil
      copy.isolation = isolation
      copy.expectedDuration = expectedDuration
      copy.cache = cache
      copy.waitFor = waitFor
      copy.when = when
      copy.once = once
      return copy
    }
  }
}

/// What to run when a step has failed every attempt.
package struct FallbackDeclaration: Sendable {
  /// Parameters merged over the step's own (member by member at the top level).
  package var params: JSONValue?
  /// Another plugin kind to run instead; `nil` runs the step's own plugin.
  package var plugin: String?

  /// Creates a fallback.
  package init(params: JSONValue? = nil, plugin: String? = nil) {
    self.params = params
    self.plugin = plugin
  }
}

/// How urgent a step is: `critical` > `high` > `normal` > `low` > `background`.
package enum StepPriority: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
  /// Work in the way of anything else; runs as background work.
  case background
  /// Work that can wait.
  case low
  /// The default.
  case normal
  /// Work the first screen needs.
  case high
  /// Work nothing else can happen without.
  case critical

  /// Reads a priority by its manifest name.
  package init?(name: String) {
    guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
    self = match
  }

  /// The manifest name.
  package var description: String {
    switch self {
    case .background: "background"
    case .low: "low"
    case .normal: "normal"
    case .high: "high"
    case .critical: "critical"
    }
  }

  /// The Swift task priority steps of this priority run at.
  package var taskPriority: TaskPriority {
    switch self {
    case .critical, .high: .high
    case .normal: .medium
    case .low: .low
    case .background: .background
    }
  }

  /// Orders by urgency.
  package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a step's final failure does to the launch.
package enum FailurePolicy: String, Sendable, CaseIterable {
  /// Cancel the launch and skip everything that has not started.
  case abort
  /// Mark the step failed, skip its dependents and carry on.
  case `continue`
}

/// Where a step's code runs.
public enum StepIsolation: String, Sendable, CaseIterable {
  /// Off the main actor (blocking plugins on the engine's own threads).
  case `default`
  /// On the main actor.
  case main
}

/// How many attempts a step gets and how long to wait between them.
package struct RetryPolicy: Sendable, Equatable {
  /// Attempts in all, at least 1.
  package var attempts: Int
  /// The wait before the second attempt; it doubles before each later one.
  package var backoff: Duration

  /// One attempt, no retry.
  package static let once = RetryPolicy(attempts: 1, backoff: .zero)

  /// Creates a retry policy.
  package init(attempts: Int, backoff: Duration) {
    self.attempts = attempts
    self.backoff = backoff
  }

  /// The wait before attempt `attempt` (2 or later): `backoff * 2^(attempt - 2)`.
  package func delay(before attempt: Int) -> Duration {
    backoff * (1 << min(max(attempt - 2, 0), 30))
  }
}

/// How a step's output is kept between launches: served at once on the next launch, then
/// refreshed by running the step again behind it.
package struct CachePolicy: Sendable, Equatable {
  /// How old an entry may be and still be served; `nil` for no limit.
  package var maxAge: Duration?

  /// Creates a cache policy.
  package init(maxAge: Duration? = nil) {
    self.maxAge = maxAge
  }
}

/// When a step runs: in the launch, or when the app asks for its output.
package enum StepTrigger: String, Sendable, CaseIterable {
  /// It runs as part of the launch.
  case launch
  /// It is kept out of the launch and runs, once, when the app calls
  /// ``LaunchSession/ensure(_:as:)`` (or ``LaunchControl/ensure(_:as:)``).
  case onDemand
}
