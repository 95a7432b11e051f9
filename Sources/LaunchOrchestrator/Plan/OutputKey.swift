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
  /// Checks that `key` names a step of the plan whose plugin's output reads as a `Value`:
  /// the plugin outputs a `Value`, or a type that casts to it (one conforming to the protocol
  /// of an `OutputKey<any P>`, a subclass of the class of the key), as `session[key]` casts.
  ///
  /// - Throws: ``LaunchFailure`` of kind ``LaunchFailure/Kind/unknownStep`` (with the ids
  ///   closest to it) or ``LaunchFailure/Kind/wrongOutputType`` (naming the step, its plugin
  ///   and both types). A key typed by a protocol the check cannot look up (a `private` one,
  ///   or one with primary associated types, `any Store<Song>`) is refused as such: type it
  ///   by the output's own type, or by an internal protocol.
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
    let output = descriptor.outputTypeName
    let reason: String
    switch TypeCast.check(descriptor.outputMetatype, to: Value.self) {
    case .casts:
      return
    case .doesNot:
      reason = "outputs \(output), not \(String(describing: Value.self))"
    case .unknown:
      reason =
        "outputs \(output), and whether that is \(String(describing: Value.self)) cannot be told before it runs (a private protocol, or one with primary associated types); type the key by \(output) or by an internal protocol"
    }
    throw LaunchFailure(
      kind: .wrongOutputType, step: step.id, plugin: step.plugin,
      message: "\(key) does not match the plan: '\(step.id)' (\(step.plugin)) \(reason).")
  }
}

/// Whether a value of one type casts to another, told from the types alone, for
/// ``LaunchPlan/check(_:)``.
enum TypeCast: Equatable {
  case casts, doesNot
  /// The target is an existential the runtime cannot look up by name.
  case unknown

  /// Whether a value of type `source` casts to `target`: the same type, a subclass of the
  /// class `target`, or a type conforming to every protocol of the existential `target`
  /// (`any P`, `any P & Q`, `Any`, `AnyObject`, `any Base & P`).
  static func check(_ source: any Any.Type, to target: any Any.Type) -> TypeCast {
    if source == target { return .casts }
    func isMetatype<Target>(of _: Target.Type) -> Bool { source is Target.Type }
    if isMetatype(of: target) { return .casts }
    // In generic code, `Target.Type` for `Target == any P` is the metatype of the existential
    // itself, which only `(any P).self` is, so conformance needs a cast to the existential
    // metatype `any P.Type`, which generic code cannot spell. The runtime finds it by its
    // mangled name, the existential's own with `Xp` appended.
    switch metadataKind(of: target) {
    case existentialKind:
      guard let name = _mangledTypeName(target), let metatype = _typeByName(name + "Xp") else {
        return .unknown
      }
      func isValue<Metatype>(of _: Metatype.Type) -> Bool { (source as Any) is Metatype }
      return isValue(of: metatype) ? .casts : .doesNot
    case extendedExistentialKind:
      // `any P<Int>`: its mangled name is not read (asking for it crashes this runtime).
      return .unknown
    default:
      return .doesNot
    }
  }

  /// The kinds of type metadata (the runtime's ABI) of an existential (`any P`) and of an
  /// extended one (`any P<Int>`).
  private static let existentialKind: UInt = 0x303
  private static let extendedExistentialKind: UInt = 0x307

  /// The first word of a type's metadata: its kind, for every type but a class (whose first
  /// word is a pointer on Apple platforms, and a kind below these on others).
  private static func metadataKind(of type: any Any.Type) -> UInt {
    unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self)
  }
}
