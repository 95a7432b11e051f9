import Foundation
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Signals sent to `orchestrate run` at the moments they are easiest to lose, through the
/// real binary.
@Suite("orchestrate run: interrupts", .timeLimit(.minutes(10)))
struct InterruptTests {
  /// The launch prints its first step's start as its first line: a signal sent the moment
  /// that line appears is the earliest one a user could aim at a running launch. Dispatch
  /// signal sources, used before, were registered some time after the launch began and lost
  /// such signals; the step lasts 30 s so a lost one fails the expectation instead of hanging.
  @Test func aSignalTheMomentTheLaunchStartsIsNeverLost() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "wait.json",
      """
      { "version": 1, "steps": [
        { "id": "wait", "plugin": "simulate", "params": { "duration": "30s" } }
      ] }
      """)
    for (signal, status) in [(SIGTERM, 143), (SIGINT, 130), (SIGHUP, 129)] as [(Int32, Int32)] {
      for _ in 0..<4 {
        let result = try await Orchestrate.run(["run", manifest]) { process, stdout in
          let pid = process.processIdentifier
          await when("start      wait", in: stdout) { kill(pid, signal) }
        }
        #expect(result.status == status, "signal \(signal)")
        #expect(result.stdout.contains("cancelled  wait"), "signal \(signal)")
      }
    }
  }

  /// A step that ignores cancellation holds a launch for the 1 s grace period after the first
  /// Ctrl-C (exit 130 then); a second signal within it ends the process at once, with its own
  /// status.
  @Test func aSecondSignalEndsTheProcessAtOnce() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "stubborn.json",
      """
      { "version": 1, "steps": [
        { "id": "stubborn", "plugin": "simulate",
          "params": { "duration": "30s", "ignoresCancellation": true } }
      ] }
      """)
    let result = try await Orchestrate.run(["run", manifest]) { process, stdout in
      let pid = process.processIdentifier
      await when("start      stubborn", in: stdout) {
        kill(pid, SIGINT)
        usleep(100_000)
        kill(pid, SIGTERM)
      }
    }
    #expect(result.status == 143)
  }
}
