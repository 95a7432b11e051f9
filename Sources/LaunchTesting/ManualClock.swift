import LaunchOrchestrator

/// A clock that moves only when a test says so: a launch with a 5 s step runs in well under a
/// second, and every timeout, delay, backoff and splash time is exact.
///
/// ```swift
/// let clock = ManualClock()
/// let launch = clock.start { await LaunchEngine(clock: clock).run(plan) }
/// await clock.advance(by: .seconds(5))   // every step and timer due by then has run
/// let report = await launch.value
/// ```
///
/// ``advance(by:)`` moves time to each deadline in turn and waits until the launches on this
/// clock have nothing left to do at that time (every step asleep on the clock, ended, or
/// waiting for what only the test can give: a signal, a resume, a ``ManualGate``) before
/// moving on. A step's child tasks (a task group's, `async let`) count with it: a step
/// waiting for children asleep on the clock is asleep too. A step that waits for something
/// else (the network) holds the clock until it is done, unless one of its child tasks sleeps
/// on the clock meanwhile, in which case the step counts as waiting for that child. Tasks a
/// step starts with `Task.detached` are not seen: a step waiting for one holds the clock.
public final class ManualClock: Clock, Sendable, ActivityTrackingClock {
  /// A point in the clock's time: how long after its start.
  public struct Instant: InstantProtocol, Sendable {
    /// Time since the clock's start.
    public var offset: Duration

    /// The instant `offset` after the clock's start.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// This instant moved by `duration`.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The time from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes first.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }
  }

  private struct Sleeper {
    let id: Int
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
    let suspension: Participation.Suspension?
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [Sleeper] = []
    var nextID = 0
    var cancelledIDs: Set<Int> = []
  }

  private let state = Locked(State())
  package let activity = LaunchActivity()

  /// A clock at its start.
  public init() {}

  /// The current time.
  public var now: Instant { state.withLock { $0.now } }

  /// No resolution: time moves only when told to.
  public var minimumResolution: Duration { .zero }

  /// Sleeps until the test moves the clock to `deadline`.
  public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let resumeNow: Result<Void, any Error>? = state.withLock { state in
          if state.cancelledIDs.remove(id) != nil { return .failure(CancellationError()) }
          if deadline <= state.now { return .success(()) }
          // A launch's task asleep here no longer holds the clock back.
          state.sleepers.append(
            Sleeper(
              id: id, deadline: deadline, continuation: continuation,
              suspension: Participation.suspend()))
          return nil
        }
        if let resumeNow { continuation.resume(with: resumeNow) }
      }
    } onCancel: {
      let sleeper: Sleeper? = state.withLock { state in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
          state.cancelledIDs.insert(id)
          return nil
        }
        return state.sleepers.remove(at: index)
      }
      sleeper?.suspension?.rejoin()
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Starts `operation` (a launch, a session's `run`) as a task the clock waits for: until it
  /// has started its first steps, ``advance(by:)`` does not move time.
  @discardableResult
  public func start<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> Task<T, Never> {
    activity.begin()
    return Task { [activity] in await activity.run { await operation() } }
  }

  /// Runs `operation` (a launch, a session's `run`, an `ensure`) to its end, moving time to
  /// each deadline in turn whenever nothing else is left to do: a 5 s step takes no real time.
  ///
  /// When the calling task is cancelled (a test's time limit), `operation` is cancelled, and
  /// time goes on moving while it ends: a launch ends with its steps cancelled, or abandoned
  /// after its grace period.
  public func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) async -> T {
    let done = Locked(false)
    let task = start {
      let result = await operation()
      done.withLock { $0 = true }
      return result
    }
    await withTaskCancellationHandler {
      // Not cancellable here: a cancelled operation still needs time to end.
      while true {
        await settle(cancellable: false)
        guard !done.withLock({ $0 }), let next = sleeperDeadlines.first else { break }
        await advance(to: Instant(offset: next), cancellable: false)
      }
    } onCancel: {
      task.cancel()
    }
    return await task.value
  }

  /// Moves time forward by `duration`, deadline by deadline, and returns once every step and
  /// timer due by then has run: each time the clock reaches a deadline, the sleepers due wake
  /// and the launches run until they have nothing left to do at that time.
  ///
  /// When the calling task is cancelled, it returns at once, time left where it got to.
  public func advance(by duration: Duration) async {
    // Time never goes back: a launch's deadlines assume it.
    await advance(to: now.advanced(by: max(duration, .zero)), cancellable: true)
  }

  /// Moves time forward to `offset` since the clock's start, as ``advance(by:)`` does.
  public func advance(to offset: Duration) async {
    await advance(by: offset - now.offset)
  }

  private func advance(to target: Instant, cancellable: Bool) async {
    await settle(cancellable: cancellable)
    while !(cancellable && Task.isCancelled) {
      guard wake(until: target) else { break }
      await settle(cancellable: cancellable)
    }
  }

  /// Moves time to `offset` since the clock's start at once, waking the sleepers due, and
  /// returns without waiting for the launches on the clock.
  ///
  /// For a test that holds up a launch itself while time passes (the main thread kept busy,
  /// so a step isolated to it cannot start), which ``advance(to:)`` would wait for. A step
  /// stuck in the test's hands is better held with a ``ManualGate``, which lets
  /// ``advance(to:)`` work.
  public func jump(to offset: Duration) {
    let target = now.advanced(by: max(offset - now.offset, .zero))
    while wake(until: target) {}
  }

  /// Moves time to the earliest deadline due by `target`, or to `target` when none is, and
  /// wakes the sleepers due then; returns whether there were any.
  private func wake(until target: Instant) -> Bool {
    let due: [Sleeper] = state.withLock { state in
      let next = state.sleepers.map(\.deadline).filter { $0 <= target }.min()
      state.now = max(state.now, next ?? target)
      let now = state.now
      let due = state.sleepers.filter { $0.deadline <= now }
      state.sleepers.removeAll { $0.deadline <= now }
      return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
    }
    for sleeper in due {
      sleeper.suspension?.rejoin()
      sleeper.continuation.resume()
    }
    return !due.isEmpty
  }

  /// Returns once the launches on this clock have nothing left to do now, and the main actor
  /// (where a session applies their events) has caught up with them; or at once when the
  /// calling task is cancelled.
  public func settle() async {
    await settle(cancellable: true)
  }

  private func settle(cancellable: Bool) async {
    await activity.whenIdle(cancellable: cancellable)
    if cancellable && Task.isCancelled { return }
    await Self.catchUpOnTheMainActor()
  }

  /// The deadlines of everyone asleep on the clock, earliest first.
  public var sleeperDeadlines: [Duration] {
    state.withLock { $0.sleepers.map(\.deadline.offset).sorted() }
  }

  /// Queued behind what the main actor has to do, such as a session applying the events just
  /// published, and yielding once more for what that work starts.
  @MainActor private static func catchUpOnTheMainActor() async {
    await Task.yield()
  }
}
