import Testing

@testable import LaunchOrchestrator

/// Drives a ``LaunchScheduler`` by hand and keeps a compact log of its events, so tests read
/// as timelines: `["0s start a", "1s done a", "1s finish succeeded"]`.
struct SchedulerHarness {
  private(set) var scheduler: LaunchScheduler
  private(set) var log: [String] = []
  private(set) var cancelledTokens: [Int] = []
  /// Running attempts by step id.
  private(set) var running: [String: LaunchScheduler.Attempt] = [:]

  init(_ json: String, maxConcurrency: Int? = nil, gracePeriod: Duration = .seconds(1)) throws {
    let plan = try loadPlan(json)
    scheduler = LaunchScheduler(
      plan: plan, maxConcurrency: maxConcurrency ?? plan.manifest.maxConcurrency,
      gracePeriod: gracePeriod)
  }

  /// Ids of the steps running now, sorted.
  var runningSteps: [String] { running.keys.sorted() }

  mutating func start() {
    scheduler.start(at: .zero)
    applyActions()
  }

  mutating func succeed(_ id: String, at time: Duration) {
    finish(id, .succeeded, at: time)
  }

  mutating func fail(_ id: String, at time: Duration, _ message: String = "boom") {
    finish(id, .failed(message), at: time)
  }

  mutating func route(_ id: String, to route: LaunchRoute, at time: Duration) {
    finish(id, .routed(route), at: time)
  }

  mutating func finish(_ id: String, _ result: LaunchScheduler.AttemptResult, at time: Duration) {
    guard let attempt = running.removeValue(forKey: id) else {
      Issue.record("'\(id)' is not running")
      return
    }
    scheduler.attemptFinished(token: attempt.token, result: result, at: time)
    applyActions()
  }

  /// The running attempt of a main-isolated step began its code at `time`, as the engine
  /// tells the scheduler when the attempt ends.
  mutating func began(_ id: String, at time: Duration) {
    guard let attempt = running[id] else {
      Issue.record("'\(id)' is not running")
      return
    }
    scheduler.attemptBegan(token: attempt.token, at: time)
  }

  /// An attempt the scheduler already gave up on began its code at `time`.
  mutating func beganAbandoned(token: Int, at time: Duration) {
    scheduler.attemptBegan(token: token, at: time)
  }

  /// Returns the result of an attempt that the scheduler already gave up on.
  mutating func finishAbandoned(token: Int, at time: Duration) {
    scheduler.attemptFinished(token: token, result: .succeeded, at: time)
    applyActions()
  }

  /// Starts the launch with the steps `served` from the cache.
  mutating func start(served: [String]) {
    let indices = served.compactMap { id in scheduler.plan.steps.firstIndex { $0.id == id } }
    scheduler.start(at: .zero, served: indices)
    applyActions()
  }

  /// The app ensures on-demand step `id` at `time`.
  mutating func activate(_ id: String, at time: Duration) {
    guard let step = scheduler.plan.steps.firstIndex(where: { $0.id == id }) else {
      Issue.record("no step '\(id)'")
      return
    }
    scheduler.activate(step, at: time)
    applyActions()
  }

  mutating func advance(to time: Duration) {
    scheduler.advance(to: time)
    applyActions()
  }

  mutating func cancel(at time: Duration) {
    scheduler.cancel(at: time)
    applyActions()
  }

  /// The report the engine would write now, the launch having taken as long as its last event.
  func report() -> LaunchReport {
    let duration = scheduler.records.compactMap(\.end).max() ?? .zero
    return LaunchReport(plan: scheduler.plan, scheduler: scheduler, duration: duration)
  }

  mutating func nextDeadline() -> Duration? {
    scheduler.nextDeadline()
  }

  /// Log lines since the last call.
  mutating func takeLog() -> [String] {
    defer { log.removeAll() }
    return log
  }

  private mutating func applyActions() {
    for action in scheduler.takeActions() {
      switch action {
      case .start(let attempt):
        running[scheduler.plan.steps[attempt.step].id] = attempt
      case .cancel(let attempt):
        let token = attempt.token
        cancelledTokens.append(token)
        if let id = running.first(where: { $0.value.token == token })?.key,
          scheduler.step(forLiveToken: token) == nil
        {
          running[id] = nil
        }
      case .abandon, .abandonedEnded:
        // The session's record of abandoned attempts: the engine's.
        break
      }
    }
    for event in scheduler.takeEvents() {
      log.append("\(DurationText.format(event.time)) \(Self.describe(event.kind))")
    }
  }

  static func describe(_ kind: LaunchEvent.Kind) -> String {
    switch kind {
    case .started(let step, let attempt):
      attempt == 1 ? "start \(step)" : "start \(step)#\(attempt)"
    case .progress(let step, let fraction, let message):
      "progress \(step) \(fraction ?? -1) \(message ?? "")"
    case .log(let step, let message): "log \(step): \(message)"
    case .succeeded(let step, let usedFallback):
      usedFallback ? "done \(step) (fallback)" : "done \(step)"
    case .failed(let step, let error): "fail \(step): \(error)"
    case .timedOut(let step, let timeout): "timeout \(step) \(DurationText.format(timeout))"
    case .retrying(let step, let next, let error, let delay, let fallback):
      fallback
        ? "fallback \(step) after: \(error)"
        : "retry \(step)#\(next) in \(DurationText.format(delay)) after: \(error)"
    case .skipped(let step, let reason): "skip \(step): \(reason)"
    case .cancelled(let step): "cancel \(step)"
    case .cached(let step): "cached \(step)"
    case .refreshed(let step): "refreshed \(step)"
    case .refreshFailed(let step, let error): "refresh failed \(step): \(error)"
    case .milestone(let name): "milestone \(name)"
    case .routed(let route, let step): "route \(route) by \(step)"
    case .finished(let outcome): "finish \(outcome.rawValue)"
    case .reused(let step): "reused \(step)"
    case .paused: "paused"
    case .resumed(let pausedFor): "resumed after \(DurationText.format(pausedFor))"
    case .signalled(let name): "signal \(name)"
    }
  }
}
