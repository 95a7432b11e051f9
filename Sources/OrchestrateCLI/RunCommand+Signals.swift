import LaunchOrchestrator

extension RunCommand {
  /// The running launch, for the interrupt handler; a Ctrl-C before it starts is remembered.
  struct LaunchHandle {
    var task: Task<LaunchReport, Never>?
    var cancelRequested = false

    /// Makes `task` the launch to cancel, cancelling it at once if a signal came first.
    mutating func attach(_ task: Task<LaunchReport, Never>) {
      self.task = task
      if cancelRequested { task.cancel() }
    }
  }

  /// Runs `body` with SIGINT and SIGTERM cancelling the launch it attaches to the handle.
  ///
  /// The handler stays installed until the command is done, not just the launch: a Ctrl-C
  /// that arrives while the report is written finds nothing left to cancel instead of killing
  /// the process.
  func withSignalsCancelling<Result>(
    _ body: (Locked<LaunchHandle>) async -> Result
  ) async -> Result {
    let launch = Locked(LaunchHandle())
    let interrupts = InterruptHandler {
      launch.withLock { handle in
        handle.cancelRequested = true
        handle.task?.cancel()
      }
    }
    defer { interrupts.stop() }
    return await body(launch)
  }
}
