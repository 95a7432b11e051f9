import Dispatch
import Foundation

#if canImport(Darwin)
  import Darwin
#endif

/// Runs blocking steps on threads of its own, so synchronous I/O never occupies Swift's
/// cooperative pool (one thread per core): a thread is added whenever every existing one is
/// busy, up to a bound, and a thread idle for a while exits.
///
/// On Linux a concurrent `DispatchQueue` shares libdispatch's width-limited pool, which is
/// why this executor owns plain threads instead. On Apple platforms each job runs at the
/// quality of service of its task's priority (``QualityOfService``), so a `critical` store
/// open is not scheduled like a `background` cleanup.
final class BlockingExecutor: TaskExecutor {
  /// The executor every launch shares.
  static let shared = BlockingExecutor(
    maximumThreads: defaultMaximumThreads, idleTimeout: .seconds(2))

  /// How many threads the shared pool keeps at most: 64. Blocking steps wait on the disk or
  /// the network, not the processor, so the bound is not a multiple of the cores (four per
  /// core would be eight on a two-core machine, and the bench's 50 concurrent 10 ms blocking
  /// steps would take about seven times as long); it is there so that a launch of many
  /// blocking steps, or of steps that hang ignoring cancellation, cannot grow the process
  /// without limit (the bound was 256, each thread with its stack). Jobs beyond it wait for
  /// a thread; a step's timeout still fires on time, since timers run on the cooperative
  /// pool.
  static let defaultMaximumThreads = 64

  /// The quality of service a blocking job runs at on Apple platforms, from its priority.
  enum QualityOfService: Equatable, CaseIterable {
    case userInitiated, `default`, utility, background

    /// The class of a task of `priority`: each of Swift's priorities is the class of the
    /// same number (`high` and `userInitiated` 25, `medium` 21, `low` and `utility` 17,
    /// `background` 9), and a raw value between two is rounded down to the lower class.
    /// `userInteractive` is left to the main thread: a blocking job never needs it. A job
    /// without a priority (0) runs at the default class.
    init(_ priority: TaskPriority) {
      switch priority.rawValue {
      case TaskPriority.high.rawValue...: self = .userInitiated
      case TaskPriority.medium.rawValue...: self = .default
      case TaskPriority.low.rawValue...: self = .utility
      case 1...: self = .background
      default: self = .default
      }
    }

    /// The class a step of `priority` runs at: `critical` and `high` user-initiated,
    /// `normal` default, `low` utility, `background` background. The engine gives the
    /// step's task ``StepPriority/taskPriority``, and the job carries it here.
    init(_ priority: StepPriority) {
      self.init(priority.taskPriority)
    }

    #if canImport(Darwin)
      /// The Darwin class.
      var qosClass: qos_class_t {
        switch self {
        case .userInitiated: QOS_CLASS_USER_INITIATED
        case .default: QOS_CLASS_DEFAULT
        case .utility: QOS_CLASS_UTILITY
        case .background: QOS_CLASS_BACKGROUND
        }
      }
    #endif
  }

  /// What a thread of the pool runs: a task's job, or a function (a test clock's executor
  /// running a step's job and counting it).
  private enum Work {
    case job(UnownedJob)
    case function(@Sendable () -> Void)
  }

  private struct Pool {
    var jobs: [Work] = []
    var head = 0
    /// The idle threads' wake-ups, the most recently idle last: it is woken first, so under
    /// a light load the same few threads take the work and the rest time out and exit.
    var idle: [DispatchSemaphore] = []
    var threadCount = 0
    /// The most threads alive at once, for tests.
    var peakThreadCount = 0

    var isEmpty: Bool { head == jobs.count }

    mutating func takeJob() -> Work? {
      guard !isEmpty else { return nil }
      let job = jobs[head]
      head += 1
      if isEmpty {
        jobs.removeAll(keepingCapacity: true)
        head = 0
      }
      return job
    }
  }

  private enum Wake {
    case none, spawn
    case idle(DispatchSemaphore)
  }

  let maximumThreads: Int
  /// How long a thread waits for a job before it exits.
  let idleTimeout: Duration
  private let pool = Locked(Pool())

  init(maximumThreads: Int, idleTimeout: Duration) {
    precondition(maximumThreads > 0, "a pool needs a thread")
    self.maximumThreads = maximumThreads
    self.idleTimeout = idleTimeout
  }

  /// How many threads are alive now, idle ones included.
  var threadCount: Int { pool.withLock(\.threadCount) }

  /// The most threads that were alive at once.
  var peakThreadCount: Int { pool.withLock(\.peakThreadCount) }

  func enqueue(_ job: consuming ExecutorJob) {
    submit(.job(UnownedJob(job)))
  }

  /// Runs `function` on one of the pool's threads, as it runs jobs.
  func run(_ function: @escaping @Sendable () -> Void) {
    submit(.function(function))
  }

  private func submit(_ next: Work) {
    let wake = pool.withLock { pool -> Wake in
      pool.jobs.append(next)
      // Each job queued while threads are idle takes one of them: a woken thread always
      // finds a job, and no job waits while a thread sleeps.
      if let idle = pool.idle.popLast() { return .idle(idle) }
      guard pool.threadCount < maximumThreads else { return .none }
      pool.threadCount += 1
      pool.peakThreadCount = max(pool.peakThreadCount, pool.threadCount)
      return .spawn
    }
    switch wake {
    case .none: break
    case .idle(let thread): thread.signal()
    case .spawn:
      let thread = Thread { [self] in work() }
      thread.name = "launch-blocking"
      thread.start()
    }
  }

  /// A thread's life: jobs while there are any, then a wait for the next, until one idle
  /// timeout passes without a job.
  private func work() {
    // A semaphore per thread, not one condition for all: a condition wakes any waiter, so
    // a trickle of jobs would keep every thread alive; this wakes the last to go idle.
    let wakeUp = DispatchSemaphore(value: 0)
    #if canImport(Darwin)
      var current: QualityOfService?
    #endif
    while true {
      let next = pool.withLock { pool -> Work? in
        if let job = pool.takeJob() { return job }
        pool.idle.append(wakeUp)
        return nil
      }
      guard let work = next else {
        if wakeUp.wait(timeout: .now() + .nanoseconds(Self.nanoseconds(idleTimeout)))
          == .timedOut
        {
          let exits = pool.withLock { pool in
            // Still idle: no job was handed to this thread, so it may go.
            guard let index = pool.idle.firstIndex(where: { $0 === wakeUp }) else {
              return false
            }
            pool.idle.remove(at: index)
            pool.threadCount -= 1
            return true
          }
          if exits { return }
          // A job was handed over just as the wait ran out: take the wake-up that comes
          // with it, so the semaphore is balanced for the next wait.
          wakeUp.wait()
        }
        continue
      }
      switch work {
      case .function(let function):
        function()
      case .job(let job):
        #if canImport(Darwin)
          // The job's priority is its task's, escalation included; the class is set only when
          // it changes, a system call saved for runs of jobs of one priority.
          let quality = QualityOfService(TaskPriority(rawValue: job.priority.rawValue))
          if quality != current {
            pthread_set_qos_class_self_np(quality.qosClass, 0)
            current = quality
          }
        #endif
        job.runSynchronously(on: asUnownedTaskExecutor())
      }
    }
  }

  private static func nanoseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
  }
}

/// Runs a task's nonisolated code on the main thread, through the main dispatch queue that
/// the main actor also runs on.
final class MainThreadExecutor: TaskExecutor {
  static let shared = MainThreadExecutor()

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    DispatchQueue.main.async {
      job.runSynchronously(on: self.asUnownedTaskExecutor())
    }
  }
}

/// On a test clock, runs a step's tasks where they would run otherwise (the shared pool, the
/// main thread, the blocking executor) and tells the step's ``Participation`` of each job
/// queued and each job run, so the clock knows whether any of the step's tasks has work to do.
/// A step's child tasks (a task group's, `async let`) inherit it as their executor preference.
final class CountingExecutor: TaskExecutor {
  /// Where the jobs run.
  enum Threads {
    /// Threads of Dispatch's global pool: a job cannot be handed to Swift's cooperative pool
    /// with a way to tell when it ran, so a test clock's steps run there instead.
    case pool
    /// The main thread, for a step isolated to it.
    case main
    /// The ``BlockingExecutor``'s threads, for a blocking step.
    case blocking
  }

  private let participation: Participation
  private let threads: Threads

  init(counting participation: Participation, on threads: Threads) {
    self.participation = participation
    self.threads = threads
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    // Counted from now: a task woken on the test clock is queued here by the waker, before
    // the count could reach zero.
    participation.jobQueued()
    let run: @Sendable () -> Void = { [self] in
      let previous = RunningJob.identity
      RunningJob.identity = RunningJob.identity(of: participation)
      job.runSynchronously(on: asUnownedTaskExecutor())
      RunningJob.identity = previous
      participation.jobEnded()
    }
    switch threads {
    case .pool: DispatchQueue.global().async(execute: run)
    case .main: DispatchQueue.main.async(execute: run)
    case .blocking: BlockingExecutor.shared.run(run)
    }
  }

  /// Whether the current thread is running a job of `participation`'s tasks.
  static func runsJob(of participation: Participation) -> Bool {
    RunningJob.identity == RunningJob.identity(of: participation)
  }
}

/// Which participation's job the current thread runs, if any: a thread-local address, only
/// compared, never dereferenced.
private enum RunningJob {
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  static var identity: UnsafeMutableRawPointer? {
    get { pthread_getspecific(key) }
    set { pthread_setspecific(key, newValue) }
  }

  static func identity(of participation: Participation) -> UnsafeMutableRawPointer {
    Unmanaged.passUnretained(participation).toOpaque()
  }
}
