import Foundation
import LaunchJSON
import Synchronization

/// A plugin's parameters: a struct whose ``Parameter`` properties declare, once, what a
/// manifest may write in the step's `params`.
///
/// ```swift
/// struct Parameters: StepParameters {
///   @Parameter("How many items to load.", in: 1...) var count = 20
///   @Parameter("Where to load them from.", isPath: true) var file: String
/// }
/// ```
///
/// The registry decodes `params` into it when the manifest loads (a key it does not declare
/// is an unknown parameter), and describes it for `orchestrate plugins` and the manifest JSON
/// Schema, reading the declarations once per type.
public protocol StepParameters: Sendable {
  /// The parameters with their declared defaults; decoding builds them with it too, so it
  /// must create the same parameters, in the same order, every time.
  init()
}

/// The folder of the manifest that `params` come from, for parameters that check files
/// shipped with the manifest when it loads: `@ManifestDirectory var manifestDirectory: URL?`.
/// `nil` for parameters made in code.
@propertyWrapper
public struct ManifestDirectory: Sendable {
  /// The folder, when the parameters were decoded from a manifest.
  public let wrappedValue: URL?

  /// Takes the folder of the manifest being decoded.
  public init() {
    let round = ParameterRound.current
    round?.notesManifestDirectory()
    wrappedValue = round?.manifestDirectory
  }
}

/// A type's parameters, read from its `@Parameter` properties: how to decode each value into
/// the parameter that declared it, and, when asked, how to describe them.
struct ParameterSchema: Sendable {
  struct Entry: Sendable {
    var key: ParameterKey
    /// Which parameter of the type, in the order `init()` creates them.
    var ordinal: Int
    /// Whether a manifest must give it.
    var isRequired: Bool
    /// Reads the value, throwing a ``ParameterError`` for one the declaration does not allow.
    var read: ParameterReader
    /// The parameter as people and the schema see it: made only when asked, as its default's
    /// text and JSON, and whether its type is optional, cost more than decoding a step.
    var describe: @Sendable () -> ParameterDescription
    /// The keys of the parameters it requires and excludes (``ParameterRules``).
    var requires: [String] = []
    var excludes: [String] = []
  }

  var entries: [Entry]
  /// The entries that require or exclude others, checked after every value is read: none,
  /// in most types.
  let ruled: [Entry]
  /// How many parameters `init()` creates.
  var count: Int
  /// Whether the type has a ``ManifestDirectory``: only then is the folder looked up.
  var readsManifestDirectory: Bool
  /// The entries described, once.
  let descriptions: Lazy<[ParameterDescription]>

  init(entries: [Entry], count: Int, readsManifestDirectory: Bool) {
    self.entries = entries
    self.count = count
    self.readsManifestDirectory = readsManifestDirectory
    ruled = entries.filter { !$0.requires.isEmpty || !$0.excludes.isEmpty }
    descriptions = Lazy { entries.map { $0.describe() } }
  }

  /// Read once per type: reflection costs far more than decoding a step's params. A list,
  /// not a dictionary keyed by type: a launch reads a handful, and a dictionary of
  /// `ObjectIdentifier` keys would look up its `Hashable` conformance at run time, a search
  /// through every conformance loaded, on a launch's path.
  private static let known = Locked<[(type: ObjectIdentifier, schema: ParameterSchema)]>([])

  /// The schema of `type`, read the first time it is asked for.
  static func of<Parameters: StepParameters>(_ type: Parameters.Type) -> ParameterSchema {
    let id = ObjectIdentifier(type)
    if let schema = known.withLock({ $0.first { $0.type == id }?.schema }) { return schema }
    let schema = read(type)
    return known.withLock { known in
      if let first = known.first(where: { $0.type == id }) { return first.schema }
      known.append((id, schema))
      return schema
    }
  }

  private static func read<Parameters: StepParameters>(_ type: Parameters.Type) -> ParameterSchema {
    let round = ParameterRound(describing: ())
    let instance = ParameterRound.making(with: round) { Parameters() }
    let declared = round.declared
    var entries: [Entry] = []
    func add(_ field: ParameterRound.Field, label: String) {
      // A wrapped property's storage is its name with an underscore before it.
      let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
      // Each declaration recognizes its own wrapper by its exact type, a comparison of
      // metadata: a cast to a protocol would search the conformances of the process for
      // each wrapper type, the first time.
      guard let made = declared.lazy.compactMap({ $0.entry(of: field, named: name) }).first
      else { return }
      precondition(
        !entries.contains { $0.key.stringValue == made.key.stringValue },
        "\(Parameters.self) declares the parameter '\(made.key.stringValue)' twice")
      entries.append(made)
    }
    if let fields = StoredFields.of(Parameters.self) {
      withUnsafeBytes(of: instance) { storage in
        for field in fields {
          add(.stored(field.type, storage.baseAddress! + field.offset), label: field.name)
        }
      }
    } else {
      for child in Mirror(reflecting: instance).children {
        add(.value(child.value), label: child.label ?? "")
      }
    }
    for entry in entries {
      for other in entry.requires + entry.excludes {
        precondition(
          entries.contains { $0.key.stringValue == other },
          "\(Parameters.self)'s parameter '\(entry.key.stringValue)' names '\(other)', which it does not declare"
        )
      }
    }
    return ParameterSchema(
      entries: entries, count: round.taken,
      readsManifestDirectory: round.readsManifestDirectory.load(ordering: .relaxed))
  }
}

extension Parameter where Value: ParameterValue {
  /// The parameter named `name` (unless its declaration gives a key), declared with
  /// `declaration` and `fallback` as its default.
  static func entry(
    name propertyName: String, ordinal: Int, declaration: ParameterDeclaration, fallback: Value?
  ) -> ParameterSchema.Entry {
    let name = declaration.key ?? propertyName
    // What `describe` says, without asking whether `Value` is optional: a parameter without
    // a default is made by `init(_:)` (no fallback) unless its type is optional, when the
    // initializer for optionals gives it `nil`.
    let isRequired = !declaration.hasDefault && fallback == nil
    // What the declaration says is known without asking the type at run time: such a cast
    // searches the process's conformances, on the launch's cold path. The type's own shape
    // is asked only to describe it, or to explain a value it refused.
    let declared = declaredType(name: name, declaration)
    let describe: @Sendable () -> ParameterDescription = {
      let isOptional = Value.self is any OptionalParameterValue.Type
      var givenDefault = declaration.hasDefault ? fallback : nil
      // An optional declared `= nil` has no default to show.
      if isOptional, givenDefault.map(ParameterShape.text(of:)) == "" { givenDefault = nil }
      return ParameterDescription(
        name, declared ?? ParameterShape.type(of: Value.self),
        required: !declaration.hasDefault && !isOptional,
        default: declaration.defaultDescription ?? givenDefault.map(ParameterShape.text(of:)),
        json: declaration.defaultDescription == nil
          ? givenDefault.flatMap(ParameterShape.json(of:)) : nil,
        removesFiles: declaration.removesFiles, rewritesFile: declaration.rewritesFile,
        companions: declaration.companions, requires: declaration.requires,
        excludes: declaration.excludes, declaration.summary)
    }
    return ParameterSchema.Entry(
      key: ParameterKey(name), ordinal: ordinal, isRequired: isRequired,
      read: checked(
        reader(isRequired: fallback == nil), name: name, type: declared,
        bounds: declaration.bounds, mayBeEnum: declared == nil && scalarReader == nil,
        describe: describe),
      describe: describe, requires: declaration.requires, excludes: declaration.excludes)
  }

  /// The value type the declaration gives (listed values, a path, a non-empty text, bounds);
  /// `nil` when the type alone says.
  private static func declaredType(
    name: String, _ declaration: ParameterDeclaration
  ) -> ParameterDescription.ValueType? {
    // Worked out only for a declaration that needs them: each type compared is made at run
    // time the first time.
    var isText: Bool { Value.self == String.self || Value.self == String?.self }
    var isTexts: Bool { Value.self == [String].self || Value.self == [String]?.self }
    if declaration.isPath || declaration.values != nil {
      precondition(isText, "'\(name)' is declared as text, so it must be a String")
    }
    if let bounds = declaration.bounds {
      return .integer(minimum: bounds.minimum, maximum: bounds.maximum)
    }
    if let values = declaration.values { return .oneOf(values) }
    if declaration.isPath { return .path }
    if declaration.isNonEmpty {
      let isText = isText
      precondition(
        isText || isTexts, "'\(name)' is declared non-empty, so it must be a String or [String]")
      return isText ? .string(nonEmpty: true) : .strings(nonEmpty: true)
    }
    return nil
  }

  /// Reads the value as its type does, then checks it against the declared values, length or
  /// bounds; `mayBeEnum` when `Value` may be an enum of strings, whose cases a refused value
  /// is then checked against, to name them.
  private static func checked(
    _ read: @escaping ParameterReader, name: String, type: ParameterDescription.ValueType?,
    bounds: IntegerBounds?, mayBeEnum: Bool,
    describe: @escaping @Sendable () -> ParameterDescription
  ) -> ParameterReader {
    /// Refuses `text` when it is not one of `values`, naming the closest.
    @Sendable func check(_ text: String, among values: [String]) throws {
      guard !values.contains(text) else { return }
      throw ParameterError(
        name,
        "unknown \(name) '\(text)'.\(Suggestions.didYouMean(text, in: values)) "
          + "Use one of: \(values.joined(separator: ", ")).")
    }
    switch type {
    case .oneOf(let values):
      return { value, key, unused in
        if let value, value.kind != .null {
          try check(try JSONValueDecoder.string(value, at: [key]), among: values)
        }
        return try read(value, key, &unused)
      }
    case nil:
      guard mayBeEnum else { return read }
      return { value, key, unused in
        do {
          return try read(value, key, &unused)
        } catch let error as DecodingError {
          // An enum of strings refuses an unknown value without saying which it knows: its
          // cases are asked for only now, to say so.
          if case .oneOf(let values) = ParameterShape.type(of: Value.self),
            let text = value?.stringValue
          {
            try check(text, among: values)
          }
          throw error
        }
      }
    case .string(nonEmpty: true), .strings(nonEmpty: true), .path:
      return { value, key, unused in
        let given = try read(value, key, &unused)
        if (given as? String)?.isEmpty == true || (given as? [String])?.isEmpty == true {
          // What to write instead, from the description: only a mistake needs it.
          let instead =
            describe().defaultValue.map { "; leave it out for '\($0)'." }
            ?? (Value.self is any OptionalParameterValue.Type ? "; leave it out instead." : ".")
          throw ParameterError(name, "'\(name)' cannot be empty\(instead)")
        }
        return given
      }
    default:
      guard let bounds else { return read }
      return { value, key, unused in
        let number: (any Sendable)?
        do {
          number = try read(value, key, &unused)
        } catch let error as DecodingError {
          // A whole number beyond what the type holds, and so beyond the declared bounds: the
          // bounds say what to write instead, not the type's limits.
          guard let written = value.flatMap(WrittenNumber.init),
            bounds.isOutside(written.value) == true
          else { throw error }
          throw ParameterError(name, bounds.message(name, written.text))
        }
        if let number, let shown = bounds.outside(number) {
          let written = value.flatMap(WrittenNumber.init)
          throw ParameterError(name, bounds.message(name, written?.text ?? shown))
        }
        return number
      }
    }
  }
}

/// A number as the manifest wrote it (`1e3`, `99999999999999999999`), for messages about it.
private struct WrittenNumber {
  var value: JSONValue
  var text: String

  /// `value` when it is a number; `nil` otherwise.
  init?(_ value: JSONValue) {
    guard case .number(let number) = value.kind else { return nil }
    self.value = value
    text = value.numberText ?? "\(number)"
  }
}

extension ParameterSchema {
  /// Decodes `params` into `Parameters`, with every value the declarations do not allow or
  /// its type cannot read, and every required one missing (each parameter's problem, in the
  /// order they are declared, reported with the unknown keys, as a problem
  /// `init(parameters:)` throws would be), and the keys no parameter reads: each value is read
  /// from the parsed JSON by its parameter's reader, without a decoder.
  /// `reusing` is a round to decode with, when the caller keeps one for many steps and holds
  /// its only reference (see ``ParameterRound/reusable()``).
  func decode<Parameters: StepParameters>(
    _ params: JSONValue, as type: Parameters.Type, manifestDirectory: URL?,
    reusing reused: ParameterRound? = nil
  ) throws -> (
    parameters: Parameters, problems: [any Error], unused: [JSONValueDecoder.UnusedKey]
  ) {
    guard let members = params.members else {
      throw JSONValueDecoder.mismatch(
        [String: Any].self, params, expected: "an object", at: [])
    }
    // Only the values given: a slot for each parameter, most of them empty, would be made,
    // and destroyed, through the existential's value witnesses one by one. Into the reused
    // round's own array, which keeps its storage from step to step.
    var values: [(ordinal: Int, value: any Sendable)] = []
    if let reused { swap(&values, &reused.values) }
    var problems: [any Error] = []
    var given: UInt64 = 0
    var nested: [JSONValueDecoder.UnusedKey] = []
    // Keys are unique in both: when every member is some parameter's, none is unknown.
    var known = 0
    var inOrder = true
    var lastOrdinal = -1
    // The entries taken by index, not by `for in`, which copied each one (a retain and a
    // release of its key, its closures and its lists) for every step; a member's key compared
    // with an entry's by length first, then byte for byte, as JSON keys are compared: a step
    // gives one or two of half a dozen parameters.
    for index in entries.indices {
      let length = entries[index].key.stringValue.utf8.count
      var member: Int?
      for position in members.indices
      where members[position].key.utf8.count == length
        && Self.sameBytes(members[position].key, entries[index].key.stringValue)
      {
        member = position
        break
      }
      if member != nil { known += 1 }
      // A parameter the params leave out keeps its default: no need to ask for it.
      if member == nil, !entries[index].isRequired { continue }
      do {
        let value = try entries[index].read(
          member.map { members[$0].value }, entries[index].key, &nested)
        if let value {
          let ordinal = entries[index].ordinal
          if values.capacity == 0 { values.reserveCapacity(members.count) }
          given |= 1 << UInt64(Swift.min(ordinal, 63))
          if ordinal < lastOrdinal { inOrder = false }
          lastOrdinal = ordinal
          values.append((ordinal, value))
        }
      } catch {
        // Each parameter's own: a manifest's mistakes are all said at once.
        problems.append(error)
      }
    }
    for entry in ruled where ParameterRules.isGiven(entry.key.stringValue, in: members) {
      let name = entry.key.stringValue
      for other in entry.requires where !ParameterRules.isGiven(other, in: members) {
        problems.append(ParameterError(name, ParameterRules.requires(name, other)))
      }
      for other in entry.excludes where ParameterRules.isGiven(other, in: members) {
        problems.append(ParameterError(name, ParameterRules.excludes(name, other)))
      }
    }
    var unused: [JSONValueDecoder.UnusedKey] = []
    if known < members.count {
      let keys = entries.map(\.key.stringValue).sorted()
      // Byte for byte, as the member was matched above: a key equal to a name only by
      // Unicode equivalence (a KELVIN SIGN for a `K`) is another key, so it is named.
      for member in members where !keys.contains(where: { Self.sameBytes($0, member.key) }) {
        unused.append(
          JSONValueDecoder.UnusedKey(
            path: .root, key: member.key, offset: member.keyOffset, knownKeys: keys))
      }
    }
    if !inOrder { values.sort { $0.ordinal < $1.ordinal } }
    let directory = readsManifestDirectory ? manifestDirectory : nil
    let round: ParameterRound
    if let reused {
      // Handed back, not copied: the round's array must stay its only reference, to keep its
      // storage when it is emptied.
      swap(&values, &reused.values)
      reused.start(given: given, manifestDirectory: directory)
      round = reused
    } else {
      round = ParameterRound(values: values, given: given, manifestDirectory: directory)
    }
    let parameters = ParameterRound.making(with: round) { Parameters() }
    reused?.finish()
    return (parameters, problems, nested.isEmpty ? unused : unused + nested)
  }
}

extension ParameterSchema {
  /// Whether `one` and `other` are the same UTF-8 bytes, as JSON compares keys (`==` also
  /// equates strings that only Unicode normalization makes equal), compared over the strings'
  /// own storage: the elements of their UTF-8 views, compared one by one, cost some 400
  /// instructions for a key of eight bytes, twice a step.
  static func sameBytes(_ one: String, _ other: String) -> Bool {
    let contiguous = one.utf8.withContiguousStorageIfAvailable { one in
      other.utf8.withContiguousStorageIfAvailable { one.elementsEqual($0) }
    }
    if let contiguous, let same = contiguous { return same }
    return one.utf8.elementsEqual(other.utf8)
  }
}

/// What the parameters being created take their values from, in the order they are created;
/// or, while a type is being described, what collects their declarations.
@usableFromInline
final class ParameterRound: Sendable {
  /// The round of the parameters `init()` is creating now on this thread, if any.
  @usableFromInline static var current: ParameterRound? {
    pthread_getspecific(currentKey).map {
      Unmanaged<ParameterRound>.fromOpaque($0).takeUnretainedValue()
    }
  }

  /// ``current``, not retained: for a caller that only borrows it while `init()` runs, which
  /// ``making(with:_:)`` keeps it alive for.
  @usableFromInline static var unretainedCurrent: Unmanaged<ParameterRound>? {
    pthread_getspecific(currentKey).map { Unmanaged<ParameterRound>.fromOpaque($0) }
  }

  /// Runs `make` (a synchronous `init()`) with `round` as the current round. A value of this
  /// thread's, not a task-local one: binding a task-local value allocates, and reading one
  /// walks the task's bindings, for every step a manifest holds and each of its parameters.
  static func making<Parameters>(with round: ParameterRound, _ make: () -> Parameters)
    -> Parameters
  {
    let outer = pthread_getspecific(currentKey)
    pthread_setspecific(currentKey, Unmanaged.passUnretained(round).toOpaque())
    defer { pthread_setspecific(currentKey, outer) }
    return withExtendedLifetime(round) { make() }
  }

  /// The key of this thread's current round.
  private static let currentKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "no thread-specific key for parameter rounds (\(status))")
    return key
  }()

  // Set only by the one thread using the round: a reused round (``reusable()``) is started and
  // finished by its owner, on the thread that makes the parameters with it in between. Never
  // accessed while being set, so the run-time exclusivity check (on every parameter made)
  // would only cost.
  @exclusivity(unchecked) nonisolated(unsafe) private(set) var manifestDirectory: URL?
  /// The values given, each with the ordinal of its parameter, in the order of the ordinals.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe)
    var values: [(ordinal: Int, value: any Sendable)]
  /// Bit `n` set when parameter `n` has a value in `values`; bit 63 stands for every parameter
  /// from the 64th on.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) private(set) var given: UInt64
  private let declarations: Locked<[Declaration]>?

  /// A declaration kept while describing a type.
  struct Declaration: Sendable {
    /// The wrapper it makes, `Parameter<Value>`: a stored property of another type is not it,
    /// which is known without making its entry.
    let wrapper: ObjectIdentifier
    /// The entry of the stored property `field`, named `name`, when that is the parameter
    /// declared.
    let entry: @Sendable (_ field: Field, _ name: String) -> ParameterSchema.Entry?

    /// The entry of `field`, when that is the parameter declared.
    func entry(of field: Field, named name: String) -> ParameterSchema.Entry? {
      if case .stored(let type, _) = field, ObjectIdentifier(type) != wrapper { return nil }
      return entry(field, name)
    }
  }

  /// A stored property of the parameters being described.
  enum Field {
    /// Its value, from a `Mirror`.
    case value(Any)
    /// Its type, and where its value is in the struct.
    case stored(Any.Type, UnsafeRawPointer)
  }
  @usableFromInline let next = Atomic<Int>(0)

  /// A round that decodes: parameter `n` takes the value `values` holds for it; `given` has
  /// the bit of each (see ``given``).
  init(values: [(ordinal: Int, value: any Sendable)], given: UInt64, manifestDirectory: URL?) {
    self.values = values
    self.given = given
    self.manifestDirectory = manifestDirectory
    declarations = nil
  }

  /// A round to decode many steps' parameters with, one after the other, on one thread: its
  /// storage is kept from one to the next.
  static func reusable() -> ParameterRound {
    ParameterRound(values: [], given: 0, manifestDirectory: nil)
  }

  /// Makes the next parameters from the first one, with the values now in ``values``.
  func start(given: UInt64, manifestDirectory: URL?) {
    self.given = given
    self.manifestDirectory = manifestDirectory
    next.store(0, ordering: .relaxed)
  }

  /// Lets the values made go, keeping their array's storage.
  func finish() {
    // One by one: `removeAll(keepingCapacity:)` destroys them through the run time's generic
    // tuple witness, several times the cost, for every step.
    while !values.isEmpty { values.removeLast() }
    given = 0
    manifestDirectory = nil
  }

  /// A round that describes a type.
  init(describing: Void) {
    values = []
    given = 0
    manifestDirectory = nil
    declarations = Locked([])
  }

  /// Whether the type being described has a ``ManifestDirectory``.
  let readsManifestDirectory = Atomic<Bool>(false)

  /// Notes that the parameters have a ``ManifestDirectory``, when they are being described.
  func notesManifestDirectory() {
    if isDescribing { readsManifestDirectory.store(true, ordering: .relaxed) }
  }

  /// Whether the parameters are being described rather than decoded.
  @usableFromInline var isDescribing: Bool { declarations != nil }

  /// The ordinal of the next parameter created.
  @inlinable func take() -> Int {
    next.wrappingAdd(1, ordering: .relaxed).oldValue
  }

  /// How many parameters were created.
  var taken: Int { next.load(ordering: .relaxed) }

  /// The decoded value of parameter `ordinal`; `nil` when the manifest leaves it out. A
  /// parameter left out is told by its bit in ``given``, without copying its empty value out.
  @inlinable func value<Value>(at ordinal: Int) -> Value? {
    guard given & (1 << UInt64(Swift.min(ordinal, 63))) != 0 else { return nil }
    // In order of their ordinals, the values before this one's are those of the bits below
    // its own, for all but the 64th parameter on.
    if ordinal < 63 {
      let index = (given & ((1 << UInt64(ordinal)) - 1)).nonzeroBitCount
      return Self.cast(values[index].value, to: Value.self)
    }
    for index in values.indices where values[index].ordinal == ordinal {
      return Self.cast(values[index].value, to: Value.self)
    }
    return nil
  }

  /// `value as? Value`, without asking the run time to cast when `value` is a `Value` (a
  /// reader boxes a value as exactly its parameter's type, but for optionals).
  @inlinable static func cast<Value>(_ value: any Sendable, to type: Value.Type) -> Value? {
    func unbox<Boxed>(_ boxed: Boxed) -> Value? {
      guard Boxed.self == Value.self else { return boxed as? Value }
      return withUnsafePointer(to: boxed) { UnsafeRawPointer($0).load(as: Value.self) }
    }
    return unbox(value)
  }

  /// Keeps the declaration of parameter `ordinal`, to describe it under its property's name.
  @usableFromInline func declare<Value: ParameterValue>(
    _ ordinal: Int, _ parameter: Parameter<Value>.Type, _ declaration: ParameterDeclaration,
    fallback: Value?
  ) {
    let wrapper = ObjectIdentifier(Parameter<Value>.self)
    declarations?.withLock {
      $0.append(
        Declaration(wrapper: wrapper) { field, name in
          let declared: Parameter<Value>
          switch field {
          case .value(let value):
            guard let parameter = value as? Parameter<Value> else { return nil }
            declared = parameter
          case .stored(let type, let storage):
            guard type == Parameter<Value>.self else { return nil }
            declared = storage.load(as: Parameter<Value>.self)
          }
          guard declared.ordinal == ordinal else { return nil }
          return parameter.entry(
            name: name, ordinal: ordinal, declaration: declaration, fallback: fallback)
        })
    }
  }

  /// Every declaration kept, in the order they were made.
  var declared: [Declaration] {
    declarations?.withLock { $0 } ?? []
  }
}
