/// The launch's active time: the engine clock's time since the launch started, less the time
/// the launch spent paused.
///
/// Every time a launch measures (timeouts, delays, backoffs, the splash, the report's times)
/// is active time, so a launch paused while the user was away, or a process the system
/// suspended, comes back to the same deadlines it left.
final class ActiveClock: Sendable {
  /// One pause: when it began, in active time, and how long it lasted in real time.
  struct Pause: Sendable, Equatable {
    var at: Duration
    var duration: Duration
  }

  private struct State {
    /// When the current pause began, in real time since the start.
    var pausedSince: Duration?
    var pausedTotal = Duration.zero
    var pauses: [Pause] = []
    /// The latest real time anyone read: a reading much later than it means the process did
    /// not run in between (it was stopped), when suspensions are detected.
    var lastReading = Duration.zero
    var resumeWaiters: [Int: (CheckedContinuation<Void, Never>, Participation.Suspension?)] = [:]
    var cancelledWaiters: Set<Int> = []
    var nextWaiter = 0
  }

  /// How real time is read and slept on: the continuous clock directly (an app's launch), or
  /// any other clock (a test's manual one) through closures.
  private enum Wall: Sendable {
    case continuous(start: ContinuousClock.Instant)
    case other(
      now: @Sendable () -> Duration, sleep: @Sendable (Duration) async throws -> Void)
  }

  private let wall: Wall
  /// A gap between two readings longer than this counts as a pause: the process was stopped
  /// (`kill -STOP`) or suspended without being told. `nil` when nothing is detected.
  private let suspensionGap: Duration?
  private let state = Locked(State())

  /// A clock counting from `start` on `clock`.
  init<C: Clock>(_ clock: C, start: C.Instant, suspensionGap: Duration? = nil)
  where C.Duration == Duration {
    if C.self == ContinuousClock.self {
      // The same type, known without a cast: an app's launch reads the clock with no closure
      // between, and makes none (two allocations each launch paid before).
      wall = .continuous(start: unsafeBitCast(start, to: ContinuousClock.Instant.self))
    } else {
      wall = .other(
        now: { start.duration(to: clock.now) },
        sleep: { time in
          try await clock.sleep(until: start.advanced(by: time), tolerance: nil)
        })
    }
    self.suspensionGap = suspensionGap
  }

  /// Real time since the launch started, on the engine's clock.
  private func wallNow() -> Duration {
    switch wall {
    case .continuous(let start): start.duration(to: .now)
    case .other(let now, _): now()
    }
  }

  /// Sleeps until a real time since the launch started, on the engine's clock.
  private func wallSleep(_ time: Duration) async throws {
    switch wall {
    case .continuous(let start):
      try await ContinuousClock().sleep(until: start.advanced(by: time), tolerance: nil)
    case .other(_, let sleep): try await sleep(time)
    }
  }

  /// The active time since the launch started.
  func now() -> Duration {
    state.withLock { state in
      let wall = wallNow()
      if let since = state.pausedSince { return since - state.pausedTotal }
      noteSuspension(ending: wall, in: &state)
      return wall - state.pausedTotal
    }
  }

  /// Counts a gap in the readings as a pause, when it is long enough to be a suspension.
  private func noteSuspension(ending wall: Duration, in state: inout State) {
    if let suspensionGap, wall - state.lastReading > suspensionGap {
      let gap = wall - state.lastReading
      state.pauses.append(Pause(at: state.lastReading - state.pausedTotal, duration: gap))
      state.pausedTotal += gap
    }
    state.lastReading = max(state.lastReading, wall)
  }

  /// Whether the launch is paused now.
  var isPaused: Bool { state.withLock { $0.pausedSince != nil } }

  /// The pauses so far; one still going counts until now.
  var pauses: [Pause] {
    state.withLock { state in
      guard let since = state.pausedSince else { return state.pauses }
      return state.pauses + [Pause(at: since - state.pausedTotal, duration: wallNow() - since)]
    }
  }

  /// Real time spent paused so far, a pause still going included.
  var pausedTotal: Duration {
    state.withLock { state in
      state.pausedTotal + (state.pausedSince.map { wallNow() - $0 } ?? .zero)
    }
  }

  /// Stops active time; returns when it stopped, or `nil` if it already was paused.
  func pause() -> Duration? {
    state.withLock { state in
      guard state.pausedSince == nil else { return nil }
      let wall = wallNow()
      noteSuspension(ending: wall, in: &state)
      state.pausedSince = wall
      return wall - state.pausedTotal
    }
  }

  /// Lets active time run again; returns the active time and the pause's real length, or `nil`
  /// if it was not paused.
  func resume() -> (at: Duration, pausedFor: Duration)? {
    let (result, waiters) = state.withLock {
      state -> (
        (at: Duration, pausedFor: Duration)?,
        [(CheckedContinuation<Void, Never>, Participation.Suspension?)]
      ) in
      guard let since = state.pausedSince else { return (nil, []) }
      let wall = wallNow()
      let length = max(.zero, wall - since)
      state.pauses.append(Pause(at: since - state.pausedTotal, duration: length))
      state.pausedTotal += length
      state.pausedSince = nil
      state.lastReading = max(state.lastReading, wall)
      let waiters = Array(state.resumeWaiters.values)
      state.resumeWaiters = [:]
      return ((wall - state.pausedTotal, length), waiters)
    }
    for (waiter, participation) in waiters {
      participation?.rejoin()
      waiter.resume()
    }
    return result
  }

  /// Notes that the process is running now: with suspension detection, something must read
  /// the clock more often than the gap, or a quiet stretch would look like a suspension.
  func heartbeat() {
    _ = now()
  }

  /// Sleeps until the active time reaches `deadline`; a pause meanwhile moves the wake-up by
  /// its length.
  func sleep(until deadline: Duration) async throws {
    enum Next {
      case done
      case sleep(until: Duration)
      case waitForResume
    }
    while true {
      try Task.checkCancellation()
      let next: Next = state.withLock { state in
        guard state.pausedSince == nil else { return .waitForResume }
        let wall = wallNow()
        noteSuspension(ending: wall, in: &state)
        return wall - state.pausedTotal >= deadline
          ? .done : .sleep(until: deadline + state.pausedTotal)
      }
      switch next {
      case .done: return
      case .sleep(let wall): try await wallSleep(wall)
      case .waitForResume: await waitForResume()
      }
    }
  }

  /// Returns when the launch resumes, or the task is cancelled.
  private func waitForResume() async {
    let id = state.withLock { state in
      defer { state.nextWaiter += 1 }
      return state.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumesNow = state.withLock { state in
          if state.pausedSince == nil || state.cancelledWaiters.remove(id) != nil { return true }
          // A test clock's count leaves out a task waiting for the launch to resume; only once
          // it waits, so a resume racing in cannot let the clock move while it goes on.
          state.resumeWaiters[id] = (continuation, Participation.suspend())
          return false
        }
        if resumesNow { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { state in
        guard let waiter = state.resumeWaiters.removeValue(forKey: id) else {
          state.cancelledWaiters.insert(id)
          return nil as (CheckedContinuation<Void, Never>, Participation.Suspension?)?
        }
        return waiter
      }
      waiter?.1?.rejoin()
      waiter?.0.resume()
    }
  }

  /// The clock as steps see it.
  var launchClock: LaunchClock {
    LaunchClock(now: { self.now() }, sleep: { try await self.sleep(until: $0) })
  }
}
