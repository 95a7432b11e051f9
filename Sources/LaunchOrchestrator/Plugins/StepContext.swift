import Foundation

/// What a running step can see and do: its dependencies' outputs, progress, logging, the
/// manifest's folder, the data folder, the launch clock and cancellation.
///
/// What the whole launch shares (the folders, the environment, the clock) comes from its
/// host, read when asked: a context holds no reference of its own to them, so a step that
/// never reads them costs no reference counting on objects every step shares.
public struct StepContext: Sendable {
  /// The step's id in the manifest.
  public var stepID: String { host.stepID }
  /// The attempt number, from 1; a fallback continues the count.
  public let attempt: Int
  /// Whether this attempt is the step's fallback.
  public let isFallback: Bool
  /// The folder holding the manifest; in an app, a read-only folder of the bundle.
  ///
  /// Files shipped with the manifest (migrations, sample data) resolve against it with
  /// ``resolveResource(_:)``.
  public var manifestDirectory: URL { host.manifestDirectory }
  /// The writable folder the launch's data lives in; relative paths in params resolve
  /// against it with ``resolve(_:)``. The manifest's folder unless the app chose another.
  public var dataDirectory: URL { host.dataDirectory }
  /// When this attempt started, as time since the launch started.
  public let attemptStart: Duration
  /// The values the app handed to the launch.
  public var environment: LaunchEnvironment { host.environment }

  var clock: LaunchClock { host.clock }
  private let host: any StepHost

  /// Creates a context; the engine makes one per attempt (`LaunchTest.run` in `LaunchTesting`
  /// runs a plugin with one).
  ///
  /// `outputs` returns the hard dependencies' outputs, nearest first.
  /// `dataDirectory` defaults to `manifestDirectory`.
  package init(
    stepID: String, attempt: Int = 1, isFallback: Bool = false, manifestDirectory: URL,
    dataDirectory: URL? = nil, environment: LaunchEnvironment = LaunchEnvironment(),
    attemptStart: Duration = .zero,
    clock: LaunchClock = .continuous(),
    outputs: @escaping @Sendable () -> [any Sendable] = { [] },
    report: @escaping @Sendable (StepMessage) -> Void = { _ in }
  ) {
    self.init(
      attempt: attempt, isFallback: isFallback, attemptStart: attemptStart,
      host: ClosureStepHost(
        stepID: stepID, manifestDirectory: manifestDirectory,
        dataDirectory: dataDirectory ?? manifestDirectory, environment: environment, clock: clock,
        outputs: outputs, report: report))
  }

  init(attempt: Int, isFallback: Bool, attemptStart: Duration, host: any StepHost) {
    self.attempt = attempt
    self.isFallback = isFallback
    self.attemptStart = attemptStart
    self.host = host
  }

  /// The output of type `T` of the nearest hard dependency that produced one.
  ///
  /// Direct dependencies come first, in manifest order, then theirs.
  /// - Throws: ``StepFailure`` when no dependency produced a `T`; declare the input in
  ///   ``StepPlugin/inputs`` so that this is caught when the manifest loads instead.
  public func input<T: Sendable>(_ type: T.Type) throws -> T {
    // The walk stops at the first: reading every dependency's dependencies for each step that
    // asks made a chain of such steps quadratic.
    guard let value = host.firstDependencyOutput(where: { $0 is T }) as? T else {
      throw StepFailure(
        "step '\(stepID)' needs \(English.withArticle(String(describing: type))) from a dependency, and none produced one"
      )
    }
    return value
  }

  /// The app's value of type `T` from the launch environment.
  /// - Throws: ``StepFailure`` when the app provided none; declare it in
  ///   ``StepPlugin/requirements`` so that the launch refuses to start instead.
  public func environment<T: Sendable>(_ type: T.Type) throws -> T {
    guard let value = environment[type] else {
      throw StepFailure(
        "step '\(stepID)' needs \(English.withArticle(String(describing: type))) from the app's launch environment, and none was provided"
      )
    }
    return value
  }

  /// Every output of type `T` among the hard dependencies, nearest first.
  public func inputs<T: Sendable>(_ type: T.Type) -> [T] {
    host.dependencyOutputs().compactMap { $0 as? T }
  }

  /// Reports how far along the step is: `fraction` from 0 to 1, with an optional message
  /// such as `"Upgrading library..."`.
  public func reportProgress(_ fraction: Double?, _ message: String? = nil) {
    host.report(.progress(fraction: fraction.map { min(max($0, 0), 1) }, message: message))
  }

  /// Writes a line to the launch's log, attributed to this step.
  public func log(_ message: String) {
    host.report(.log(message))
  }

  /// The time since the launch started, on the launch's clock.
  public var now: Duration { clock.now() }

  /// Suspends until `deadline`, a time since the launch started, on the launch's clock.
  ///
  /// Sleeping until a deadline rather than for a duration keeps a step's timing exact on a
  /// manual clock in tests.
  public func sleep(until deadline: Duration) async throws {
    try await clock.sleep(deadline)
  }

  /// Suspends for `duration` on the launch's clock.
  public func sleep(for duration: Duration) async throws {
    try await clock.sleep(clock.now() + duration)
  }

  /// A data path from the manifest's params (a store, a queue file, an images folder) as a
  /// file URL: absolute paths stay, relative ones resolve against ``dataDirectory``.
  public func resolve(_ path: String) -> URL {
    Self.resolve(path, against: dataDirectory)
  }

  /// A path to a file shipped with the manifest (a migrations folder, a sample-data script):
  /// absolute paths stay, relative ones resolve against ``manifestDirectory``.
  public func resolveResource(_ path: String) -> URL {
    Self.resolve(path, against: manifestDirectory)
  }

  /// `path` as a file URL: absolute paths stay, relative ones resolve against `folder`. For
  /// plugin code that has a folder but no context (parameter decoding, the app's own files).
  public static func resolve(_ path: String, against folder: URL) -> URL {
    if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL }
    return folder.appendingPathComponent(path).standardizedFileURL
  }
}

/// Whoever runs a step: what the launch shares with it, the source of its inputs and the
/// receiver of its messages.
///
/// The engine's host is a value naming the run, the step and the attempt, which the context
/// holds inline: a context costs no closures or objects of its own.
protocol StepHost: Sendable {
  /// The step's id in the manifest.
  var stepID: String { get }
  /// The folder holding the manifest.
  var manifestDirectory: URL { get }
  /// The writable folder of the launch's data.
  var dataDirectory: URL { get }
  /// The values the app handed to the launch.
  var environment: LaunchEnvironment { get }
  /// The launch's clock.
  var clock: LaunchClock { get }
  /// The hard dependencies' outputs, nearest first.
  func dependencyOutputs() -> [any Sendable]
  /// The nearest hard dependency's output that `matches` accepts, reading no further.
  /// `matches` may run while the host holds the launch's outputs: it must not call back into
  /// the host (a type check, as `input(_:)` passes, is what it is for).
  func firstDependencyOutput(where matches: (any Sendable) -> Bool) -> (any Sendable)?
  /// Takes a progress report or log line from the step.
  func report(_ message: StepMessage)
}

/// A host made of values and closures, for contexts built outside the engine.
private struct ClosureStepHost: StepHost {
  let stepID: String
  let manifestDirectory: URL
  let dataDirectory: URL
  let environment: LaunchEnvironment
  let clock: LaunchClock
  let outputs: @Sendable () -> [any Sendable]
  let reporter: @Sendable (StepMessage) -> Void

  init(
    stepID: String, manifestDirectory: URL, dataDirectory: URL, environment: LaunchEnvironment,
    clock: LaunchClock, outputs: @escaping @Sendable () -> [any Sendable],
    report: @escaping @Sendable (StepMessage) -> Void
  ) {
    self.stepID = stepID
    self.manifestDirectory = manifestDirectory
    self.dataDirectory = dataDirectory
    self.environment = environment
    self.clock = clock
    self.outputs = outputs
    self.reporter = report
  }

  func dependencyOutputs() -> [any Sendable] { outputs() }
  func firstDependencyOutput(where matches: (any Sendable) -> Bool) -> (any Sendable)? {
    outputs().first(where: matches)
  }
  func report(_ message: StepMessage) { reporter(message) }
}

/// A message from a running step to the engine.
package enum StepMessage: Sendable, Equatable {
  /// How far along the step is.
  case progress(fraction: Double?, message: String?)
  /// A log line.
  case log(String)
}

/// The launch's clock, as a step sees it: time since the launch started, and sleeping.
package struct LaunchClock: Sendable {
  /// The time since the launch started.
  package let now: @Sendable () -> Duration
  /// Sleeps until a time since the launch started.
  package let sleep: @Sendable (Duration) async throws -> Void

  /// Wraps any clock, counting from `start`.
  package init<C: Clock>(_ clock: C, start: C.Instant) where C.Duration == Duration {
    now = { start.duration(to: clock.now) }
    sleep = { deadline in try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil)
    }
  }

  init(
    now: @escaping @Sendable () -> Duration,
    sleep: @escaping @Sendable (Duration) async throws -> Void
  ) {
    self.now = now
    self.sleep = sleep
  }

  /// The continuous clock, counting from now.
  package static func continuous() -> LaunchClock {
    let clock = ContinuousClock()
    return LaunchClock(clock, start: clock.now)
  }
}
