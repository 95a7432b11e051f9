import Foundation

/// A validated manifest, ready to run: steps with resolved settings and decoded parameters,
/// dependencies as a DAG, milestones, and a topological order.
public struct LaunchPlan: Sendable {
  /// The manifest the plan was made from.
  package let manifest: Manifest
  /// The manifest file as the user named it.
  package let manifestPath: String
  /// The folder holding the manifest; files shipped with it resolve against it.
  public let manifestDirectory: URL
  /// The writable folder relative data paths in params resolve against: the manifest's
  /// folder unless the loader was given another.
  public let dataDirectory: URL
  /// The steps, in manifest order; a step's ``PlannedStep/index`` is its position here.
  package let steps: [PlannedStep]
  /// The milestones, in manifest order.
  package let milestones: [PlannedMilestone]
  /// Step indices in an order where each step follows everything it waits for.
  package let topologicalOrder: [Int]
  /// Problems that do not stop the launch but deserve a look.
  public let warnings: [ManifestDiagnostic]
  /// The steps that require environment values, with those values: gathered when the plan
  /// is built, so checking them before a launch costs nothing for steps that need none.
  let requiredValues: [(step: Int, requirement: StepRequirement)]
  /// The steps with a `cache`, gathered when the plan is built: a launch without one looks up
  /// nothing.
  let cachedSteps: [Int]
  /// The on-demand steps, gathered when the plan is built: a launch without one sets nothing
  /// up for them.
  let onDemandSteps: [Int]
  /// The names of the signals the app may send, as the manifest declares them; a step's
  /// ``PlannedStep/waitFor`` indexes this array.
  package let signals: [String]
  /// The kinds the plan was made with: what ``check(_:)`` asks a step's output type of.
  let registry: PluginRegistry
  /// The steps with a `when` or a `once`, gathered when the plan is built: a launch without
  /// one judges no step by its context.
  package let contextSteps: [Int]

  /// The name shown in reports.
  public var name: String { manifest.name }

  /// The folder holding the cached outputs of this manifest's steps that have a `cache`:
  /// `.orchestrate-cache/<manifest name>/` in the data folder.
  package var cacheDirectory: URL {
    OutputCache(dataDirectory: dataDirectory, manifestName: name).folder
  }

  /// Removes the cached outputs of this manifest's steps (after a sign-out, say), so that the
  /// next launch runs every step; returns how many there were.
  ///
  /// - Throws: ``StepFailure`` when an entry cannot be removed, or the cache's folder (in the
  ///   data folder) is not a folder.
  @discardableResult
  public func clearCache() throws -> Int {
    try Self.clearCache(manifestName: name, dataDirectory: dataDirectory)
  }

  /// Removes the cached outputs of the manifest called `manifestName` whose data folder is
  /// `dataDirectory`, as ``clearCache()`` does, without a plan: for a manifest that no
  /// longer loads (a kind renamed by an update).
  @discardableResult
  package static func clearCache(manifestName: String, dataDirectory: URL) throws -> Int {
    try OutputCache(dataDirectory: dataDirectory, manifestName: manifestName).clear()
  }

  /// The step with `id`.
  package func step(_ id: String) -> PlannedStep? {
    steps.first { $0.id == id }
  }

  /// Hard dependencies of `step` and theirs, nearest first, each once.
  package func hardDependencyClosure(of step: Int) -> [Int] {
    Self.closure(from: step) { steps[$0].dependsOn }
  }

  /// The steps `edges` lead to from `step`, and on from them, nearest first, each once.
  static func closure(from step: Int, edges: (Int) -> [Int]) -> [Int] {
    var order: [Int] = []
    walk(from: step, edges: edges) { next in
      order.append(next)
      return true
    }
    return order
  }

  /// Visits the steps `edges` lead to from `step`, and on from them, nearest first, each
  /// once, for as long as `visit` returns `true`.
  static func walk(from step: Int, edges: (Int) -> [Int], _ visit: (Int) -> Bool) {
    var seen: Set<Int> = [step]
    var queue = edges(step)[...]
    while let next = queue.popFirst() {
      guard seen.insert(next).inserted else { continue }
      guard visit(next) else { return }
      queue.append(contentsOf: edges(next))
    }
  }
}

/// One step of a plan, every setting resolved against the manifest's defaults.
package struct PlannedStep: Sendable {
  /// Position in ``LaunchPlan/steps``.
  package let index: Int
  /// The step's id.
  package let id: String
  /// The plugin kind.
  package let plugin: String
  /// The priority the manifest gives it (or its default).
  package let priority: StepPriority
  /// The priority it runs at: its own, or that of the most urgent step waiting for it.
  package let effectivePriority: StepPriority
  /// Steps that must succeed first.
  package let dependsOn: [Int]
  /// The milestones it belongs to.
  package let milestones: [Int]
  /// Steps that wait for this one through `dependsOn`.
  package let hardDependents: [Int]
  /// The per-attempt time limit.
  package let timeout: Duration?
  /// Attempts and backoff.
  package let retry: RetryPolicy
  /// What a final failure does.
  package let onFailure: FailurePolicy
  /// Where it runs.
  package let isolation: StepIsolation
  /// The sum of expected durations along the longest chain of steps from this one to the
  /// end of the launch, used to break priority ties (a step without a hint counts 1ms).
  package let remainingPath: Duration
  /// Whether it runs in the launch or only when the app ensures it.
  package let trigger: StepTrigger

  let action: PreparedStep
  /// The settings most steps leave empty, kept apart: inline they took half of a planned
  /// step's 408 bytes, paid by every step of a large manifest in fresh memory. Another module
  /// reading one of them from `plan.steps[i]` copies the whole step (a retain of each of its
  /// references): take the step once where several are read.
  private let uncommon: Uncommon?

  /// Steps that must finish first, however they end.
  package var after: [Int] { uncommon?.after ?? [] }
  /// The milestone it must not start before.
  package var deferUntil: Int? { uncommon?.deferUntil }
  /// Steps that wait for this one through `after`.
  package var orderDependents: [Int] { uncommon?.orderDependents ?? [] }
  /// The wait after becoming ready.
  package var delay: Duration { uncommon?.delay ?? .zero }
  /// The planning hint from the manifest.
  package var expectedDuration: Duration? { uncommon?.expectedDuration }
  /// The plugin kind of its fallback, when it has one.
  package var fallbackPlugin: String? { uncommon?.fallbackPlugin }
  /// How its output is kept between launches, when it is.
  package var cache: CachePolicy? { uncommon?.cache }
  /// The signals it waits for, as indices into ``LaunchPlan/signals``.
  package var waitFor: [Int] { uncommon?.waitFor ?? [] }
  /// What identifies its cache entry, for a step with a `cache`.
  var cacheKey: CacheKey? { uncommon?.cacheKey }
  var fallbackAction: PreparedStep? { uncommon?.fallbackAction }

  /// Whether a fallback runs when every attempt fails.
  package var hasFallback: Bool { fallbackAction != nil }

  /// The environment values the step's plugin (and its fallback's) read.
  package var requirements: [StepRequirement] {
    action.requirements + (fallbackAction?.requirements ?? [])
  }

  init(
    index: Int, id: String, plugin: String, priority: StepPriority,
    effectivePriority: StepPriority, dependsOn: [Int], after: [Int], deferUntil: Int?,
    milestones: [Int], hardDependents: [Int], orderDependents: [Int], timeout: Duration?,
    retry: RetryPolicy, onFailure: FailurePolicy, delay: Duration, isolation: StepIsolation,
    expectedDuration: Duration?, fallbackPlugin: String?, remainingPath: Duration,
    cache: CachePolicy?, waitFor: [Int], trigger: StepTrigger, cacheKey: CacheKey?,
    action: PreparedStep, fallbackAction: PreparedStep?
  ) {
    self.index = index
    self.id = id
    self.plugin = plugin
    self.priority = priority
    self.effectivePriority = effectivePriority
    self.dependsOn = dependsOn
    self.milestones = milestones
    self.hardDependents = hardDependents
    self.timeout = timeout
    self.retry = retry
    self.onFailure = onFailure
    self.isolation = isolation
    self.remainingPath = remainingPath
    self.trigger = trigger
    self.action = action
    let isCommon =
      after.isEmpty && deferUntil == nil && orderDependents.isEmpty && delay == .zero
      && expectedDuration == nil && fallbackPlugin == nil && cache == nil && waitFor.isEmpty
      && cacheKey == nil && fallbackAction == nil
    uncommon =
      isCommon
      ? nil
      : Uncommon(
        after: after, deferUntil: deferUntil, orderDependents: orderDependents, delay: delay,
        expectedDuration: expectedDuration, fallbackPlugin: fallbackPlugin, cache: cache,
        waitFor: waitFor, cacheKey: cacheKey, fallbackAction: fallbackAction)
  }

  /// A planned step's settings that most steps leave empty.
  private final class Uncommon: Sendable {
    let after: [Int]
    let deferUntil: Int?
    let orderDependents: [Int]
    let delay: Duration
    let expectedDuration: Duration?
    let fallbackPlugin: String?
    let cache: CachePolicy?
    let waitFor: [Int]
    let cacheKey: CacheKey?
    let fallbackAction: PreparedStep?

    init(
      after: [Int], deferUntil: Int?, orderDependents: [Int], delay: Duration,
      expectedDuration: Duration?, fallbackPlugin: String?, cache: CachePolicy?,
      waitFor: [Int], cacheKey: CacheKey?, fallbackAction: PreparedStep?
    ) {
      self.after = after
      self.deferUntil = deferUntil
      self.orderDependents = orderDependents
      self.delay = delay
      self.expectedDuration = expectedDuration
      self.fallbackPlugin = fallbackPlugin
      self.cache = cache
      self.waitFor = waitFor
      self.cacheKey = cacheKey
      self.fallbackAction = fallbackAction
    }
  }
}

/// A milestone of a plan.
package struct PlannedMilestone: Sendable {
  /// Position in ``LaunchPlan/milestones``.
  package let index: Int
  /// Its name.
  package let name: String
  /// The steps that must finish for it to be reached.
  package let steps: [Int]
  /// Steps deferred until it is reached.
  package let deferredSteps: [Int]
}
