/// One parameter of a step plugin, declared once: its key is the property's name, its type
/// the property's type, and it is required unless it has a default value or is optional.
///
/// ```swift
/// struct Parameters: StepParameters {
///   @Parameter("The store file; relative to the data folder.", isPath: true)
///   var path: String
///   @Parameter("Songs per page.", in: 1...1000) var limit = 50
///   @Parameter("The order of the songs.") var sort = SongOrder.mostPlayed
///   @Parameter("End the launch with this route.") var route: String?
/// }
/// ```
///
/// The declaration drives decoding `params`, `orchestrate plugins` and the manifest JSON
/// Schema; a value outside the bounds or the listed values fails the manifest with an error
/// naming the step and the parameter.
@propertyWrapper
public struct Parameter<Value: ParameterValue>: Sendable {
  /// The declared default, then the decoded value; `nil` for a required parameter not decoded.
  @usableFromInline var value: Value?
  /// Which parameter of its type this is, in the order the type creates them.
  @usableFromInline let ordinal: Int

  /// The parameter's value: the one the manifest gives, or the default; set it to make
  /// parameters in code.
  public var wrappedValue: Value {
    get {
      guard let value else {
        preconditionFailure(
          "a required \(Value.self) parameter has no value: set it, or decode the parameters from params"
        )
      }
      return value
    }
    set { value = newValue }
  }

  /// A parameter that takes `wrappedValue` when a manifest leaves it out.
  ///
  /// - Parameters:
  ///   - summary: What it means, for `orchestrate plugins` and the schema.
  ///   - key: The key in `params`, when it is not the property's name.
  ///   - isPath: Whether the string is a file or folder path (shown as `path`).
  ///   - values: The only strings allowed.
  ///   - defaultDescription: The default as people read it, for a default that depends on
  ///     other parameters (`"true unless readOnly"`).
  @inlinable
  public init(
    wrappedValue: Value, _ summary: String, key: String? = nil, isPath: Bool = false,
    oneOf values: [String]? = nil, defaultDescription: String? = nil
  ) {
    self.init(
      wrappedValue,
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, values: values, hasDefault: true,
        defaultDescription: defaultDescription))
  }

  /// A parameter a manifest must give.
  @inlinable
  public init(
    _ summary: String, key: String? = nil, isPath: Bool = false, oneOf values: [String]? = nil,
    defaultDescription: String? = nil
  ) {
    self.init(
      nil,
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, values: values,
        defaultDescription: defaultDescription))
  }

  /// A whole-number parameter with a default, from `bounds.lowerBound` to `bounds.upperBound`.
  @inlinable
  public init(
    wrappedValue: Value, _ summary: String, key: String? = nil, in bounds: ClosedRange<Int>
  ) where Value: BinaryInteger {
    self.init(
      wrappedValue,
      ParameterDeclaration(
        summary: summary, key: key, minimum: bounds.lowerBound, maximum: bounds.upperBound,
        hasDefault: true, check: Self.check(bounds.lowerBound, bounds.upperBound)))
  }

  /// A required whole-number parameter, from `bounds.lowerBound` to `bounds.upperBound`.
  @inlinable
  public init(_ summary: String, key: String? = nil, in bounds: ClosedRange<Int>)
  where Value: BinaryInteger {
    self.init(
      nil,
      ParameterDeclaration(
        summary: summary, key: key, minimum: bounds.lowerBound, maximum: bounds.upperBound,
        check: Self.check(bounds.lowerBound, bounds.upperBound)))
  }

  /// A whole-number parameter with a default, `minimum` or more.
  @inlinable
  public init(wrappedValue: Value, _ summary: String, key: String? = nil, minimum: Int)
  where Value: BinaryInteger {
    self.init(
      wrappedValue,
      ParameterDeclaration(
        summary: summary, key: key, minimum: minimum, hasDefault: true,
        check: Self.check(minimum, nil)))
  }

  /// A required whole-number parameter, `minimum` or more.
  @inlinable
  public init(_ summary: String, key: String? = nil, minimum: Int) where Value: BinaryInteger {
    self.init(
      nil,
      ParameterDeclaration(
        summary: summary, key: key, minimum: minimum, check: Self.check(minimum, nil)))
  }

  /// Takes the decoded value, when these parameters are being decoded, over `fallback`; hands
  /// the declaration over when they are being described. Inlined into the plugin's module, so
  /// that decoding a step's params makes each parameter without generic indirection, and
  /// never builds a declaration it does not need.
  @inlinable
  init(_ fallback: Value?, _ declaration: @autoclosure () -> ParameterDeclaration) {
    guard let round = ParameterRound.current else {
      value = fallback
      ordinal = -1
      return
    }
    ordinal = round.take()
    if round.isDescribing {
      value = fallback
      round.declare(
        ordinal, Self.self, declaration(), fallback: fallback,
        read: Self.reader(isRequired: fallback == nil))
    } else {
      // `nil` stands for a key the manifest left out: the declared value stays.
      value = round.value(at: ordinal) ?? fallback
    }
  }
}

extension Parameter where Value: ExpressibleByNilLiteral {
  /// An optional parameter: `nil` unless a manifest gives it.
  @inlinable
  public init(
    _ summary: String, key: String? = nil, isPath: Bool = false, oneOf values: [String]? = nil,
    defaultDescription: String? = nil
  ) {
    self.init(
      Value(nilLiteral: ()),
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, values: values,
        defaultDescription: defaultDescription))
  }
}

extension Parameter where Value: BinaryInteger {
  /// Says what is wrong with a number outside `minimum...maximum`, given the parameter's name.
  @usableFromInline
  static func check(_ minimum: Int, _ maximum: Int?)
    -> @Sendable (any Sendable, String) -> String?
  {
    { value, name in
      guard let number = value as? Value else { return nil }
      if let maximum {
        guard number < minimum || number > maximum else { return nil }
        return "'\(name)' must be from \(minimum) to \(maximum), not \(number)."
      }
      return number < minimum ? "'\(name)' must be \(minimum) or more, not \(number)." : nil
    }
  }
}

/// What a `@Parameter` attribute says, besides the type.
@usableFromInline
struct ParameterDeclaration: Sendable {
  var summary: String
  var key: String?
  var isPath: Bool
  var values: [String]?
  var minimum: Int?
  var maximum: Int?
  var hasDefault: Bool
  var defaultDescription: String?
  /// Says what is wrong with a value, given the parameter's name; `nil` when it is allowed.
  var check: (@Sendable (any Sendable, String) -> String?)?

  @usableFromInline
  init(
    summary: String, key: String?, isPath: Bool = false, values: [String]? = nil,
    minimum: Int? = nil, maximum: Int? = nil, hasDefault: Bool = false,
    defaultDescription: String? = nil, check: (@Sendable (any Sendable, String) -> String?)? = nil
  ) {
    self.summary = summary
    self.key = key
    self.isPath = isPath
    self.values = values
    self.minimum = minimum
    self.maximum = maximum
    self.hasDefault = hasDefault
    self.defaultDescription = defaultDescription
    self.check = check
  }
}
