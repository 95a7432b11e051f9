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

  /// `output`, the output of `step`, as a `T`: `()` for a step that outputs nothing when `T`
  /// is `Void`; a ``Kind/wrongOutputType`` failure naming both types otherwise.
  static func cast<T>(_ output: (any Sendable)?, of step: String, to type: T.Type) throws -> T {
    if let value = output as? T { return value }
    if output == nil, let none = (() as Any) as? T { return none }
    let found = output.map { English.withArticle(String(describing: Swift.type(of: $0))) }
    throw LaunchFailure(
      kind: .wrongOutputType, step: step,
      message:
        "'\(step)' outputs \(found ?? "nothing"), not \(English.withArticle(String(describing: T.self)))."
    )
  }
}
