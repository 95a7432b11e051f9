import Dispatch
import Foundation

/// Runs blocking steps on threads of its own, adding a thread whenever every existing one is
/// busy, so synchronous I/O never occupies Swift's cooperative pool (one thread per core).
///
/// On Linux a concurrent `DispatchQueue` shares libdispatch's width-limited pool, which is
/// why this executor owns plain threads instead.
final class BlockingExecutor: TaskExecutor {
  /// The executor every launch shares; its threads live as long as the process.
  static let shared = BlockingExecutor(maximumThreads: 256)

  private struct Queue {
    var jobs: [UnownedJob] = []
    var head = 0
    var idleThreads = 0
    var threadCount = 0

    var isEmpty: Bool { head == jobs.count }
  }

  private let maximumThreads: Int
  private let queue = Locked(Queue())

  init(maximumThreads: Int) {
    self.maximumThreads = maximumThreads
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let spawn = queue.withLock { queue in
      queue.jobs.append(job)
      let spawn =
        queue.jobs.count - queue.head > queue.idleThreads && queue.threadCount < maximumThreads
      if spawn { queue.threadCount += 1 }
      return spawn
    }
    queue.signal()
    if spawn {
      let thread = Thread { [self] in work() }
      thread.name = "launch-blocking"
      thread.start()
    }
  }

  private func work() {
    while true {
      queue.withLock { $0.idleThreads += 1 }
      let job = queue.withLock(
        when: { !$0.isEmpty },
        { queue in
          queue.idleThreads -= 1
          let job = queue.jobs[queue.head]
          queue.head += 1
          if queue.isEmpty {
            queue.jobs.removeAll(keepingCapacity: true)
            queue.head = 0
          }
          return job
        })
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
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
