/// Why a launch, or a step the app asked for, did not give the app what it wanted: a value
/// the app can branch on, with a message for developers.
public struct LaunchFailure: Error, Sendable, CustomStringConvertible {
  /// What went wrong, as a value that can grow: compare with the static values.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name.
    public let name: String

    /// A kind named `name`.
    public init(_ name: String) {
      self.name = name
    }

    /// A step failed its last attempt.
    public static let stepFailed = Kind("stepFailed")
    /// A step's last attempt ran out of time.
    public static let timedOut = Kind("timedOut")
    /// A step never started: a dependency did not succeed, or the launch ended first.
    public static let skipped = Kind("skipped")
    /// A step was running when the launch was cancelled.
    public static let cancelled = Kind("cancelled")
    /// The plan has no step with the id asked for.
    public static let unknownStep = Kind("unknownStep")
    /// The step asked for runs in the launch, not on demand.
    public static let notOnDemand = Kind("notOnDemand")
    /// The step's output is not of the type asked for.
    public static let wrongOutputType = Kind("wrongOutputType")

    /// The kind's name.
    public var description: String { name }
  }

  /// What went wrong.
  public var kind: Kind
  /// The step concerned, when one is.
  public var step: String?
  /// What happened, for developers.
  public var message: String

  /// Creates a failure.
  public init(kind: Kind, step: String? = nil, message: String) {
    self.kind = kind
    self.step = step
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
