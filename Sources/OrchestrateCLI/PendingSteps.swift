import LaunchOrchestrator

/// What each step of a running launch that could start, but has not, waits for: a slot, its
/// deferral milestone, its delay or a retry's backoff.
///
/// Derived from the plan and the events the live display already receives, so the engine
/// publishes nothing more for it. Steps still waiting for their dependencies are left out:
/// that is most steps most of the time, and the normal state of a launch.
struct PendingSteps {
  private enum Phase: Equatable {
    /// Its first attempt has not started.
    case notStarted
    case running
    /// Between attempts: the next waits out `backoff`, then is queued for a slot at `queuedAt`.
    case betweenAttempts(next: Int, backoff: Duration, queuedAt: Duration)
    case ended
  }

  /// Lines shown at most; the rest are counted.
  static let shownLines = 6
  /// Slot holders named at most in one line; the rest are counted.
  static let namedHolders = 3

  private let plan: LaunchPlan
  private let limit: Int?
  private let stepIndex: [String: Int]
  private let milestoneIndex: [String: Int]
  private var phase: [Phase]
  private var unmetHard: [Int]
  private var unmetOrder: [Int]
  /// When each step's `dependsOn` and `after` steps had all ended.
  private var ready: [Duration?]
  private var milestoneTimes: [Duration?]
  /// The steps that could start and have not, or are between attempts: one bit per step, so
  /// listing and unlisting cost the same however many steps wait, and a scan in manifest
  /// order skips 64 steps at a time.
  private var listed: [UInt64]
  private var listedCount = 0

  /// Tracks `plan` run with at most `maxConcurrency` steps at once (`nil`: no limit).
  init(plan: LaunchPlan, maxConcurrency: Int?) {
    self.plan = plan
    limit = maxConcurrency
    stepIndex = Dictionary(
      plan.steps.map { ($0.id, $0.index) }, uniquingKeysWith: { first, _ in first })
    milestoneIndex = Dictionary(
      plan.milestones.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
    phase = Array(repeating: .notStarted, count: plan.steps.count)
    unmetHard = plan.steps.map(\.dependsOn.count)
    // By index: `after` is kept in a planned step's box, and a key path (or a closure) over
    // the steps would copy each step to read it.
    unmetOrder = plan.steps.indices.map { plan.steps[$0].after.count }
    ready = Array(repeating: nil, count: plan.steps.count)
    milestoneTimes = Array(repeating: nil, count: plan.milestones.count)
    listed = Array(repeating: 0, count: (plan.steps.count + 63) / 64)
    for step in plan.steps.indices { becomeReadyIfPossible(step, at: .zero) }
  }

  /// Takes in what `event` says about the steps.
  mutating func apply(_ event: LaunchEvent) {
    switch event.kind {
    case .started(let id, _):
      guard let step = stepIndex[id] else { return }
      phase[step] = .running
      unlist(step)
    case .retrying(let id, let next, _, let delay, _):
      guard let step = stepIndex[id] else { return }
      phase[step] = .betweenAttempts(next: next, backoff: delay, queuedAt: event.time + delay)
      if limit != nil || delay > .zero { list(step) }
    case .succeeded(let id, _), .cached(let id), .reused(let id):
      // A cached step's dependents go on at once; its refresh is not shown as waiting.
      end(id, succeeded: true, at: event.time)
    case .refreshed(let id), .refreshFailed(let id, _):
      guard let step = stepIndex[id] else { return }
      phase[step] = .ended
    case .failed(let id, _), .timedOut(let id, _), .skipped(let id, _), .cancelled(let id):
      end(id, succeeded: false, at: event.time)
    case .milestone(let name):
      if let milestone = milestoneIndex[name] { milestoneTimes[milestone] = event.time }
    case .progress, .log, .routed, .finished, .paused, .resumed, .signalled:
      break
    }
  }

  /// One `(id, reason)` per waiting step at `now`, in manifest order, while `holders` (in
  /// start order) run; at most ``shownLines``, and how many more there are.
  ///
  /// The scan stops at the last line shown, so the steps after it are counted as waiting
  /// even if one is about to start (it leaves the list with its `started` event).
  func waiting(at now: Duration, holders: [String]) -> (
    lines: [(id: String, reason: String)], more: Int
  ) {
    var lines: [(id: String, reason: String)] = []
    var examined = 0
    scan: for word in listed.indices where listed[word] != 0 {
      var bits = listed[word]
      while bits != 0 {
        let step = word * 64 + bits.trailingZeroBitCount
        bits &= bits - 1
        examined += 1
        guard let reason = reason(step, at: now, holders: holders) else { continue }
        lines.append((plan.steps[step].id, reason))
        if lines.count == Self.shownLines { break scan }
      }
    }
    return (lines, listedCount - examined)
  }

  private func reason(_ step: Int, at now: Duration, holders: [String]) -> String? {
    switch phase[step] {
    case .notStarted:
      guard let ready = ready[step] else { return nil }
      // Taken once: a setting kept in a planned step's box, read from `plan.steps[step]` in
      // this module, copies the whole step.
      let planned = plan.steps[step]
      let delay = planned.delay
      var queuedAt = ready + delay
      if let milestone = planned.deferUntil {
        guard let reached = milestoneTimes[milestone] else {
          let name = plan.milestones[milestone].name
          return delay > .zero
            ? "deferral until \(name) + delay \(DurationText.format(delay))"
            : "deferral until \(name)"
        }
        queuedAt = max(ready, reached) + delay
      }
      // Only a step with a delay waits for one: the display's clock may read a moment
      // before the event that made the step ready.
      if delay > .zero, now < queuedAt { return "delay \(DurationText.format(delay))" }
      return slot(holders)
    case .betweenAttempts(let next, let backoff, let queuedAt):
      if now < queuedAt { return "backoff \(DurationText.format(backoff)) before attempt \(next)" }
      return slot(holders)
    case .running, .ended:
      return nil
    }
  }

  /// A slot wait while every slot is held; otherwise the step is about to start.
  private func slot(_ holders: [String]) -> String? {
    guard let limit, holders.count >= limit else { return nil }
    let named = holders.prefix(Self.namedHolders).joined(separator: ", ")
    let rest = holders.count - Self.namedHolders
    return rest > 0 ? "slot (held by \(named) and \(rest) more)" : "slot (held by \(named))"
  }

  private mutating func end(_ id: String, succeeded: Bool, at time: Duration) {
    guard let step = stepIndex[id], phase[step] != .ended else { return }
    phase[step] = .ended
    unlist(step)
    if succeeded {
      for dependent in plan.steps[step].hardDependents {
        unmetHard[dependent] -= 1
        becomeReadyIfPossible(dependent, at: time)
      }
    }
    for dependent in plan.steps[step].orderDependents {
      unmetOrder[dependent] -= 1
      becomeReadyIfPossible(dependent, at: time)
    }
  }

  private mutating func becomeReadyIfPossible(_ step: Int, at time: Duration) {
    guard ready[step] == nil, phase[step] == .notStarted, unmetHard[step] == 0,
      unmetOrder[step] == 0
    else { return }
    ready[step] = time
    // Without a limit, a step with neither deferral nor delay starts the moment it is ready.
    if limit != nil {
      list(step)
    } else {
      let planned = plan.steps[step]
      if planned.deferUntil != nil || planned.delay > .zero { list(step) }
    }
  }

  private mutating func list(_ step: Int) {
    let bit = UInt64(1) << (step % 64)
    guard listed[step / 64] & bit == 0 else { return }
    listed[step / 64] |= bit
    listedCount += 1
  }

  private mutating func unlist(_ step: Int) {
    let bit = UInt64(1) << (step % 64)
    guard listed[step / 64] & bit != 0 else { return }
    listed[step / 64] &= ~bit
    listedCount -= 1
  }
}
