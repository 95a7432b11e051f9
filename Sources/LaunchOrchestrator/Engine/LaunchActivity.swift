/// What a test clock needs to know to move time only once a launch has nothing left to do
/// at the current time: how many of the launch's tasks are running rather than asleep.
///
/// A test clock (`LaunchTesting.ManualClock`) owns one. The engine counts each task it starts
/// (an attempt, its timer) from before the task exists to its end, through a
/// ``Participation``; a task asleep on the test clock, or waiting for a paused launch to
/// resume, does not count while it waits, and is counted again by whoever wakes it, before it
/// runs. The count is zero exactly when every such task is asleep or done, which is when the
/// clock may move on.
package final class LaunchActivity: Sendable {
  private struct State {
    var running = 0
    var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    var nextWaiter = 0
    var cancelledWaiters: Set<Int> = []
  }

  private let state = Locked(State())

  package init() {}

  /// A task of the launch is about to run.
  package func begin() {
    state.withLock { $0.running += 1 }
  }

  /// A task of the launch stopped running: it ended, or went to sleep.
  package func end() {
    for waiter in endTakingWaiters() { waiter.resume() }
  }

  /// Ends one count and takes the idle waiters to resume when the count reaches zero: for a
  /// caller holding a lock of its own, which resumes them once it let go of it.
  fileprivate func endTakingWaiters() -> [CheckedContinuation<Void, Never>] {
    state.withLock { state in
      state.running -= 1
      guard state.running == 0 else { return [] }
      defer { state.idleWaiters = [:] }
      return Array(state.idleWaiters.values)
    }
  }

  /// Returns once no task of the launch is running; when `cancellable`, also as soon as the
  /// calling task is cancelled.
  package func whenIdle(cancellable: Bool = false) async {
    let id = state.withLock { state in
      defer { state.nextWaiter += 1 }
      return state.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let idle = state.withLock { state in
          if state.running == 0 || state.cancelledWaiters.remove(id) != nil { return true }
          state.idleWaiters[id] = continuation
          return false
        }
        if idle { continuation.resume() }
      }
    } onCancel: {
      guard cancellable else { return }
      let waiter = state.withLock { state in
        guard let waiter = state.idleWaiters.removeValue(forKey: id) else {
          state.cancelledWaiters.insert(id)
          return nil as CheckedContinuation<Void, Never>?
        }
        return waiter
      }
      waiter?.resume()
    }
  }

  /// Runs `body` as a counted task, whose ``begin()`` the caller already made: it ends the
  /// count when `body` returns, and sleeps in it leave the count while they wait.
  package func run<T: Sendable>(_ body: () async -> T) async -> T {
    await Participation(activity: self).run(body)
  }
}

/// One counted task's part in a ``LaunchActivity``: whether it counts now.
///
/// Task-local values pass to the tasks a task starts; only the task that runs the
/// participation (its owner) leaves or rejoins the count with it as its own, so a task
/// started from a counted one (a session's splash timer) is not taken for it.
///
/// A step's participation also answers for the tasks the step starts (a task group's
/// children, `async let`): it runs on a ``CountingExecutor``, which the child tasks inherit,
/// so it knows whether any of the step's tasks has a job queued or running. While one of
/// those tasks waits on the test clock and none has a job, the step counts as waiting for it,
/// even though its own task is not asleep: that task is waiting for its children.
package final class Participation: Sendable {
  /// The counted task running now, if any.
  @TaskLocal package static var current: Participation?

  private struct State {
    /// The task that runs the participation, once it started.
    var owner: Int?
    /// Whether the owner is running: not asleep, not ended.
    var ownerRuns = true
    /// Jobs of the participation's tasks queued or running on its executor.
    var jobs = 0
    /// The participation's other tasks (a step's children) waiting on the test clock.
    var waitingChildren = 0
    /// Whether the participation counts in the activity now.
    var counted = true

    var isBusy: Bool { jobs > 0 || (ownerRuns && waitingChildren == 0) }
  }

  let activity: LaunchActivity
  /// Whether it runs on a ``CountingExecutor`` that reports its jobs.
  private let tracksJobs: Bool
  private let state = Locked(State())

  /// A participation counted from now: the caller made the activity's ``LaunchActivity/begin()``
  /// for it. With `tracksJobs`, its tasks run on a ``CountingExecutor`` of it.
  init(activity: LaunchActivity, tracksJobs: Bool = false) {
    self.activity = activity
    self.tracksJobs = tracksJobs
  }

  /// Runs `body` as the participation's own task, then leaves the count.
  package func run<T: Sendable>(_ body: () async -> T) async -> T {
    let task = withUnsafeCurrentTask { $0?.hashValue }
    state.withLock { $0.owner = task }
    let result = await Participation.$current.withValue(self) { await body() }
    leave()
    return result
  }

  /// A wait that left the count, for whoever ends it to ``rejoin()`` before the waiter runs.
  package struct Suspension: Sendable {
    fileprivate let participation: Participation
    fileprivate let isOwner: Bool
    /// Whether the wait also gave back the job it blocks (a thread held by the test).
    fileprivate let releasesJob: Bool

    /// Counts the waiter again, before it is woken: the count must not reach zero between the
    /// wake-up and the waiter running.
    package func rejoin() {
      participation.update { state in
        if isOwner { state.ownerRuns = true } else { state.waitingChildren -= 1 }
        if releasesJob { state.jobs += 1 }
      }
    }
  }

  /// Leaves the count for a wait (a sleep on the test clock, a paused launch); returns what
  /// the waker hands to ``Suspension/rejoin()`` before waking the task, or `nil` for a task
  /// not counted.
  ///
  /// With `holdingThread`, the wait blocks its thread (a gate the test opens), so the job it
  /// runs in stops counting too.
  package static func suspend(holdingThread: Bool = false) -> Suspension? {
    guard let current else { return nil }
    let task = withUnsafeCurrentTask { $0?.hashValue }
    let releasesJob = holdingThread && CountingExecutor.runsJob(of: current)
    return current.update { state -> Suspension? in
      let isOwner = task != nil && state.owner == task
      if isOwner {
        guard state.ownerRuns else { return nil }
        state.ownerRuns = false
      } else {
        // Another task with the participation in force: a step's child. Only a step's tasks
        // are seen through their jobs; any other task that was not counted stays so.
        guard current.tracksJobs else { return nil }
        state.waitingChildren += 1
      }
      if releasesJob { state.jobs -= 1 }
      return Suspension(participation: current, isOwner: isOwner, releasesJob: releasesJob)
    }
  }

  /// Leaves the count for good (the task ended, or handed its work to tasks counted on their
  /// own); does nothing the second time.
  package func leave() {
    update { $0.ownerRuns = false }
  }

  /// Hands the current task's count over: the engine calls it once the launch's first steps
  /// are counted, so the task that started the launch may wait for its end uncounted.
  package static func handOver() {
    // Not only the owner: a session runs the launch in a child task (`async let`) of the task
    // the test started, and that task only waits for it.
    current?.leave()
  }

  /// A job of the participation's tasks was queued on its executor.
  func jobQueued() {
    update { $0.jobs += 1 }
  }

  /// A job of the participation's tasks ran.
  func jobEnded() {
    update { $0.jobs -= 1 }
  }

  /// Changes the state and, when that changes whether the participation is busy, the
  /// activity's count, in the same order as the changes: the activity's lock is taken inside
  /// this one, and idle waiters are resumed once both are let go of.
  @discardableResult
  private func update<T>(_ change: (inout State) -> T) -> T {
    let (result, waiters) = state.withLock { state -> (T, [CheckedContinuation<Void, Never>]) in
      let result = change(&state)
      let busy = state.isBusy
      guard busy != state.counted else { return (result, []) }
      state.counted = busy
      if busy {
        activity.begin()
        return (result, [])
      }
      return (result, activity.endTakingWaiters())
    }
    for waiter in waiters { waiter.resume() }
    return result
  }
}

/// A clock whose launches count their tasks in ``activity``, so it can tell when they are
/// all asleep: the test clock.
package protocol ActivityTrackingClock: Clock {
  /// The count the launches on this clock keep.
  var activity: LaunchActivity { get }
}
