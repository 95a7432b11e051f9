/// A step's output, named once with its type: the app reads it with `session[key]` and
/// checks it against the plan with ``LaunchPlan/check(_:)``, instead of reading `nil` for
/// ever when the id has a typo or the type is wrong.
///
/// ```swift
/// extension OutputKey where Value == Page<Song> {
///   static let firstPage = OutputKey("firstPage")
/// }
/// try plan.check(.firstPage)                  // at startup, and in a test
/// if let page = launch[.firstPage] { ... }    // observable, like output(of:as:)
/// ```
public struct OutputKey<Value: Sendable>: Sendable, Hashable, CustomStringConvertible {
  /// The id of the step whose output it is.
  public let step: String

  /// The output of step `step`, a `Value`.
  public init(_ step: String) {
    self.step = step
  }

  /// `OutputKey<Value>("step")`.
  public var description: String { "OutputKey<\(String(describing: Value.self))>(\"\(step)\")" }
}

extension LaunchPlan {
  /// Checks that `key` names a step of the plan whose plugin outputs a `Value`: exactly that
  /// type (a key typed by a protocol the output conforms to reads the output, but is not
  /// checked here).
  ///
  /// - Throws: ``LaunchFailure`` of kind ``LaunchFailure/Kind/unknownStep`` (with the ids
  ///   closest to it) or ``LaunchFailure/Kind/wrongOutputType`` (naming the step, its plugin
  ///   and both types).
  public func check<Value>(_ key: OutputKey<Value>) throws(LaunchFailure) {
    guard let step = steps.first(where: { $0.id == key.step }) else {
      throw LaunchFailure(
        kind: .unknownStep, step: key.step,
        message:
          "\(key) names no step of '\(name)'."
          + Suggestions.didYouMean(key.step, in: steps.map(\.id)))
    }
    guard let descriptor = registry.descriptor(for: step.plugin),
      descriptor.outputType != ObjectIdentifier(Value.self)
    else { return }
    throw LaunchFailure(
      kind: .wrongOutputType, step: step.id, plugin: step.plugin,
      message:
        "\(key) does not match the plan: '\(step.id)' (\(step.plugin)) outputs \(descriptor.outputTypeName), not \(String(describing: Value.self))."
    )
  }
}
