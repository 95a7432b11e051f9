import Foundation
import LaunchOrchestrator
import SimulatePlugin
import Testing

@Suite("simulate plugin", .timeLimit(.minutes(10)))
struct SimulateStepTests {
  private func run(_ steps: String, options: LaunchOptions = LaunchOptions()) async throws
    -> LaunchReport
  {
    var registry = PluginRegistry()
    registry.register(SimulateStep.self)
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(
        #"{ "version": 1, "defaults": { "onFailure": "continue" }, "steps": [\#(steps)] }"#.utf8),
      file: "simulate.json", directory: FileManager.default.temporaryDirectory)
    return await LaunchEngine(options: options).run(plan)
  }

  @Test func takesItsDurationAndSucceeds() async throws {
    let report = try await run(
      #"{ "id": "s", "plugin": "simulate", "params": { "duration": "30ms" } }"#)
    let step = try #require(report.step("s"))
    #expect(step.state == .succeeded)
    #expect(try #require(step.duration) >= .milliseconds(30))
  }

  @Test func failsEveryAttemptWhenToldTo() async throws {
    let report = try await run(
      #"{ "id": "s", "plugin": "simulate", "params": { "fail": true }, "retry": { "attempts": 2, "backoff": 0 } }"#
    )
    #expect(report.step("s")?.state == .failed)
    #expect(report.step("s")?.attempts == 2)
    #expect(report.step("s")?.error == "simulated failure (attempt 2)")
  }

  @Test func failsOnlyTheFirstAttempts() async throws {
    let report = try await run(
      #"{ "id": "s", "plugin": "simulate", "params": { "failAttempts": 2 }, "retry": { "attempts": 3, "backoff": 0 } }"#
    )
    #expect(report.step("s")?.state == .succeeded)
    #expect(report.step("s")?.attempts == 3)
  }

  @Test func routesTheLaunch() async throws {
    let report = try await run(
      #"{ "id": "gate", "plugin": "simulate", "params": { "route": "updateRequired" } }"#)
    #expect(report.outcome == .routed)
    #expect(report.route == LaunchRoute("updateRequired"))
  }

  @Test func timesOutEvenWhenItIgnoresCancellation() async throws {
    // The hang outlasts any stall of a loaded machine (the suite's tests share two threads):
    // the launch must end at the timeout's grace period, never wait for the hang.
    let report = try await run(
      """
      { "id": "hang", "plugin": "simulate", "timeout": "50ms",
        "params": { "duration": "300s", "ignoresCancellation": true } },
      { "id": "next", "plugin": "simulate", "after": ["hang"] }
      """)
    #expect(report.step("hang")?.state == .timedOut)
    #expect(
      report.step("hang")?.notes == [
        "attempt 1 did not stop within 1s of its timeout and was abandoned"
      ])
    #expect(report.step("next")?.state == .succeeded)
    #expect(report.duration < .seconds(300))
  }

  @Test func aBlockingStepHoldsItsThreadForItsDuration() async throws {
    // That blocking steps stall neither async steps nor timeouts is the engine's promise,
    // tested on a manual clock in LaunchEngineTests; here, what the plugin does.
    let blockers = (1...4).map {
      #"{ "id": "b\#($0)", "plugin": "simulate", "params": { "duration": "300ms", "blocking": true } }"#
    }
    let report = try await run(
      (blockers + [#"{ "id": "quick", "plugin": "simulate", "params": { "duration": "10ms" } }"#])
        .joined(separator: ","))
    #expect(report.outcome == .succeeded)
    for id in ["b1", "b2", "b3", "b4"] {
      #expect(try #require(report.step(id)?.duration) >= .milliseconds(300))
    }
    #expect(report.step("quick")?.state == .succeeded)
  }

  @Test(arguments: [
    (#"{ "failAttempts": -1 }"#, "'failAttempts' must be 0 or more, not -1."),
    (#"{ "route": "" }"#, "'route' cannot be empty; leave it out instead."),
  ])
  func rejectsBadParametersWhenTheManifestLoads(params: String, message: String) async throws {
    do {
      _ = try await run(#"{ "id": "s", "plugin": "simulate", "params": \#(params) }"#)
      Issue.record("loaded")
    } catch let error as ManifestError {
      #expect(error.diagnostics.map(\.message) == [message])
    }
  }
}
