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
/// let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
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
  public func run(_ plan: LaunchPlan, events: AsyncStream<LaunchEvent>.Continuation? = nil) async
    -> LaunchReport
  {
    let run = LaunchRun(
      plan: plan, clock: LaunchClock(clock, start: clock.now), options: options, events: events)
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
  private enum Message: Sendable {
    case finished(token: Int, outcome: Outcome)
    case report(token: Int, message: StepMessage)
    case timer(deadline: Duration)
    case cancel
  }

  private enum Outcome: Sendable {
    case succeeded(any Sendable)
    case failed(String)
    case routed(LaunchRoute)
  }

  private let plan: LaunchPlan
  private let clock: LaunchClock
  private let events: AsyncStream<LaunchEvent>.Continuation?
  private let inbox = Inbox<Message>()
  /// Step outputs, written by the loop and read by dependents' tasks.
  private let outputs: Locked<[(any Sendable)?]>
  private var scheduler: LaunchScheduler
  /// The task of each step's current attempt, to cancel it.
  private var tasks: [(token: Int, task: Task<Void, Never>)?]
  private var timer: Task<Void, Never>?
  private var armedDeadline: Duration?
  private var pendingEvents: [LaunchEvent] = []

  init(
    plan: LaunchPlan, clock: LaunchClock, options: LaunchOptions,
    events: AsyncStream<LaunchEvent>.Continuation?
  ) {
    self.plan = plan
    self.clock = clock
    self.events = events
    outputs = Locked(Array(repeating: nil, count: plan.steps.count))
    tasks = Array(repeating: nil, count: plan.steps.count)
    scheduler = LaunchScheduler(
      plan: plan, maxConcurrency: options.maxConcurrency ?? plan.manifest.maxConcurrency,
      gracePeriod: options.cancellationGracePeriod)
  }

  private var elapsed: Duration { clock.now() }

  func execute() async -> LaunchReport {
    perform(scheduler.start(at: .zero))
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

  private func handle(_ message: Message) {
    switch message {
    case .finished(let token, let outcome):
      let liveStep = scheduler.step(forLiveToken: token)
      if let step = liveStep, tasks[step]?.token == token { tasks[step] = nil }
      let result: LaunchScheduler.AttemptResult
      switch outcome {
      case .succeeded(let value):
        if let step = liveStep { outputs.withLock { $0[step] = value } }
        result = .succeeded
      case .failed(let message): result = .failed(message)
      case .routed(let route): result = .routed(route)
      }
      perform(scheduler.attemptFinished(token: token, result: result, at: elapsed))
    case .report(let token, let message):
      perform(scheduler.stepReported(token: token, message: message, at: elapsed))
    case .timer(let deadline):
      if armedDeadline == deadline { armedDeadline = nil }
      perform(scheduler.advance(to: max(elapsed, deadline)))
    case .cancel:
      perform(scheduler.cancel(at: elapsed))
    }
  }

  private func perform(_ actions: [LaunchScheduler.Action]) {
    for action in actions {
      switch action {
      case .start(let attempt): tasks[attempt.step] = (attempt.token, launch(attempt))
      case .cancel(let attempt):
        if let current = tasks[attempt.step], current.token == attempt.token {
          current.task.cancel()
          tasks[attempt.step] = nil
        }
      case .emit(let event): pendingEvents.append(event)
      }
    }
  }

  /// Publishes the events of a burst and re-arms the timer for the burst's changes.
  private func publish() {
    if let events {
      for event in pendingEvents { events.yield(event) }
    }
    pendingEvents.removeAll(keepingCapacity: true)
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
    let planned = plan.steps[attempt.step]
    let action = attempt.isFallback ? planned.fallbackAction ?? planned.action : planned.action
    let (inbox, outputs, token) = (inbox, outputs, attempt.token)
    let (plan, step) = (plan, attempt.step)
    let context = StepContext(
      stepID: planned.id, attempt: attempt.number, isFallback: attempt.isFallback,
      manifestDirectory: plan.manifestDirectory, attemptStart: elapsed, clock: clock,
      // Walked only when a plugin asks for an input: most steps never do.
      outputs: {
        let dependencies = plan.hardDependencyClosure(of: step)
        return outputs.withLock { values in dependencies.compactMap { values[$0] } }
      },
      report: { message in inbox.post(.report(token: token, message: message)) })
    let body: @Sendable () async -> Void = {
      let outcome: Outcome
      do {
        outcome = .succeeded(try await action.execute(context))
      } catch let route as LaunchRoute {
        outcome = .routed(route)
      } catch {
        outcome = .failed(Self.describe(error))
      }
      inbox.post(.finished(token: token, outcome: outcome))
    }
    let priority = planned.effectivePriority.taskPriority
    // Unstructured on purpose: a timeout must let the launch move on even when a plugin
    // ignores cancellation, and a task group would wait for such a child forever. The run
    // keeps every handle and cancels it when the attempt times out or the launch ends.
    if planned.isolation == .main {
      return Task(
        executorPreference: MainThreadExecutor.shared, priority: priority, operation: body)
    }
    if action.isBlocking {
      return Task(executorPreference: BlockingExecutor.shared, priority: priority, operation: body)
    }
    return Task(priority: priority, operation: body)
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
