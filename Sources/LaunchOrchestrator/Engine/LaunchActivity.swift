/// What a test clock needs to know to move time only once a launch has nothing left to do
/// at the current time: how many of the launch's tasks are running rather than asleep.
///
/// A test clock (`LaunchTesting.ManualClock`) owns one. The engine counts each task it starts
/// (an attempt, its timer) from before the task exists to its end; a task asleep on the test
/// clock, or waiting for a paused launch to resume, does not count while it waits, and is
/// counted again by whoever wakes it, before it runs. The count is zero exactly when every
/// such task is asleep or done, which is when the clock may move on.
package final class LaunchActivity: Sendable {
  private struct State {
    var running = 0
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Locked(State())

  package init() {}

  /// A task of the launch is about to run.
  package func begin() {
    state.withLock { $0.running += 1 }
  }

  /// A task of the launch stopped running: it ended, or went to sleep.
  package func end() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.running -= 1
      guard state.running == 0 else { return [] }
      defer { state.idleWaiters = [] }
      return state.idleWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once no task of the launch is running.
  package func whenIdle() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let idle = state.withLock { state in
        if state.running == 0 { return true }
        state.idleWaiters.append(continuation)
        return false
      }
      if idle { continuation.resume() }
    }
  }

  /// Runs `body` as a counted task, whose ``begin()`` the caller already made: it ends the
  /// count when `body` returns, and sleeps in it leave the count while they wait.
  package func run<T: Sendable>(_ body: () async -> T) async -> T {
    let participation = Participation(activity: self)
    let result = await Participation.$current.withValue(participation) { await body() }
    participation.leave()
    return result
  }
}

/// One counted task's part in a ``LaunchActivity``: whether it counts now.
///
/// Task-local values pass to the tasks a task starts; only the task that made its
/// participation may leave or rejoin the count with it, so a task started from a counted one
/// (a session's splash timer) is not taken for it.
package final class Participation: Sendable {
  /// The counted task running now, if any.
  @TaskLocal package static var current: Participation?

  let activity: LaunchActivity
  private let owner: Int?
  private let counted = Locked(true)

  init(activity: LaunchActivity) {
    self.activity = activity
    owner = withUnsafeCurrentTask { $0?.hashValue }
  }

  /// The current task's participation, if it is counted now and this task made it.
  private static var owned: Participation? {
    let task = withUnsafeCurrentTask { $0?.hashValue }
    guard let current, current.owner == task else { return nil }
    return current
  }

  /// Leaves the count for a wait (a sleep on the test clock, a paused launch); returns what the
  /// waker hands to ``rejoin()`` before waking the task, or `nil` for a task not counted.
  package static func suspend() -> Participation? {
    guard let participation = owned, participation.leaveIfCounted() else { return nil }
    return participation
  }

  /// Counts the task again, before it is woken: the count must not reach zero between the
  /// wake-up and the task running.
  package func rejoin() {
    let joins = counted.withLock { counted in
      defer { counted = true }
      return !counted
    }
    if joins { activity.begin() }
  }

  /// Leaves the count for good (the task ended, or handed its work to tasks counted on their
  /// own); does nothing the second time.
  package func leave() {
    _ = leaveIfCounted()
  }

  /// Hands the current task's count over: the engine calls it once the launch's first steps
  /// are counted, so the task that started the launch may wait for its end uncounted.
  package static func handOver() {
    // Not only the owner: a session runs the launch in a child task (`async let`) of the task
    // the test started, and that task only waits for it.
    current?.leave()
  }

  private func leaveIfCounted() -> Bool {
    let leaves = counted.withLock { counted in
      defer { counted = false }
      return counted
    }
    if leaves { activity.end() }
    return leaves
  }
}

/// A clock whose launches count their tasks in ``activity``, so it can tell when they are
/// all asleep: the test clock.
package protocol ActivityTrackingClock: Clock {
  /// The count the launches on this clock keep.
  var activity: LaunchActivity { get }
}
