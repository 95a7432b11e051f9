import Dispatch
import LaunchOrchestrator

/// Timed stand-in work, to rehearse a launch plan before its plugins exist and to test the
/// orchestrator: it waits, fails, ignores cancellation, blocks its thread or routes, as told.
public struct SimulateStep: StepPlugin {
  /// The kind name: `simulate`.
  public static let kind = "simulate"
  /// What the step does.
  public static let summary =
    "Stand-in work that takes a set time, and can fail, hang, block or route."

  /// The parameters, for `orchestrate plugins` and the schema.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("duration", .duration, default: "0s", "How long each attempt takes."),
    .init("fail", .boolean, default: "false", "Every attempt fails."),
    .init(
      "failAttempts", .integer(minimum: 0), default: "0",
      "The first N attempts fail, later ones succeed."),
    .init(
      "ignoresCancellation", .boolean, default: "false",
      "Keep running when cancelled, like a plugin that never checks cancellation."),
    .init(
      "blocking", .boolean, default: "false",
      "Hold a thread for the duration, like synchronous I/O."),
    .init("route", .string, "End the launch with this route after the duration."),
  ]

  /// What to simulate.
  public struct Parameters: Decodable, Sendable {
    /// How long each attempt takes (default 0).
    public var duration: DurationParameter?
    /// Every attempt fails.
    public var fail: Bool?
    /// The first N attempts fail, later ones succeed.
    public var failAttempts: Int?
    /// Keep running when cancelled, as a plugin that never checks cancellation would.
    public var ignoresCancellation: Bool?
    /// Hold the thread for `duration`, like synchronous I/O, instead of suspending.
    public var blocking: Bool?
    /// End the launch with this route after `duration`.
    public var route: String?
  }

  private let duration: Duration
  private let fails: Bool
  private let failAttempts: Int
  private let ignoresCancellation: Bool
  private let route: LaunchRoute?
  /// Whether the step holds its thread while it works.
  public let isBlocking: Bool

  /// Checks and keeps the parameters.
  public init(parameters: Parameters) throws {
    duration = parameters.duration?.duration ?? .zero
    fails = parameters.fail ?? false
    failAttempts = parameters.failAttempts ?? 0
    ignoresCancellation = parameters.ignoresCancellation ?? false
    isBlocking = parameters.blocking ?? false
    if failAttempts < 0 {
      throw ParameterError("failAttempts", "'failAttempts' must be 0 or more, not \(failAttempts).")
    }
    if let name = parameters.route {
      guard !name.isEmpty else { throw ParameterError("route", "'route' cannot be empty.") }
      route = LaunchRoute(name)
    } else {
      route = nil
    }
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
    if !ignoresCancellation { try context.checkCancellation() }
    if fails || context.attempt <= failAttempts {
      throw StepFailure("simulated failure (attempt \(context.attempt))")
    }
    if let route { throw route }
  }

  /// Blocks the calling thread until the launch clock reaches `deadline`, as synchronous I/O
  /// would; the wait itself runs on another task so that it works on any clock.
  private func holdThread(until deadline: Duration, context: StepContext) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
      try? await context.sleep(until: deadline)
      done.signal()
    }
    done.wait()
  }

  private func sleepIgnoringCancellation(until deadline: Duration, context: StepContext) async {
    // An unstructured task does not inherit the step's cancellation.
    await Task { try? await context.sleep(until: deadline) }.value
  }
}
