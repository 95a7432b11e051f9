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
  /// The steps that could start and have not, or are between attempts, in manifest order.
  private var listed: [Int] = []

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
    unmetOrder = plan.steps.map(\.after.count)
    ready = Array(repeating: nil, count: plan.steps.count)
    milestoneTimes = Array(repeating: nil, count: plan.milestones.count)
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
      list(step)
    case .succeeded(let id, _):
      end(id, succeeded: true, at: event.time)
    case .failed(let id, _), .timedOut(let id, _), .skipped(let id, _), .cancelled(let id):
      end(id, succeeded: false, at: event.time)
    case .milestone(let name):
      if let milestone = milestoneIndex[name] { milestoneTimes[milestone] = event.time }
    case .progress, .log, .routed, .finished:
      break
    }
  }

  /// One `(id, reason)` per waiting step at `now`, in manifest order, while `holders` (in
  /// start order) run; at most ``shownLines``, and how many more there are.
  func waiting(at now: Duration, holders: [String]) -> (
    lines: [(id: String, reason: String)], more: Int
  ) {
    var lines: [(id: String, reason: String)] = []
    var more = 0
    for step in listed {
      guard let reason = reason(step, at: now, holders: holders) else { continue }
      if lines.count < Self.shownLines {
        lines.append((plan.steps[step].id, reason))
      } else {
        more += 1
      }
    }
    return (lines, more)
  }

  private func reason(_ step: Int, at now: Duration, holders: [String]) -> String? {
    switch phase[step] {
    case .notStarted:
      guard let ready = ready[step] else { return nil }
      let delay = plan.steps[step].delay
      var queuedAt = ready + delay
      if let milestone = plan.steps[step].deferUntil {
        guard let reached = milestoneTimes[milestone] else {
          let name = plan.milestones[milestone].name
          return delay > .zero
            ? "deferral until \(name) + delay \(DurationText.format(delay))"
            : "deferral until \(name)"
        }
        queuedAt = max(ready, reached) + delay
      }
      if now < queuedAt { return "delay \(DurationText.format(delay))" }
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
    list(step)
  }

  /// Binary search: the list stays in manifest order at the cost of a shift, however long it is.
  private func position(of step: Int) -> Int {
    var low = 0
    var high = listed.count
    while low < high {
      let middle = (low + high) / 2
      if listed[middle] < step { low = middle + 1 } else { high = middle }
    }
    return low
  }

  private mutating func list(_ step: Int) {
    let index = position(of: step)
    if index == listed.count || listed[index] != step { listed.insert(step, at: index) }
  }

  private mutating func unlist(_ step: Int) {
    let index = position(of: step)
    if index < listed.count, listed[index] == step { listed.remove(at: index) }
  }
}
