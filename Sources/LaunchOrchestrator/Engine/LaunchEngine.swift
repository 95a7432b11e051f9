import Foundation

/// Settings of one launch run that are not part of the manifest.
public struct LaunchOptions: Sendable {
  /// Overrides the manifest's `maxConcurrency` when set.
  public var maxConcurrency: Int?
  /// How long steps still running when the launch ends get to stop before they are
  /// reported `cancelled` and left behind.
  public var cancellationGracePeriod: Duration

  /// Creates options.
  public init(maxConcurrency: Int? = nil, cancellationGracePeriod: Duration = .seconds(1)) {
    self.maxConcurrency = maxConcurrency
    self.cancellationGracePeriod = cancellationGracePeriod
  }
}

/// Runs launch plans: every step starts the moment its dependencies, deferral and the
/// concurrency limit allow, in priority order, with timeouts that hold.
///
/// ```swift
/// let (events, continuation) = LaunchEvents.makeStream()
/// async let report = LaunchEngine().run(plan, events: continuation)
/// for await event in events { print(event) }
/// print(await report.outcome)
/// ```
public struct LaunchEngine<C: Clock>: Sendable where C.Duration == Duration {
  /// The clock that times steps, delays, backoffs and timeouts.
  public var clock: C
  /// Run settings.
  public var options: LaunchOptions

  /// Creates an engine on `clock`; tests pass a manual clock.
  public init(clock: C, options: LaunchOptions = LaunchOptions()) {
    self.clock = clock
    self.options = options
  }

  /// Runs `plan` to its end and reports what happened.
  ///
  /// Events are delivered to `events` in order, and the continuation is finished when the
  /// launch is. Cancelling the calling task cancels the launch: running steps are cancelled,
  /// the rest skipped, and the report's outcome is `cancelled`.
  public func run(_ plan: LaunchPlan, events: LaunchEvents.Continuation) async -> LaunchReport {
    await run(plan, sink: .events(events))
  }

  /// Runs `plan` to its end and reports what happened, delivering events to an `AsyncStream`.
  ///
  /// The same as ``run(_:events:)-(_,LaunchEvents.Continuation)``; ``LaunchEvents`` costs
  /// less per event.
  public func run(_ plan: LaunchPlan, events: AsyncStream<LaunchEvent>.Continuation? = nil) async
    -> LaunchReport
  {
    await run(plan, sink: events.map(EventSink.stream))
  }

  private func run(_ plan: LaunchPlan, sink: EventSink?) async -> LaunchReport {
    let run = LaunchRun(
      plan: plan, clock: LaunchClock(clock, start: clock.now), options: options, events: sink)
    return await run.execute()
  }
}

extension LaunchEngine where C == ContinuousClock {
  /// Creates an engine on the continuous clock.
  public init(options: LaunchOptions = LaunchOptions()) {
    self.init(clock: ContinuousClock(), options: options)
  }
}

/// The state of one run of a plan, owned by the task that calls ``LaunchEngine/run(_:events:)``.
/// Not generic over the clock: the run is the engine's hot path, and unspecialized generic
/// code there pays for runtime metadata lookups on every step.
private final class LaunchRun {
  private let shared: SharedRun
  private let events: EventSink?
  private var scheduler: LaunchScheduler
  /// The task of each step's current attempt, to cancel it.
  private var tasks: [(token: Int, task: Task<Void, Never>)?]
  private var timer: Task<Void, Never>?
  private var armedDeadline: Duration?
  private var pendingEvents: [LaunchEvent] = []

  init(
    plan: LaunchPlan, clock: LaunchClock, options: LaunchOptions,
    events: EventSink?
  ) {
    shared = SharedRun(plan: plan, clock: clock)
    self.events = events
    tasks = Array(repeating: nil, count: plan.steps.count)
    scheduler = LaunchScheduler(
      plan: plan, maxConcurrency: options.maxConcurrency ?? plan.manifest.maxConcurrency,
      gracePeriod: options.cancellationGracePeriod)
  }

  private var plan: LaunchPlan { shared.plan }
  private var clock: LaunchClock { shared.clock }
  private var inbox: Inbox<RunMessage> { shared.inbox }
  private var elapsed: Duration { clock.now() }

  func execute() async -> LaunchReport {
    scheduler.start(at: .zero)
    performActions()
    publish()
    let inbox = self.inbox
    await withTaskCancellationHandler {
      while !scheduler.isFinished {
        // What arrived while the loop was busy is handled in one burst, and the burst's events
        // published together: the event consumer wakes once per burst. Bursts are bounded so a
        // flood of messages cannot hold back events or the timer's re-arming.
        handle(await inbox.next())
        var burst = 1
        while burst < 64, !scheduler.isFinished, let message = inbox.poll() {
          handle(message)
          burst += 1
        }
        publish()
      }
    } onCancel: {
      inbox.post(.cancel)
    }
    let duration = elapsed
    timer?.cancel()
    events?.finish()
    return LaunchReport(plan: plan, scheduler: scheduler, duration: duration)
  }

  private func handle(_ message: RunMessage) {
    switch message {
    case .finished(let token, let outcome):
      let liveStep = scheduler.step(forLiveToken: token)
      if let step = liveStep, tasks[step]?.token == token { tasks[step] = nil }
      let result: LaunchScheduler.AttemptResult
      switch outcome {
      case .succeeded(let value):
        if let step = liveStep { shared.outputs.withLock { $0[step] = value } }
        result = .succeeded
      case .failed(let message): result = .failed(message)
      case .routed(let route): result = .routed(route)
      }
      scheduler.attemptFinished(token: token, result: result, at: elapsed)
    case .report(let token, let message):
      scheduler.stepReported(token: token, message: message, at: elapsed)
    case .timer(let deadline):
      if armedDeadline == deadline { armedDeadline = nil }
      scheduler.advance(to: max(elapsed, deadline))
    case .cancel:
      scheduler.cancel(at: elapsed)
    }
    performActions()
  }

  private func performActions() {
    scheduler.drainActions { action in
      switch action {
      case .start(let attempt): tasks[attempt.step] = (attempt.token, launch(attempt))
      case .cancel(let attempt):
        if let current = tasks[attempt.step], current.token == attempt.token {
          current.task.cancel()
          tasks[attempt.step] = nil
        }
      case .emit(let event): if events != nil { pendingEvents.append(event) }
      }
    }
  }

  /// Publishes the events of a burst and re-arms the timer for the burst's changes.
  private func publish() {
    if let events, !pendingEvents.isEmpty {
      events.publish(pendingEvents)
      pendingEvents.removeAll(keepingCapacity: true)
    }
    rearmTimer()
  }

  /// Keeps one timer armed for the scheduler's earliest deadline; a later deadline never
  /// replaces an armed earlier one, so steps with timeouts cost no timer each.
  private func rearmTimer() {
    guard let next = scheduler.nextDeadline() else { return }
    if let armedDeadline, armedDeadline <= next { return }
    timer?.cancel()
    armedDeadline = next
    let (clock, inbox) = (clock, inbox)
    timer = Task(priority: .high) {
      do {
        try await clock.sleep(next)
      } catch {
        return
      }
      inbox.post(.timer(deadline: next))
    }
  }

  private func launch(_ attempt: LaunchScheduler.Attempt) -> Task<Void, Never> {
    let step = attempt.step
    let action =
      attempt.isFallback
      ? plan.steps[step].fallbackAction ?? plan.steps[step].action : plan.steps[step].action
    let running = RunningAttempt(
      token: attempt.token, step: step, number: attempt.number, isFallback: attempt.isFallback,
      start: elapsed, action: action, run: shared)
    let priority = plan.steps[step].effectivePriority.taskPriority
    // Unstructured on purpose: a timeout must let the launch move on even when a plugin
    // ignores cancellation, and a task group would wait for such a child forever. The run
    // keeps every handle and cancels it when the attempt times out or the launch ends.
    if plan.steps[step].isolation == .main {
      return Task(executorPreference: MainThreadExecutor.shared, priority: priority) {
        await running.execute()
      }
    }
    if action.isBlocking {
      return Task(executorPreference: BlockingExecutor.shared, priority: priority) {
        await running.execute()
      }
    }
    return Task(priority: priority) { await running.execute() }
  }
}

/// What the attempts of a run share with the run loop.
private final class SharedRun: Sendable {
  let plan: LaunchPlan
  let clock: LaunchClock
  let inbox = Inbox<RunMessage>()
  /// Step outputs, written by the loop and read by dependents' tasks.
  let outputs: Locked<[(any Sendable)?]>

  init(plan: LaunchPlan, clock: LaunchClock) {
    self.plan = plan
    self.clock = clock
    outputs = Locked(Array(repeating: nil, count: plan.steps.count))
  }
}

/// A message to the run loop.
private enum RunMessage: Sendable {
  case finished(token: Int, outcome: AttemptOutcome)
  case report(token: Int, message: StepMessage)
  case timer(deadline: Duration)
  case cancel
}

/// How an attempt's code ended.
private enum AttemptOutcome: Sendable {
  case succeeded(any Sendable)
  case failed(String)
  case routed(LaunchRoute)
}

/// One attempt of a step: it runs the plugin, hosts its context, and tells the loop how it
/// ended. One object per attempt keeps the hot path to two allocations, this and its task.
private final class RunningAttempt: StepHost {
  let token: Int
  let step: Int
  let number: Int
  let isFallback: Bool
  let start: Duration
  let action: PreparedStep
  let run: SharedRun

  init(
    token: Int, step: Int, number: Int, isFallback: Bool, start: Duration,
    action: PreparedStep, run: SharedRun
  ) {
    self.token = token
    self.step = step
    self.number = number
    self.isFallback = isFallback
    self.start = start
    self.action = action
    self.run = run
  }

  func execute() async {
    let context = StepContext(
      stepID: run.plan.steps[step].id, attempt: number, isFallback: isFallback,
      manifestDirectory: run.plan.manifestDirectory, attemptStart: start, clock: run.clock,
      host: self)
    let outcome: AttemptOutcome
    do {
      outcome = .succeeded(try await action.execute(context))
    } catch let route as LaunchRoute {
      outcome = .routed(route)
    } catch {
      outcome = .failed(Self.describe(error))
    }
    run.inbox.post(.finished(token: token, outcome: outcome))
  }

  func dependencyOutputs() -> [any Sendable] {
    // Walked only when a plugin asks for an input: most steps never do.
    let dependencies = run.plan.hardDependencyClosure(of: step)
    return run.outputs.withLock { values in dependencies.compactMap { values[$0] } }
  }

  func report(_ message: StepMessage) {
    run.inbox.post(.report(token: token, message: message))
  }

  private static func describe(_ error: any Error) -> String {
    switch error {
    case let failure as StepFailure: failure.message
    case is CancellationError: "cancelled"
    case let error as any CustomStringConvertible: error.description
    default: error.localizedDescription
    }
  }
}

/// Where a run delivers its events.
private enum EventSink: Sendable {
  case events(LaunchEvents.Continuation)
  case stream(AsyncStream<LaunchEvent>.Continuation)

  func publish(_ burst: [LaunchEvent]) {
    switch self {
    case .events(let continuation): continuation.yield(contentsOf: burst)
    case .stream(let continuation): for event in burst { continuation.yield(event) }
    }
  }

  func finish() {
    switch self {
    case .events(let continuation): continuation.finish()
    case .stream(let continuation): continuation.finish()
    }
  }
}
