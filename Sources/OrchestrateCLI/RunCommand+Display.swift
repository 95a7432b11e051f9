import LaunchOrchestrator

extension RunCommand {
  /// Runs the launch, showing its events live on a terminal or as lines elsewhere, and
  /// returns its report with the step that routed it, if one did.
  func run(
    _ plan: LaunchPlan, environment: LaunchEnvironment, in handle: Locked<LaunchHandle>
  ) async -> (report: LaunchReport, routedBy: String?) {
    let (events, continuation) = LaunchEvents.makeStream()
    // A first launch has no cached outputs yet: its rehearsal is timed without them.
    var launchOptions = LaunchOptions(
      maxConcurrency: options.maxConcurrency,
      servesCachedOutputs: !options.noCache && !options.firstLaunch)
    launchOptions.launchRecord = launchRecordUse(for: plan, environment: environment)
    let engine = LaunchEngine(options: launchOptions)
    let control = LaunchControl(detectsSuspensions: true)
    control.startClock()
    let suspensions = SuspendHandler(control: control)
    defer { suspensions.stop() }
    let rehearsal = Task { await rehearse(on: control, plan: plan) }
    defer { rehearsal.cancel() }
    // Unstructured so that the signal handler can cancel it; it is awaited right below.
    let launch = Task {
      await engine.run(plan, environment: environment, control: control, events: continuation)
    }
    handle.withLock { $0.attach(launch) }
    let display =
      options.printsEvents && console.isInteractive
      ? LiveDisplay(
        console: console, plan: plan,
        maxConcurrency: options.maxConcurrency ?? plan.manifest.maxConcurrency)
      : nil
    let log = options.printsEvents ? EventLog(console: console, splash: plan.manifest.splash) : nil
    var routedBy: String?
    await withDiscardingTaskGroup { group in
      if let display {
        group.addTask {
          while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            display.tick()
          }
        }
      }
      for await event in events {
        // The report names the route, not the step that took it; the event does.
        if case .routed(_, let step) = event.kind { routedBy = step }
        if let display {
          display.show(event)
        } else {
          log?.print(event)
        }
      }
      group.cancelAll()
    }
    display?.finish()
    return (await launch.value, routedBy)
  }
}
