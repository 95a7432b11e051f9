import Foundation

/// A task executor that runs the jobs it is given until it is closed, then holds them until
/// ``open()``: a test closes it from a step, and the launch's own task, resumed when the step
/// ends the launch, cannot run again until the test says so.
final class HoldingExecutor: TaskExecutor, @unchecked Sendable {
  private enum State {
    case running
    /// Closes once the jobs given before have run.
    case closing
    case closed
    case opened
  }

  private let queue = DispatchQueue(label: "HoldingExecutor")
  private let lock = NSLock()
  /// Guarded by `lock`: the state, the jobs given and not yet run, and those held.
  private var state = State.running
  private var pending = 0
  private var held: [UnownedJob] = []

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let runs = lock.withLock {
      if state == .closed {
        held.append(job)
        return false
      }
      pending += 1
      return true
    }
    guard runs else { return }
    queue.async {
      job.runSynchronously(on: self.asUnownedTaskExecutor())
      self.lock.withLock {
        self.pending -= 1
        if self.state == .closing, self.pending == 0 { self.state = .closed }
      }
    }
  }

  /// Holds every job given from the moment none given before is left to run.
  func closeWhenIdle() {
    lock.withLock {
      guard state == .running else { return }
      state = pending == 0 ? .closed : .closing
    }
  }

  /// Whether it holds the jobs it is given now.
  var isClosed: Bool { lock.withLock { state == .closed } }

  /// Runs the held jobs, and any later one at once; returns whether it was closed until now.
  @discardableResult
  func open() -> Bool {
    let (wasClosed, jobs) = lock.withLock {
      defer {
        state = .opened
        held = []
      }
      return (state == .closed, held)
    }
    for job in jobs {
      queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
    return wasClosed
  }
}
