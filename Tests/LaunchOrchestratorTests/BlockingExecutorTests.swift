import Dispatch
import Testing

@testable import LaunchOrchestrator

/// The pool blocking steps run on: bounded, giving idle threads back, QoS from priority.
@Suite("Blocking executor", .timeLimit(.minutes(10)))
struct BlockingExecutorTests {
  /// Jobs that count how many of them run at once, each held until the test lets it go.
  private final class HeldJobs: Sendable {
    private let release = DispatchSemaphore(value: 0)
    private let counts = Locked((now: 0, peak: 0, done: 0))

    var running: Int { counts.withLock(\.now) }
    var peak: Int { counts.withLock(\.peak) }
    var done: Int { counts.withLock(\.done) }

    func start(_ count: Int, on executor: BlockingExecutor) -> [Task<Void, Never>] {
      (0..<count).map { _ in
        Task(executorPreference: executor) {
          self.counts.withLock {
            $0.now += 1
            $0.peak = max($0.peak, $0.now)
          }
          // Blocks its thread, as a synchronous SQLite call would.
          self.release.wait()
          self.counts.withLock {
            $0.now -= 1
            $0.done += 1
          }
        }
      }
    }

    /// Lets every one of `tasks` go, and waits for them.
    func letGo(_ tasks: [Task<Void, Never>]) async {
      for _ in tasks { release.signal() }
      for task in tasks { await task.value }
    }
  }

  @Test func aBurstLargerThanTheBoundAllRunsAtMostTheBoundAtOnce() async {
    let executor = BlockingExecutor(maximumThreads: 3, idleTimeout: .seconds(60))
    let jobs = HeldJobs()
    let tasks = jobs.start(12, on: executor)
    #expect(await eventually { jobs.running == 3 })
    // The other nine wait for a thread: none is added past the bound.
    #expect(executor.threadCount == 3)
    await jobs.letGo(tasks)
    #expect(jobs.done == 12)
    #expect(jobs.peak == 3)
    #expect(executor.peakThreadCount == 3)
  }

  @Test func idleThreadsExitAndNewOnesStartOnDemand() async {
    let executor = BlockingExecutor(maximumThreads: 8, idleTimeout: .milliseconds(20))
    let jobs = HeldJobs()
    let burst = jobs.start(5, on: executor)
    #expect(await eventually { jobs.running == 5 })
    #expect(executor.threadCount == 5)
    await jobs.letGo(burst)
    #expect(await eventually { executor.threadCount == 0 }, "every idle thread exits")
    // The next burst starts threads again.
    let next = jobs.start(2, on: executor)
    #expect(await eventually { jobs.running == 2 })
    #expect(executor.threadCount == 2)
    await jobs.letGo(next)
    #expect(jobs.done == 7)
    #expect(await eventually { executor.threadCount == 0 })
  }

  @Test func aJobHandedOverAsItsThreadsIdleTimeRunsOutStillRuns() async {
    // An idle time so short that almost every job arrives as its thread gives up waiting:
    // the hand-over and the exit race, and no job may be lost or the count go wrong.
    let executor = BlockingExecutor(maximumThreads: 2, idleTimeout: .nanoseconds(1))
    let ran = Locked(0)
    for _ in 0..<500 {
      await Task(executorPreference: executor) { ran.withLock { $0 += 1 } }.value
    }
    #expect(ran.withLock { $0 } == 500)
    #expect(executor.peakThreadCount <= 2)
    #expect(await eventually { executor.threadCount == 0 })
  }

  @Test func blockingStepsOfAnyNumberRunOnTheSharedPool() async throws {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "blocker", isBlocking: true) { _ in }
    let steps = (0..<100).map { #"{ "id": "b\#($0)", "plugin": "blocker" }"# }
      .joined(separator: ",")
    let plan = try loadPlan(
      #"{ "version": 1, "maxConcurrency": 100, "steps": [\#(steps)] }"#, registry: registry)
    let report = await LaunchEngine().run(plan)
    #expect(report.outcome == .succeeded)
    #expect(BlockingExecutor.shared.peakThreadCount <= BlockingExecutor.defaultMaximumThreads)
  }

  @Test func stepPrioritiesMapToQualitiesOfService() {
    typealias QoS = BlockingExecutor.QualityOfService
    #expect(QoS(StepPriority.critical) == .userInitiated)
    #expect(QoS(StepPriority.high) == .userInitiated)
    #expect(QoS(StepPriority.normal) == .default)
    #expect(QoS(StepPriority.low) == .utility)
    #expect(QoS(StepPriority.background) == .background)
  }

  @Test func taskPrioritiesMapToQualitiesOfServiceEscalationIncluded() {
    typealias QoS = BlockingExecutor.QualityOfService
    #expect(QoS(TaskPriority.userInitiated) == .userInitiated)
    #expect(QoS(TaskPriority.medium) == .default)
    #expect(QoS(TaskPriority.utility) == .utility)
    #expect(QoS(TaskPriority.background) == .background)
    // A job escalated past user-initiated (awaited from the main thread) stays there:
    // user-interactive is the main thread's.
    #expect(QoS(TaskPriority(rawValue: 33)) == .userInitiated)
    // Between two classes: the lower one.
    #expect(QoS(TaskPriority(rawValue: 20)) == .utility)
    #expect(QoS(TaskPriority(rawValue: 10)) == .background)
    // A job with no priority at all runs at the default class.
    #expect(QoS(TaskPriority(rawValue: 0)) == .default)
  }
}

/// Whether `condition` holds within a generous bound (a minute), checked every millisecond:
/// for what happens on other threads a moment later, never as a measure of speed.
private func eventually(_ condition: () -> Bool) async -> Bool {
  let clock = ContinuousClock()
  let end = clock.now + .seconds(60)
  while clock.now < end {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return condition()
}
