import Foundation
import LaunchTesting

@testable import LaunchOrchestrator

/// Collects a launch's events while it runs.
final class EventRecorder: Sendable {
  private let events = Locked<[LaunchEvent]>([])
  private let consumer = Locked<Task<Void, Never>?>(nil)

  var all: [LaunchEvent] { events.withLock { $0 } }
  var lines: [String] { all.map { SchedulerHarness.describe($0.kind) } }

  /// Starts `plan` on `engine`, recording its events; returns the running launch. On a
  /// ``ManualClock`` the clock starts it, so that its `advance` waits for the launch's first
  /// steps.
  func start<C: Clock>(
    _ plan: LaunchPlan, on engine: LaunchEngine<C>, control: LaunchControl? = nil
  ) -> Task<LaunchReport, Never>
  where C.Duration == Duration {
    let (stream, continuation) = LaunchEvents.makeStream()
    continuation.expectConsumer()
    @Sendable func run() async -> LaunchReport {
      if let control { return await engine.run(plan, control: control, events: continuation) }
      return await engine.run(plan, events: continuation)
    }
    let launch = (engine.clock as? ManualClock)?.start(run) ?? Task { await run() }
    let task = Task {
      for await event in stream { events.withLock { $0.append(event) } }
    }
    consumer.withLock { $0 = task }
    return launch
  }

  /// Waits until the launch's event stream has ended and every event is recorded.
  func drained() async {
    await consumer.withLock { $0 }?.value
  }

  /// Waits until an event with this description has been recorded.
  func waitFor(_ line: String) async {
    while !lines.contains(line) {
      try? await Task.sleep(for: .milliseconds(1))
    }
  }
}

extension LaunchScreen {
  /// The developer's message of a failure screen; `nil` for any other screen.
  var failureMessage: String? {
    if case .failed(let failure) = self { return failure.message }
    return nil
  }
}
