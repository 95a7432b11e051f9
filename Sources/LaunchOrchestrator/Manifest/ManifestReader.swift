import LaunchJSON

/// Reads a ``Manifest`` out of a parsed JSON document, reporting every field that is missing,
/// unknown or of the wrong shape.
struct ManifestReader {
  var diagnostics: DiagnosticCollector
  /// The manifest's name when it gives none: worked out only then.
  let fallbackName: () -> String
  /// For each step read, its index in the source's `steps` array: steps that could not be
  /// read are left out of the manifest, and diagnostics must still point at the right element.
  private(set) var stepSourceIndices: [Int] = []
  /// The ids of steps left out for a problem said at them (no `plugin`): steps that exist,
  /// which another step or a milestone may name without being told they are unknown.
  private(set) var unreadStepIDs: Set<String> = []
  /// The last step's plugin kind and its string's entry in the tape: most steps name the kind
  /// the one before them names, which is then not made again.
  private var lastPlugin: (entry: JSONTape.Index, kind: String)?
  /// The short strings of the steps' params read lately, by their bytes: most steps give
  /// the keys and values steps before them gave, each found again, not made again.
  private let paramsStrings = JSONStringCache()

  init(diagnostics: DiagnosticCollector, fallbackName: @escaping @autoclosure () -> String) {
    self.diagnostics = diagnostics
    self.fallbackName = fallbackName
  }

  /// Reads the manifest; `nil` only when the root is not an object at all.
  mutating func read() -> Manifest? {
    var draft = ManifestDraft()
    if let tape = diagnostics.tape, tape.kind(of: tape.root) == .object {
      readTopLevel(of: tape, into: &draft)
    } else {
      guard readObject(diagnostics.root, at: .root, fields: ManifestFields.topLevel, into: &draft)
      else { return nil }
    }
    var manifest = Manifest(
      version: draft.version ?? 1, name: draft.name ?? fallbackName(),
      maxConcurrency: draft.maxConcurrency, defaults: draft.defaults,
      milestones: draft.milestones, splash: draft.splash, app: draft.app, signals: draft.signals,
      steps: draft.steps)
    manifest.safeMode = draft.safeMode
    return manifest
  }

  /// Reads the members of the object `value` through `fields` into `target`, reporting unknown
  /// and missing keys; `false` (and a diagnostic) when `value` is not an object.
  @discardableResult
  mutating func readObject<Target>(
    _ value: JSONValue, at path: @autoclosure () -> JSONPath, fields: [ManifestField<Target>],
    into target: inout Target
  ) -> Bool {
    guard let members = value.members else {
      diagnostics.report(
        "\(path() == .root ? "a manifest" : "'\(path())'") must be an object, not \(value.typeDescription).",
        at: path())
      return false
    }
    var requiredGiven = 0
    for member in members {
      if readMember(member, at: path(), fields: fields, into: &target) { requiredGiven += 1 }
    }
    reportMissing(in: members, at: path(), fields: fields, requiredGiven: requiredGiven)
    return true
  }

  /// Reads `member` of the object at `path` through its field of `fields` into `target`, or
  /// reports it unknown; whether the field is a required one.
  private mutating func readMember<Target>(
    _ member: JSONMember, at path: @autoclosure () -> JSONPath, fields: [ManifestField<Target>],
    into target: inout Target
  ) -> Bool {
    // A table's fields are read in place (a copy would retain each part of it), and their keys
    // compared with a member's by length first: a step's table has two dozen, most of another
    // length.
    let length = member.key.utf8.count
    guard
      let index = fields.firstIndex(where: {
        $0.key.utf8.count == length && $0.key == member.key
      })
    else {
      let allowed = fields.map(\.key)
      let hint = Suggestions.closest(to: member.key, in: allowed)
      let advice =
        hint.map { " Did you mean '\($0)'?" }
        ?? " Allowed keys: \(allowed.joined(separator: ", "))."
      diagnostics.reportKey(
        "unknown key '\(member.key)'.\(advice)", at: path().appending(member.key))
      return false
    }
    fields[index].read(&self, member.value, { path().appending(member.key) }, &target)
    return fields[index].info.isRequired
  }

  /// Reports the required fields of `fields` that `members` (of the object at `path`) leave
  /// out, given that `requiredGiven` of them were there.
  private mutating func reportMissing<Target>(
    in members: [JSONMember], at path: @autoclosure () -> JSONPath,
    fields: [ManifestField<Target>], requiredGiven: Int, requiredCount: Int? = nil
  ) {
    // Keys are unique, so a field matches one member at most: when as many required fields were
    // given as there are, none is missing.
    guard requiredGiven < requiredCount ?? fields.count(where: { $0.info.isRequired }) else {
      return
    }
    for index in fields.indices {
      if case .required(let missing) = fields[index].info.requirement,
        !members.contains(where: { $0.key == fields[index].key })
      {
        diagnostics.report(missing, at: path())
      }
    }
  }

  /// ``readObject(_:at:fields:into:)`` of the top level, an object, read off `tape`: its
  /// `steps` are read there (``steps(of:_:at:)``), every other member made into a value and
  /// read through its field.
  private mutating func readTopLevel(of tape: JSONTape, into draft: inout ManifestDraft) {
    var requiredGiven = 0
    var members = tape.members(of: tape.root)
    while let member = members.next() {
      if tape.kind(of: member.value) == .array, tape.string(at: member.key, is: "steps") {
        draft.steps = steps(of: tape, member.value, at: JSONPath.root.appending("steps"))
        requiredGiven += 1
      } else if readMember(
        tape.member(member), at: .root, fields: ManifestFields.topLevel, into: &draft)
      {
        requiredGiven += 1
      }
    }
    if requiredGiven < ManifestFields.topLevelRequiredCount {
      reportMissing(
        in: tape.value(at: tape.root).members ?? [], at: .root, fields: ManifestFields.topLevel,
        requiredGiven: requiredGiven)
    }
  }

  /// ``steps(_:at:)`` of the array at `array` of `tape`, each step read off the tape: a
  /// manifest holds thousands, and making each into a value, then freeing it, cost more than
  /// reading it.
  private mutating func steps(
    of tape: JSONTape, _ array: JSONTape.Index, at path: JSONPath
  ) -> [StepDeclaration] {
    var steps: [StepDeclaration] = []
    steps.reserveCapacity(tape.count(of: array))
    var elements = tape.elements(of: array)
    var index = 0
    while let element = elements.next() {
      defer { index += 1 }
      // Read in place, and appended as it is: a copy would retain each of its fields.
      var step = StepDeclaration.unread
      guard readStep(of: tape, element, at: path.appending(index), into: &step) else {
        if !step.id.isEmpty { unreadStepIDs.insert(step.id) }
        continue
      }
      steps.append(consume step)
      stepSourceIndices.append(index)
    }
    return steps
  }

  /// The keys of the members of a step that ``readStep(of:_:at:into:)`` sets directly when
  /// they are well formed: `id`, `plugin`, `params` and `dependsOn`, in this order.
  private static let usualStepKeys: [StaticString] = ["id", "plugin", "params", "dependsOn"]

  /// ``readStep(_:at:into:)`` of the value at `element` of `tape`: its usual members are read
  /// off the tape, every other one made into a member first.
  private mutating func readStep(
    of tape: JSONTape, _ element: JSONTape.Index, at path: @autoclosure () -> JSONPath,
    into draft: inout StepDeclaration
  ) -> Bool {
    guard tape.kind(of: element) == .object else {
      return readStep(tape.value(at: element), at: path(), into: &draft)
    }
    var hasPlugin = false
    var requiredGiven = 0
    // Each member told apart by its key in one call into the tape's module for the step, not
    // five for each member.
    tape.forEachMember(of: element, keyedAmong: Self.usualStepKeys) { member, kind, usual in
      let value = member.value
      switch (usual, kind) {
      case (0, .string) where !tape.isEmptyString(at: value):
        draft.id = tape.string(at: value)
        requiredGiven += 1
        return
      case (1, .string):
        if let lastPlugin, tape.hasSameText(value, lastPlugin.entry) {
          draft.plugin = lastPlugin.kind
        } else {
          draft.plugin = tape.string(at: value)
          lastPlugin = (value, draft.plugin)
        }
        hasPlugin = true
        requiredGiven += 1
        return
      case (2, .object):
        draft.params = tape.value(at: value, cachedIn: paramsStrings)
        return
      case (3, .array):
        if let ids = tape.strings(inArray: value) {
          draft.dependsOn = ids
          return
        }
      default:
        break
      }
      if readMember(tape.member(member), at: path(), fields: ManifestFields.step, into: &draft) {
        requiredGiven += 1
      }
    }
    if requiredGiven < ManifestFields.stepRequiredCount {
      reportMissing(
        in: tape.value(at: element).members ?? [], at: path(), fields: ManifestFields.step,
        requiredGiven: requiredGiven, requiredCount: ManifestFields.stepRequiredCount)
    }
    return !draft.id.isEmpty && hasPlugin
  }

  /// ``readObject(_:at:fields:into:)`` of a step: its usual members, well formed (a non-empty
  /// `id`, a `plugin`, an object of `params`, a `dependsOn` of strings), are set directly, as
  /// their fields would set them; every other member, and any of these that its field would
  /// report, through the step's table. A manifest holds thousands of steps. Whether the step
  /// is whole: an object with an id and a plugin (an empty id is refused by its field, so a
  /// step without one keeps its empty id; a plugin is set only here, as its field only reads
  /// a string, and refuses anything else).
  private mutating func readStep(
    _ value: JSONValue, at path: @autoclosure () -> JSONPath,
    into draft: inout StepDeclaration
  ) -> Bool {
    guard case .object(let members) = value.kind else {
      readObject(value, at: path(), fields: ManifestFields.step, into: &draft)
      return false
    }
    var hasPlugin = false
    var requiredGiven = 0
    for member in members {
      let key = member.key
      switch (key.utf8.count, member.value.kind) {
      case (2, .string(let text)) where !text.isEmpty && key == "id":
        draft.id = text
        requiredGiven += 1
        continue
      case (6, .string(let text)) where key == "plugin":
        draft.plugin = text
        hasPlugin = true
        requiredGiven += 1
        continue
      case (6, .object) where key == "params":
        draft.params = member.value
        continue
      case (9, .array(let elements)) where key == "dependsOn":
        if let ids = Self.strings(elements) {
          draft.dependsOn = ids
          continue
        }
      default:
        break
      }
      if readMember(member, at: path(), fields: ManifestFields.step, into: &draft) {
        requiredGiven += 1
      }
    }
    reportMissing(
      in: members, at: path(), fields: ManifestFields.step, requiredGiven: requiredGiven,
      requiredCount: ManifestFields.stepRequiredCount)
    return !draft.id.isEmpty && hasPlugin
  }

  /// The strings `elements` hold, when they are all strings.
  private static func strings(_ elements: [JSONValue]) -> [String]? {
    var strings: [String] = []
    strings.reserveCapacity(elements.count)
    for element in elements {
      guard case .string(let text) = element.kind else { return nil }
      strings.append(text)
    }
    return strings
  }

  mutating func milestones(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> [MilestoneDeclaration]?
  {
    guard let members = value.members else {
      diagnostics.report(
        "'milestones' must be an object mapping each milestone name to an array of step ids.",
        at: path())
      return nil
    }
    return members.compactMap { member in
      let memberPath = path().appending(member.key)
      if member.key.isEmpty {
        diagnostics.reportKey("a milestone name cannot be empty.", at: memberPath)
        return nil
      }
      // One whose steps are not read is still declared (the manifest is invalid anyway): a
      // `deferUntil` naming it is not "unknown" too, which would send the reader elsewhere.
      let ids = stringArray(member.value, at: memberPath, what: "step ids") ?? []
      return MilestoneDeclaration(name: member.key, steps: ids)
    }
  }

  mutating func steps(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> [StepDeclaration]?
  {
    guard let elements = value.elements else {
      diagnostics.report(
        "'steps' must be an array of step objects, not \(value.typeDescription).", at: path())
      return nil
    }
    var steps: [StepDeclaration] = []
    steps.reserveCapacity(elements.count)
    for index in elements.indices {
      // Read in place, and appended as it is: a copy would retain each of its fields.
      var step = StepDeclaration.unread
      guard readStep(elements[index], at: path().appending(index), into: &step) else {
        if !step.id.isEmpty { unreadStepIDs.insert(step.id) }
        continue
      }
      steps.append(consume step)
      stepSourceIndices.append(index)
    }
    return steps
  }

  mutating func params(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> JSONValue? {
    guard value.members != nil else {
      diagnostics.report("'params' must be an object, not \(value.typeDescription).", at: path())
      return nil
    }
    return value
  }

  mutating func fallback(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> FallbackDeclaration?
  {
    var fallback = FallbackDeclaration()
    guard readObject(value, at: path(), fields: ManifestFields.fallback, into: &fallback) else {
      return nil
    }
    if fallback.params == nil, fallback.plugin == nil, value.members?.isEmpty == true {
      diagnostics.report(
        "an empty fallback only runs the step once more; give it 'params' or a 'plugin', or use 'retry'.",
        at: path(), severity: .warning)
    }
    return fallback
  }

  mutating func retry(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> RetryPolicy? {
    var policy = RetryPolicy.once
    return readObject(value, at: path(), fields: ManifestFields.retry, into: &policy) ? policy : nil
  }

  // MARK: Field readers

  mutating func string(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> String? {
    guard let string = value.stringValue else {
      diagnostics.report("expected a string, found \(value.typeDescription).", at: path())
      return nil
    }
    return string
  }

  /// The largest whole number a manifest field holds, and the negative of the smallest.
  static let integerLimit = Int(Int32.max)

  /// A whole number within 32 bits, read from its text exactly (`1e3` is 1000), so that a
  /// number beyond 2^53 is refused as written instead of rounded.
  mutating func integer(_ value: JSONValue, at path: @autoclosure () -> JSONPath) -> Int? {
    let limit = Self.integerLimit
    switch value.integer(Int.self) {
    case .exact(let integer) where (-limit...limit).contains(integer):
      return integer
    case .exact, .outOfRange:
      diagnostics.report(
        "expected a whole number from -\(limit) to \(limit), found \(value.numberDescription).",
        at: path())
    case .fractional:
      diagnostics.report("expected a whole number, found \(value.numberDescription).", at: path())
    case nil:
      diagnostics.report("expected a whole number, found \(value.typeDescription).", at: path())
    }
    return nil
  }

  mutating func duration(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> Duration?
  {
    switch value.kind {
    case .number(let seconds):
      if let duration = DurationText.seconds(seconds) { return duration }
      diagnostics.report(
        DurationText.problem(withSeconds: seconds, written: value.numberDescription) + ".",
        at: path())
    case .string(let text):
      if let duration = DurationText.parse(text) { return duration }
      let examples = "\"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds"
      diagnostics.report(
        DurationText.problem(with: text, examples: examples) + ".", at: path())
    default:
      diagnostics.report(
        "expected \(DurationText.forms), found \(value.typeDescription).", at: path())
    }
    return nil
  }

  mutating func priority(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> StepPriority?
  {
    guard let text = string(value, at: path()) else { return nil }
    if let priority = StepPriority(name: text) { return priority }
    let names = StepPriority.allCases.reversed().map(\.description)
    let hint = Suggestions.didYouMean(text, in: names)
    diagnostics.report(
      "unknown priority '\(text)'.\(hint) Priorities are \(names.joined(separator: ", ")).",
      at: path())
    return nil
  }

  mutating func failurePolicy(_ value: JSONValue, at path: @autoclosure () -> JSONPath)
    -> FailurePolicy?
  {
    guard let text = string(value, at: path()) else { return nil }
    if let policy = FailurePolicy(rawValue: text) { return policy }
    diagnostics.report(
      "unknown failure policy '\(text)'.\(Suggestions.didYouMean(text, in: ["abort", "continue"])) Use \"abort\" or \"continue\".",
      at: path())
    return nil
  }

  mutating func stringArray(
    _ value: JSONValue, at path: @autoclosure () -> JSONPath, what: String
  )
    -> [String]?
  {
    guard let elements = value.elements else {
      diagnostics.report(
        "expected an array of \(what), found \(value.typeDescription).", at: path())
      return nil
    }
    var strings: [String] = []
    strings.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      if let text = string(element, at: path().appending(index)) { strings.append(text) }
    }
    // Partial lists would shift later diagnostics' indices off their source elements.
    return strings.count == elements.count ? strings : nil
  }
}

extension JSONValue {
  /// A number as its manifest wrote it.
  var numberDescription: String {
    if let numberText { return numberText }
    if case .number(let number) = kind { return "\(number)" }
    return typeDescription
  }
}
