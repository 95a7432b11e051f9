import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Timed stand-in work, to rehearse a launch plan before its plugins exist and to test the
/// orchestrator: it waits, fails, ignores cancellation, blocks its thread or routes, as told.
public struct SimulateStep: StepPlugin {
  /// The kind name: `simulate`.
  public static let kind = "simulate"
  /// What the step does.
  public static let summary =
    "Stand-in work that takes a set time, and can fail, hang, block or route."

  /// What to simulate.
  public struct Parameters: StepParameters {
    @Parameter("How long each attempt takes.") var duration = Duration.zero
    @Parameter("Every attempt fails.") var fail = false
    @Parameter("The first N attempts fail, later ones succeed.", in: 0...) var failAttempts = 0
    @Parameter("Keep running when cancelled, like a plugin that never checks cancellation.")
    var ignoresCancellation = false
    @Parameter("Hold a thread for the duration, like synchronous I/O.") var blocking = false
    @Parameter("End the launch with this route after the duration.", nonEmpty: true)
    var route: String?

    /// No parameters given: a step that succeeds at once.
    public init() {}
  }

  private let duration: Duration
  private let fails: Bool
  private let failAttempts: Int
  private let ignoresCancellation: Bool
  private let route: LaunchRoute?
  /// Whether the step holds its thread while it works.
  public let isBlocking: Bool

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) {
    duration = parameters.duration
    fails = parameters.fail
    failAttempts = parameters.failAttempts
    ignoresCancellation = parameters.ignoresCancellation
    isBlocking = parameters.blocking
    route = parameters.route.map(LaunchRoute.init)
  }

  /// Waits for `duration` since the attempt started, then succeeds, fails or routes.
  public func run(_ context: StepContext) async throws {
    let deadline = context.attemptStart + duration
    if isBlocking {
      holdThread(until: deadline, context: context)
    } else if ignoresCancellation {
      await sleepIgnoringCancellation(until: deadline, context: context)
    } else {
      try await context.sleep(until: deadline)
    }
    if !ignoresCancellation { try Task.checkCancellation() }
    if fails || context.attempt <= failAttempts {
      throw StepFailure("simulated failure (attempt \(context.attempt))")
    }
    if let route { throw route }
  }

  /// Blocks the calling thread until the launch clock reaches `deadline`, as synchronous I/O
  /// would. It reads the clock every millisecond at most rather than waiting on a task: that
  /// works on any clock (a test's manual one too) and needs no thread of Swift's cooperative
  /// pool, which other work may be holding.
  private func holdThread(until deadline: Duration, context: StepContext) {
    while case let remaining = deadline - context.now, remaining > .zero {
      let micros = min(remaining, .milliseconds(1)) / .microseconds(1)
      usleep(UInt32(max(1, micros.rounded(.up))))
    }
  }

  private func sleepIgnoringCancellation(until deadline: Duration, context: StepContext) async {
    // An unstructured task does not inherit the step's cancellation.
    await Task { try? await context.sleep(until: deadline) }.value
  }
}
