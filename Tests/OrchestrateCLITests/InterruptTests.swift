import Foundation
import Testing

@testable import LaunchOrchestrator
@testable import OrchestrateCLI

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

  /// The first signal interrupts and later ones repeat, each with its number, in the order
  /// they came: sent to this process one at a time, each after the last was heard (signals sent
  /// to another process back to back may reach its threads in either order). The command
  /// exits at a repeat, with 128 plus its number (the default `onRepeat`).
  @Test func theFirstSignalInterruptsAndASecondRepeats() async throws {
    let heard = Locked<[String]>([])
    let (events, continuation) = AsyncStream.makeStream(of: Void.self)
    let handler = InterruptHandler(
      onInterrupt: { signal in
        heard.withLock { $0.append("interrupt \(signal)") }
        continuation.yield()
      },
      onRepeat: { signal in
        heard.withLock { $0.append("repeat \(signal)") }
        continuation.yield()
      })
    defer {
      handler.stop()
      // The test process keeps its usual answer to a Ctrl-C or a `timeout`.
      for signalNumber in InterruptHandler.signals { signal(signalNumber, SIG_DFL) }
    }
    var arrivals = events.makeAsyncIterator()
    kill(getpid(), SIGTERM)
    await arrivals.next()
    kill(getpid(), SIGHUP)
    await arrivals.next()
    kill(getpid(), SIGINT)
    await arrivals.next()
    #expect(
      heard.withLock { $0 } == ["interrupt \(SIGTERM)", "repeat \(SIGHUP)", "repeat \(SIGINT)"])
  }
}
