import Foundation

/// Why a launch, or a step the app asked for, did not give the app what it wanted: a value
/// the app can branch on, the error the plugin threw, a message for developers and one for
/// the failure screen.
///
/// ```swift
/// case .failed(let failure):
///   if failure.underlying is OfflineError { OfflineView { Task { await launch.retry() } } }
///   else { FailureView(message: failure.userMessage) }
/// ```
///
/// Caught as any error, it says the same: `error.localizedDescription` is ``userMessage``
/// (what an alert shows), `"\(error)"` is ``message`` (what a log keeps).
public struct LaunchFailure: UserFacingError, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, as a value that can grow: compare with the static values.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name, which ``description`` gives.
    package let name: String

    /// A kind named `name`.
    package init(_ name: String) {
      self.name = name
    }

    /// A step failed its last attempt (and its fallback, if it has one).
    public static let stepFailed = Kind("stepFailed")
    /// A step's last attempt ran out of time.
    public static let timedOut = Kind("timedOut")
    /// The launch did not start: a step reads a value the app's environment lacks.
    public static let missingEnvironment = Kind("missingEnvironment")
    /// The manifest could not be made a plan (a test's manifest text, say).
    public static let invalidPlan = Kind("invalidPlan")
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
  /// The step that caused it, when one did.
  public var step: String?
  /// The plugin kind of that step.
  public var plugin: String?
  /// The error the plugin threw, as it threw it: `failure.underlying as? MyError` works. For
  /// a step skipped because a dependency failed, what that dependency's plugin threw.
  public var underlying: (any Error)?
  /// What happened, for developers: step ids, paths, the plugin's own words.
  public var message: String
  /// What happened, for the app's users: short, no paths. The plugin's own
  /// (``UserFacingError``) when it gave one, a sentence for the kind otherwise.
  public var userMessage: String

  /// Creates a failure; `userMessage` defaults to the underlying error's
  /// ``UserFacingError/userMessage``, else a sentence for `kind`.
  public init(
    kind: Kind, step: String? = nil, plugin: String? = nil, message: String,
    userMessage: String? = nil, underlying: (any Error)? = nil
  ) {
    self.kind = kind
    self.step = step
    self.plugin = plugin
    self.message = message
    self.underlying = underlying
    self.userMessage =
      userMessage ?? (underlying as? any UserFacingError)?.userMessage
      ?? Self.userMessage(for: kind)
  }

  /// The developer's message.
  public var description: String { message }

  /// Equal when everything but ``underlying`` (which need not be `Equatable`) is.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.kind == rhs.kind && lhs.step == rhs.step && lhs.plugin == rhs.plugin
      && lhs.message == rhs.message && lhs.userMessage == rhs.userMessage
  }

  /// A sentence for the failure screen when the plugin gave none.
  private static func userMessage(for kind: Kind) -> String {
    switch kind {
    case .timedOut: "Starting the app took too long. Please try again."
    case .cancelled: "Starting the app was cancelled."
    case .missingEnvironment, .invalidPlan:
      "The app could not start. Please update it or contact support."
    default: "Something went wrong while starting the app. Please try again."
    }
  }

  /// The failure of a launch refused before it started (`reason`, the report's error) for
  /// `missing`: the first step that needs a value the environment lacks is its step.
  static func refused(_ missing: [MissingRequirement], reason: String) -> LaunchFailure {
    LaunchFailure(
      kind: .missingEnvironment, step: missing.first?.step, plugin: missing.first?.plugin,
      message: reason)
  }

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

/// An error whose words are fit for the app's users: a plugin throws one so that the failure
/// screen says what happened (`"You're offline. Connect and try again."`), with the
/// developer's details kept in ``LaunchFailure/message``.
///
/// It is a `LocalizedError` whose description is ``userMessage``, so an app that shows any
/// error's `localizedDescription` (a SwiftUI `alert(isPresented:error:)`) shows these words,
/// not Foundation's "The operation couldn't be completed"; ``LaunchFailure`` and
/// ``StepFailure`` are such errors. A type that gives its own `errorDescription` keeps it.
public protocol UserFacingError: LocalizedError {
  /// Short, with no paths or developer wording.
  var userMessage: String { get }
}

extension UserFacingError {
  /// ``userMessage``: the words `localizedDescription` gives, for the app's users.
  public var errorDescription: String? { userMessage }
}
