import Dispatch
import Foundation

/// Runs blocking steps on threads of its own, adding a thread whenever every existing one is
/// busy, so synchronous I/O never occupies Swift's cooperative pool (one thread per core).
///
/// On Linux a concurrent `DispatchQueue` shares libdispatch's width-limited pool, which is
/// why this executor owns plain threads instead.
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
  /// The executor every launch shares; its threads live as long as the process.
  static let shared = BlockingExecutor(maximumThreads: 256)

  private let maximumThreads: Int
  // Guards every stored property below; waited on by idle workers.
  private let condition = NSCondition()
  private var queue: [UnownedJob] = []
  private var head = 0
  private var idleThreads = 0
  private var threadCount = 0

  init(maximumThreads: Int) {
    self.maximumThreads = maximumThreads
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    queue.append(job)
    let spawn = queue.count - head > idleThreads && threadCount < maximumThreads
    if spawn { threadCount += 1 }
    condition.signal()
    condition.unlock()
    if spawn {
      let thread = Thread { [self] in work() }
      thread.name = "launch-blocking"
      thread.start()
    }
  }

  private func work() {
    while true {
      condition.lock()
      while head == queue.count {
        idleThreads += 1
        condition.wait()
        idleThreads -= 1
      }
      let job = queue[head]
      head += 1
      if head == queue.count {
        queue.removeAll(keepingCapacity: true)
        head = 0
      }
      condition.unlock()
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
