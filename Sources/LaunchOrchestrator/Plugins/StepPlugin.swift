import Foundation

/// A kind of launch step: one type with typed parameters, a typed output and a `run` method.
///
/// ```swift
/// struct WarmCache: StepPlugin {
///   static let kind = "cache.warm"
///   static let summary = "Loads the most recent items into memory."
///   struct Parameters: StepParameters {
///     @Parameter("How many items to load.", in: 1...) var count = 20
///   }
///   let parameters: Parameters
///   init(parameters: Parameters) { self.parameters = parameters }
///   func run(_ context: StepContext) async throws -> CacheHandle { ... }
/// }
/// registry.register(WarmCache.self)
/// ```
public protocol StepPlugin: Sendable {
  /// The parameters a manifest gives the step in `params`, decoded when the manifest loads:
  /// a struct of ``Parameter`` properties, which also describe them for `orchestrate plugins`
  /// and the manifest JSON Schema.
  associatedtype Parameters: StepParameters = NoParameters
  /// What the step hands to the steps that depend on it.
  associatedtype Output: Sendable = Void

  /// The kind name manifests use, such as `store.init`.
  static var kind: String { get }
  /// One sentence saying what the step does.
  static var summary: String { get }
  /// Outputs of other steps this kind reads through ``StepContext/input(_:)``.
  ///
  /// A required input that no hard dependency provides is a validation error, so wiring
  /// mistakes surface before the launch runs.
  static var inputs: [StepInput] { get }
  /// Values this kind reads from the app's ``LaunchEnvironment`` through
  /// ``StepContext/environment(_:)``.
  ///
  /// A required value the app did not provide fails the launch before any step starts, with
  /// an error naming the step, its kind and the type.
  static var requirements: [StepRequirement] { get }
  /// Where its steps run: ``StepIsolation/main`` for a plugin that must run on the main actor
  /// (UIKit, a main-actor store), where `MainActor.assumeIsolated` then holds whatever the
  /// manifest says; a manifest giving such a step another `isolation` does not load.
  static var isolation: StepIsolation { get }

  /// Creates the step from its decoded parameters.
  ///
  /// Throw ``ParameterError`` for values that decode but make no sense (a negative limit):
  /// the manifest then fails to load with an error that names the step and the parameter.
  init(parameters: Parameters) throws

  /// Reads and checks, all of them, the files shipped with the manifest that the step reads
  /// only when a launch needs them, such as the migrations a store has not applied yet.
  ///
  /// A ``ManifestLoader`` made with `checksShippedFiles` calls it after `init(parameters:)`,
  /// as `orchestrate validate` does; a launch does not, so that it pays only for the files it
  /// uses. Throw ``ParameterError`` naming the parameter that names the file, as
  /// `init(parameters:)` does.
  func checkShippedFiles() throws

  /// Whether `run` blocks its thread (synchronous file or database I/O).
  ///
  /// Blocking steps run on threads of their own, so they never hold up timers, timeouts or
  /// other steps on Swift's cooperative pool.
  var isBlocking: Bool { get }

  /// Does the step's work.
  ///
  /// Throw to fail the attempt, or throw a ``LaunchRoute`` to end the launch on a route.
  func run(_ context: StepContext) async throws -> Output
}

extension StepPlugin {
  /// No summary.
  public static var summary: String { "" }
  /// No inputs.
  public static var inputs: [StepInput] { [] }
  /// No environment values.
  public static var requirements: [StepRequirement] { [] }
  /// Off the main actor, unless the manifest says `"isolation": "main"`.
  public static var isolation: StepIsolation { .default }
  /// Not blocking.
  public var isBlocking: Bool { false }
  /// No files read later than the manifest.
  public func checkShippedFiles() throws {}
}

/// The parameters of a plugin that takes none: only an empty `params` object is accepted.
public struct NoParameters: StepParameters {
  /// Creates empty parameters.
  public init() {}
}

/// An output of another step that a plugin reads.
public struct StepInput: Sendable {
  /// The type's identity.
  package let type: ObjectIdentifier
  // Named when a message or `orchestrate plugins` asks: a type's name is looked up through
  // its conformances, the first time, and plugins declare these in the registry every
  // launch builds before its first step.
  private let name: @Sendable () -> String
  /// The type's name, for messages.
  package var typeName: String { name() }
  /// Whether the step cannot run without it.
  package let isRequired: Bool

  /// An input the step cannot run without: some hard dependency must produce a `T`.
  public static func required<T: Sendable>(_ type: T.Type) -> StepInput {
    StepInput(type: ObjectIdentifier(type), name: { String(describing: T.self) }, isRequired: true)
  }

  /// An input the step uses when a dependency happens to produce one.
  public static func optional<T: Sendable>(_ type: T.Type) -> StepInput {
    StepInput(type: ObjectIdentifier(type), name: { String(describing: T.self) }, isRequired: false)
  }
}

/// A parameter value that decoded but cannot be used, thrown from `init(parameters:)`.
public struct ParameterError: Error, Sendable, Equatable {
  /// The parameter's key in `params`, or `nil` when the problem concerns several.
  public var parameter: String?
  /// What is wrong and what to write instead.
  public var message: String

  /// Creates a parameter error.
  public init(_ parameter: String?, _ message: String) {
    self.parameter = parameter
    self.message = message
  }
}

/// A step's failure, with a message meant for the person reading the report and, when the
/// plugin has one, a message for the app's users (the failure screen's).
///
/// Caught by an app (``LaunchPlan/clearCache()`` throws one too), `localizedDescription` is
/// ``userMessage`` and `"\(error)"` is ``message``, as for ``LaunchFailure``.
public struct StepFailure: UserFacingError, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, for developers.
  public var message: String
  /// What went wrong, for the app's users; without one, the failure screen says a sentence
  /// of its own.
  public var userMessage: String

  /// Creates a failure; `userMessage` is for the app's failure screen.
  public init(_ message: String, userMessage: String? = nil) {
    self.message = message
    self.userMessage = userMessage ?? LaunchFailure(kind: .stepFailed, message: "").userMessage
  }

  /// The message.
  public var description: String { message }
}
