import LaunchJSON

/// One parameter of a step plugin, declared once: its key is the property's name, its type
/// the property's type, and it is required unless it has a default value or is optional.
///
/// ```swift
/// struct Parameters: StepParameters {
///   @Parameter("The store file; relative to the data folder.", isPath: true)
///   var path: String
///   @Parameter("Songs per page.", in: 1...1000) var limit = 50
///   @Parameter("The order of the songs.") var sort = SongOrder.mostPlayed
///   @Parameter("End the launch with this route.", nonEmpty: true) var route: String?
/// }
/// ```
///
/// The declaration drives decoding `params`, `orchestrate plugins` and the manifest JSON
/// Schema; a value outside the bounds or the listed values, or an empty path or non-empty
/// string, fails the manifest with an error naming the step and the parameter.
///
/// Every initializer takes a ``ParameterValue``. The type itself asks only `Sendable`, which
/// the run time never checks: a requirement such as `Decodable` would be checked, with a search
/// through every conformance the process has loaded, the first time each `Parameter<T>` is
/// made from its name (reading a plugin's parameters, copying them), before a launch's first
/// step.
@propertyWrapper
public struct Parameter<Value: Sendable>: Sendable {
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
}

extension Parameter where Value: ParameterValue {
  /// A parameter that takes `wrappedValue` when a manifest leaves it out.
  ///
  /// - Parameters:
  ///   - summary: What it means, for `orchestrate plugins` and the schema.
  ///   - key: The key in `params`, when it is not the property's name.
  ///   - isPath: Whether the string is a file or folder path (shown as `path`); a path is
  ///     never empty, as an empty one would name the folder it is relative to.
  ///   - removesFiles: Whether the step removes files in the folder this path names:
  ///     `orchestrate validate` and `run` (and a ``ManifestLoader`` made with
  ///     `checksShippedFiles`) refuse a manifest where another step's path lies in it.
  ///   - rewritesFile: Whether the step rewrites the file this path names, or moves it aside
  ///     when it cannot read it: the same refuse a manifest where it is another step's path
  ///     or a file kept beside one (its `companions`, or the lock `.<name>.lock` of a file
  ///     another step rewrites: ``SharedFile``), lies in or holds one, or is the manifest.
  ///   - companions: The files the step keeps beside the file this path names, as suffixes
  ///     added to its name (`["-wal", "-shm", "-journal"]` for a SQLite database: with the
  ///     path `app.sqlite`, `app.sqlite-wal` and so on): the same take each for a path of the
  ///     step in this role, which no other step may rewrite, and which the step rewrites too
  ///     when it is declared `rewritesFile`. Each is non-empty and has no `/`.
  ///   - nonEmpty: Whether the string must have a character, or the array a string.
  ///   - values: The only strings allowed.
  ///   - defaultDescription: The default as people read it, for a default that depends on
  ///     other parameters (`"true unless readOnly"`); the schema then gives no default.
  ///   - requires: The keys of parameters that must be given too when this one is: a
  ///     parameter counts as given when its value is neither `null` nor `false`.
  ///   - excludes: The keys of parameters that cannot be given with this one.
  @inlinable
  public init(
    wrappedValue: Value, _ summary: String, key: String? = nil, isPath: Bool = false,
    removesFiles: Bool = false, rewritesFile: Bool = false, companions: [String] = [],
    nonEmpty: Bool = false,
    oneOf values: [String]? = nil, defaultDescription: String? = nil, requires: [String] = [],
    excludes: [String] = []
  ) {
    self.init(
      wrappedValue,
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, removesFiles: removesFiles,
        rewritesFile: rewritesFile, companions: companions, isNonEmpty: nonEmpty, values: values,
        hasDefault: true, defaultDescription: defaultDescription, requires: requires,
        excludes: excludes))
  }

  /// A parameter a manifest must give; `requires:` and `excludes:` as for a parameter with a
  /// default (the same arguments as an optional parameter's, whose initializer an optional
  /// type then chooses).
  @inlinable
  public init(
    _ summary: String, key: String? = nil, isPath: Bool = false, removesFiles: Bool = false,
    rewritesFile: Bool = false, companions: [String] = [], nonEmpty: Bool = false,
    oneOf values: [String]? = nil,
    defaultDescription: String? = nil, requires: [String] = [], excludes: [String] = []
  ) {
    self.init(
      nil,
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, removesFiles: removesFiles,
        rewritesFile: rewritesFile, companions: companions, isNonEmpty: nonEmpty, values: values,
        defaultDescription: defaultDescription, requires: requires, excludes: excludes))
  }

  /// A whole-number parameter with a default, within `bounds`: `in: 1...1000`, or `in: 0...`
  /// for no maximum.
  @inlinable
  public init(
    wrappedValue: Value, _ summary: String, key: String? = nil, in bounds: some RangeExpression<Int>
  ) where Value: BinaryInteger {
    self.init(
      wrappedValue,
      ParameterDeclaration(
        summary: summary, key: key, hasDefault: true, bounds: IntegerBounds(Value.self, bounds)))
  }

  /// A required whole-number parameter, within `bounds` (`in: 1...1000`, `in: 0...`).
  @inlinable
  public init(_ summary: String, key: String? = nil, in bounds: some RangeExpression<Int>)
  where Value: BinaryInteger {
    self.init(
      nil,
      ParameterDeclaration(summary: summary, key: key, bounds: IntegerBounds(Value.self, bounds)))
  }

  /// Takes the decoded value, when these parameters are being decoded, over `fallback`; hands
  /// the declaration over when they are being described. Inlined into the plugin's module, so
  /// that decoding a step's params makes each parameter without generic indirection, and
  /// never builds a declaration it does not need.
  @inlinable
  init(_ fallback: Value?, _ declaration: @autoclosure () -> ParameterDeclaration) {
    guard let current = ParameterRound.unretainedCurrent else {
      value = fallback
      ordinal = -1
      return
    }
    // Borrowed, not retained: the round outlives the `init()` it is current for, and a
    // retain and a release for each parameter of each step cost more than reading its value.
    (ordinal, value) = current._withUnsafeGuaranteedRef { round in
      let ordinal = round.take()
      if round.isDescribing {
        round.declare(ordinal, Self.self, declaration(), fallback: fallback)
        return (ordinal, fallback)
      }
      // `nil` stands for a key the manifest left out: the declared value stays.
      return (ordinal, round.value(at: ordinal) ?? fallback)
    }
  }
}

extension Parameter where Value: ParameterValue & ExpressibleByNilLiteral {
  /// An optional parameter: `nil` unless a manifest gives it (`null` leaves it out too);
  /// `requires:` and `excludes:` as for a parameter with a default.
  @inlinable
  public init(
    _ summary: String, key: String? = nil, isPath: Bool = false, removesFiles: Bool = false,
    rewritesFile: Bool = false, companions: [String] = [], nonEmpty: Bool = false,
    oneOf values: [String]? = nil,
    defaultDescription: String? = nil, requires: [String] = [], excludes: [String] = []
  ) {
    self.init(
      Value(nilLiteral: ()),
      ParameterDeclaration(
        summary: summary, key: key, isPath: isPath, removesFiles: removesFiles,
        rewritesFile: rewritesFile, companions: companions, isNonEmpty: nonEmpty, values: values,
        defaultDescription: defaultDescription, requires: requires, excludes: excludes))
  }

  /// An optional whole-number parameter, `nil` unless a manifest gives it, within `bounds`
  /// (`in: 1...1000`, `in: 0...`).
  @inlinable
  public init<Number: BinaryInteger & ParameterValue>(
    _ summary: String, key: String? = nil, in bounds: some RangeExpression<Int>
  ) where Value == Number? {
    self.init(
      Value(nilLiteral: ()),
      ParameterDeclaration(summary: summary, key: key, bounds: IntegerBounds(Number.self, bounds)))
  }
}

/// The bounds a whole-number parameter declares.
@usableFromInline
struct IntegerBounds: Sendable {
  @usableFromInline var minimum: Int
  @usableFromInline var maximum: Int?
  /// The value as its type prints it, when it is a number outside the bounds; `nil` otherwise.
  @usableFromInline var outside: @Sendable (any Sendable) -> String?

  /// Bounds for values of type `Number` within `range`: `1...1000`, `0...`, `..<10`. A range
  /// open at the top has no maximum; one open at the bottom starts at `Int.min`.
  @inlinable
  init<Number: BinaryInteger & Sendable>(_ type: Number.Type, _ range: some RangeExpression<Int>) {
    // Every range an `Int` range expression names, as a half-open range of `Int`s: the top
    // of `Int.min..<Int.max` stands for "no maximum".
    let range = range.relative(to: Int.min..<Int.max)
    var minimum = range.lowerBound
    var maximum = range.upperBound == .max ? nil : range.upperBound - 1
    // Within the type's own range too: a `UInt8` declared `in: 0...` still stops at 255.
    let limits = Self.limits(of: Number.self)
    if let lowest = limits.minimum { minimum = Swift.max(minimum, lowest) }
    if let highest = limits.maximum { maximum = Swift.min(maximum ?? highest, highest) }
    self.init(type, minimum, maximum)
  }

  /// The smallest and largest values of `type`, where they are within `Int`'s own (`nil`
  /// says no more than an `Int` does), found by trying the limits of the narrower standard
  /// integers: asking whether `T` is a `FixedWidthInteger` would search the process's
  /// conformances, and declarations are read on a launch's cold path.
  @usableFromInline
  static func limits<T: BinaryInteger>(of type: T.Type) -> (minimum: Int?, maximum: Int?) {
    let highs =
      [Int(Int8.max), Int(UInt8.max), Int(Int16.max), Int(UInt16.max)]
      + [Int(Int32.max), Int(UInt32.max), Int.max]
    let lows = [0, Int(Int8.min), Int(Int16.min), Int(Int32.min), Int.min]
    let highest = highs.last { T(exactly: $0) != nil }
    let lowest = lows.last { T(exactly: $0) != nil }
    return (lowest == .min ? nil : lowest, highest == .max ? nil : highest)
  }

  /// Bounds for values of type `Number` (or `Number?`, which casts to it when present).
  @inlinable
  init<Number: BinaryInteger & Sendable>(_ type: Number.Type, _ minimum: Int, _ maximum: Int?) {
    self.minimum = minimum
    self.maximum = maximum
    outside = { value in
      guard let number = value as? Number else { return nil }
      // A number no `Int` holds lies beyond any bound on its side.
      let isInside =
        Int(exactly: number).map { $0 >= minimum && $0 <= (maximum ?? .max) }
        ?? (number > 0 && maximum == nil)
      return isInside ? nil : "\(number)"
    }
  }

  /// Whether a number as written in JSON is whole and outside the bounds, read exactly from
  /// its text: `nil` when it is not a whole number at all.
  func isOutside(_ value: JSONValue) -> Bool? {
    switch value.integer(Int.self) {
    case .exact(let number): number < minimum || number > (maximum ?? .max)
    // Below every `Int` is below the minimum; above, beyond the maximum if there is one.
    case .outOfRange: value.kind.isNegativeNumber || maximum != nil
    case .fractional, nil: nil
    }
  }

  /// Says that parameter `name` is `number`, written as it is in the manifest, and what it
  /// must be instead.
  func message(_ name: String, _ number: String) -> String {
    guard let maximum else { return "'\(name)' must be \(minimum) or more, not \(number)." }
    return "'\(name)' must be from \(minimum) to \(maximum), not \(number)."
  }
}

/// What a `@Parameter` attribute says, besides the type.
@usableFromInline
struct ParameterDeclaration: Sendable {
  var summary: String
  var key: String?
  var isPath: Bool
  /// Whether the step removes files in the folder the path names.
  var removesFiles: Bool
  /// Whether the step rewrites the file the path names, or moves it aside.
  var rewritesFile: Bool
  /// The files the step keeps beside the path's, as suffixes added to its name.
  var companions: [String]
  var isNonEmpty: Bool
  var values: [String]?
  var hasDefault: Bool
  var defaultDescription: String?
  var bounds: IntegerBounds?
  /// The parameters that must be given too when this one is.
  var requires: [String]
  /// The parameters that cannot be given with this one.
  var excludes: [String]

  @usableFromInline
  init(
    summary: String, key: String?, isPath: Bool = false, removesFiles: Bool = false,
    rewritesFile: Bool = false, companions: [String] = [], isNonEmpty: Bool = false,
    values: [String]? = nil, hasDefault: Bool = false, defaultDescription: String? = nil,
    bounds: IntegerBounds? = nil, requires: [String] = [], excludes: [String] = []
  ) {
    self.summary = summary
    self.key = key
    precondition(
      isPath || !removesFiles, "a parameter that names a folder to remove files in is a path")
    precondition(isPath || !rewritesFile, "a parameter that names a file to rewrite is a path")
    precondition(isPath || companions.isEmpty, "a parameter with files kept beside it is a path")
    precondition(
      companions.allSatisfy { !$0.isEmpty && !$0.contains("/") },
      "a companion is a non-empty suffix of the path's file name, without '/'")
    self.isPath = isPath
    self.removesFiles = removesFiles
    self.rewritesFile = rewritesFile
    self.companions = companions
    self.isNonEmpty = isNonEmpty
    self.values = values
    self.hasDefault = hasDefault
    self.defaultDescription = defaultDescription
    self.bounds = bounds
    self.requires = requires
    self.excludes = excludes
  }
}

extension JSONValue.Kind {
  /// Whether this is a number below zero.
  fileprivate var isNegativeNumber: Bool {
    if case .number(let number) = self { return number < 0 }
    return false
  }
}
