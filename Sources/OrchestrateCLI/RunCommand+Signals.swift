import LaunchOrchestrator

extension RunCommand {
  /// The running launch, for the interrupt handler; a Ctrl-C before it starts is remembered.
  struct LaunchHandle {
    var task: Task<LaunchReport, Never>?
    /// The signal that asked for cancellation, if one did.
    var signal: Int32?
    var cancelRequested: Bool { signal != nil }

    /// Makes `task` the launch to cancel, cancelling it at once if a signal came first.
    mutating func attach(_ task: Task<LaunchReport, Never>) {
      self.task = task
      if cancelRequested { task.cancel() }
    }
  }

  /// Runs `body` with SIGINT, SIGTERM and SIGHUP cancelling the launch it attaches to the
  /// handle; returns its result and the signal that cancelled it, if one did.
  ///
  /// The handler stays installed until the command is done, not just the launch: a Ctrl-C
  /// that arrives while the report is written finds nothing left to cancel instead of killing
  /// the process.
  func withSignalsCancelling<Result>(
    _ body: (Locked<LaunchHandle>) async -> Result
  ) async -> (result: Result, signal: Int32?) {
    let launch = Locked(LaunchHandle())
    let interrupts = InterruptHandler { signal in
      launch.withLock { handle in
        handle.signal = handle.signal ?? signal
        handle.task?.cancel()
      }
    }
    defer { interrupts.stop() }
    let result = await body(launch)
    return (result, launch.withLock { $0.signal })
  }
}
