import Observation

/// A launch as a splash screen sees it: what phase it is in, how far along, which steps run,
/// which milestones are reached, and where it routed or why it failed.
///
/// ```swift
/// @State private var launch = LaunchSession()
///
/// var body: some View {
///   SplashView(progress: launch.progress, message: launch.currentMessage)
///     .task { await launch.run(plan, on: LaunchEngine()) }
/// }
/// ```
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
  /// Steps finished, however they ended, out of all steps: from 0 to 1.
  public private(set) var progress = 0.0
  /// The ids of the steps running now, in the order they started.
  public private(set) var runningSteps: [String] = []
  /// The latest progress message of a running step (`"Upgrading library... 45%"`), if any.
  public private(set) var currentMessage: String?
  /// When each reached milestone was reached, as time since the launch started.
  public private(set) var milestones: [String: Duration] = [:]
  /// The route a step ended the launch with.
  public private(set) var route: LaunchRoute?
  /// Why the launch failed, when it did.
  public private(set) var error: String?
  /// The report, once the launch is over.
  public private(set) var report: LaunchReport?

  private var totalSteps = 0
  private var finishedSteps = 0

  /// A session that has not started.
  public init() {}

  /// Whether `milestone` has been reached (say `interactive`, to dismiss the splash).
  public func isReached(_ milestone: String) -> Bool {
    milestones[milestone] != nil
  }

  /// Runs `plan` on `engine`, updating the session as events arrive, and returns the report.
  public func run<C: Clock>(_ plan: LaunchPlan, on engine: LaunchEngine<C>) async -> LaunchReport
  where C.Duration == Duration {
    start(stepCount: plan.steps.count)
    let (events, continuation) = LaunchEvents.makeStream()
    async let report = engine.run(plan, events: continuation)
    for await event in events { apply(event) }
    let finished = await report
    self.report = finished
    return finished
  }

  /// Resets the session for a launch of `stepCount` steps; ``run(_:on:)`` calls it.
  public func start(stepCount: Int) {
    phase = .running
    totalSteps = stepCount
    finishedSteps = 0
    progress = stepCount == 0 ? 1 : 0
    runningSteps = []
    currentMessage = nil
    milestones = [:]
    route = nil
    error = nil
    report = nil
  }

  /// Updates the session with one event; for apps that consume the event stream themselves.
  public func apply(_ event: LaunchEvent) {
    switch event.kind {
    case .started(let step, _):
      if !runningSteps.contains(step) { runningSteps.append(step) }
    case .progress(_, let fraction, let message):
      let percent = fraction.map { " \(Int(($0 * 100).rounded()))%" } ?? ""
      currentMessage = message.map { $0 + percent } ?? currentMessage
    case .succeeded(let step, _), .cancelled(let step):
      stepEnded(step)
    case .failed(let step, let message):
      stepEnded(step)
      error = error ?? "'\(step)' failed: \(message)"
    case .timedOut(let step, let timeout):
      stepEnded(step)
      error = error ?? "'\(step)' timed out after \(DurationText.format(timeout))"
    case .skipped(let step, _):
      stepEnded(step)
    case .retrying(let step, _, _, _, _):
      runningSteps.removeAll { $0 == step }
    case .milestone(let name):
      milestones[name] = event.time
    case .routed(let route, _):
      self.route = route
    case .log:
      break
    case .finished(let outcome):
      phase = .finished(outcome)
      if outcome != .failed { error = nil }
      currentMessage = nil
    }
  }

  private func stepEnded(_ step: String) {
    runningSteps.removeAll { $0 == step }
    finishedSteps += 1
    progress = totalSteps == 0 ? 1 : Double(finishedSteps) / Double(totalSteps)
    if runningSteps.isEmpty { currentMessage = nil }
  }
}
