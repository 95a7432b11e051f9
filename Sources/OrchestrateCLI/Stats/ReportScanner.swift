import Foundation
import LaunchJSON
import LaunchOrchestrator

/// What `stats` reads of one report: the keys it groups by and the times it summarises.
struct ScannedReport {
  /// One step's line.
  struct Step {
    var id: String
    var state: StepState?
    var start: Double?
    var end: Double?
    var ready: Double?
    var isDeferred = false
  }

  var outcome: LaunchOutcome?
  var version: String?
  var reason: String?
  var firstLaunch: Bool?
  var arm: String?
  var device: String?
  var milestones: [(name: String, time: Double?)] = []
  var steps: [Step] = []
  var hasOutcome = false
  var hasMilestones = false
  var hasSteps = false
  var formatVersion: Int?
  /// Whether `version` is there and not a whole number.
  var hasMalformedVersion = false
  /// The path of the first key missing or of the wrong shape (`steps[0].attempts`).
  var problem: String?
}

/// A reader of report JSON that takes only the keys `stats` needs and skips the rest without
/// building it: a million reports are read at the speed of a scan, in constant memory.
///
/// It reads what `orchestrate run --report` writes, one line of a JSON Lines export, a
/// stored report and a history entry (whose report is under `report`). A text that is not
/// JSON, or JSON that is not a report, is refused with a short reason.
///
/// The text is read into a ``JSONTape`` first, by the grammar every JSON file of the package is
/// read with (`JSONParser`'s, with its checks and its messages): a report that is not JSON in
/// a part `stats` never reads (`"notes": [1,,2]`, a bad escape, nesting past the limit) is
/// refused, and of a key written twice the first is read, as the parser keeps it. Then the
/// keys `stats` needs are read off the tape, and the rest is never made.
///
/// It refuses every report that `LaunchReport(json:)` (and `HistoryEntry.read`, for an
/// entry) refuses, without building it: a key every format has (report.md: `manifest` to
/// `steps`, each step's `id` to `error`) missing or of another type, a later key there with
/// the wrong shape, a `version` that is not a whole number this build reads. `export otlp`
/// reads reports through both, so it and `stats` read, and refuse, the same ones.
struct ReportScanner {
  /// Why a text is not a report `stats` can read.
  struct Refusal: Error {
    var reason: String
  }

  /// A position in the tape.
  private typealias Index = JSONTape.Index

  private let tape: JSONTape
  /// The first key found missing or of the wrong shape in the report being read: the
  /// report is refused for it at its end, once its `version` is known, since a report of a
  /// newer format is refused for that instead, whatever its keys.
  private var problem: String?

  /// The longest time a report may hold, in seconds (11 days): a launch is never that long,
  /// so a larger one is a damaged or foreign report, and bounding it here keeps every later
  /// `Duration` and nanosecond count from overflowing.
  static let longestTime = 1e6
  /// The latest `startedAt` a report may hold, in seconds since 1970 (the year 2255): its
  /// nanoseconds still fit OTLP's 64 bits, with room for the launch.
  static let latestStart = 9e9

  /// Reads the report in `bytes`.
  static func scan(_ bytes: UnsafeBufferPointer<UInt8>) throws(Refusal) -> ScannedReport {
    var first = 0
    while first < bytes.count, Self.isWhitespace(bytes[first]) { first += 1 }
    guard first < bytes.count else { throw Refusal(reason: "it is empty") }
    guard bytes[first] == UInt8(ascii: "{") else {
      throw syntaxError("expected a JSON object, '{',", at: first, in: Array(bytes))
    }
    var scanner = ReportScanner(tape: try tape(of: bytes))
    let (report, entry) = try scanner.scanObject(scanner.tape.root, topLevel: true)
    // A history entry is known by its mark, as `HistoryEntry.read` knows it; an object that
    // only holds a `report` is not one.
    guard entry.isMarked else {
      try check(report, in: "")
      return report
    }
    guard entry.isCurrent else {
      throw Refusal(
        reason:
          "it is a history entry of another format ('orchestrateHistory' is not 1); a newer orchestrate wrote it"
      )
    }
    guard let nested = entry.report else {
      throw Refusal(reason: "it is a history entry with no report")
    }
    try check(nested, in: "report.")
    if let problem = entry.problem {
      throw Refusal(reason: "it is a history entry whose '\(problem)' is missing or malformed")
    }
    return nested
  }

  /// The tape of `bytes`, or the refusal of a text that is not JSON.
  ///
  /// `export` reads a text with invalid UTF-8 repaired (each bad byte read as U+FFFD): so is
  /// it read here, where the parser refuses it.
  private static func tape(of bytes: UnsafeBufferPointer<UInt8>) throws(Refusal) -> JSONTape {
    var text = Array(bytes)
    do {
      return try JSONTape.parse(text)
    } catch {
      // A text that parses is valid UTF-8: its strings are checked, and no other byte of
      // JSON is above 0x7F. So only a refused one is looked at again.
      guard String(validating: bytes, as: UTF8.self) == nil else {
        throw syntaxError(error.message, at: error.offset, in: text)
      }
    }
    text = Array(String(decoding: bytes, as: UTF8.self).utf8)
    do {
      return try JSONTape.parse(text)
    } catch {
      throw syntaxError(error.message, at: error.offset, in: text)
    }
  }

  /// The refusal of a text that is not JSON: `what` is wrong at `offset` of `text`, placed by
  /// line and column as an editor shows them.
  private static func syntaxError(_ what: String, at offset: Int, in text: [UInt8]) -> Refusal {
    let position = SourceText(bytes: text).position(of: offset)
    return Refusal(
      reason:
        "it is not valid JSON (\(what) at line \(position.line), column \(position.column))")
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// Refuses `report` (found at `path`: `report.` in a history entry) for its format, a
  /// problem found in its keys, or a step listed twice.
  private static func check(_ report: ScannedReport, in path: String) throws(Refusal) {
    if report.hasMalformedVersion { throw malformed(path + "version") }
    if let version = report.formatVersion {
      guard version <= LaunchReport.formatVersion else {
        throw Refusal(
          reason:
            "it is report format \(version), and this build reads up to \(LaunchReport.formatVersion)"
        )
      }
      guard version >= 1 else { throw malformed(path + "version") }
    }
    guard report.hasSteps || report.hasMilestones || report.hasOutcome else {
      throw Refusal(reason: "it is not a launch report (no outcome, milestones and steps)")
    }
    if let problem = report.problem { throw malformed(path + problem) }
    // Steps are known by their ids: a second line of one would be counted as either.
    var ids = Set<String>(minimumCapacity: report.steps.count)
    for step in report.steps where !ids.insert(step.id).inserted {
      throw Refusal(reason: "it lists the step '\(step.id)' twice")
    }
  }

  /// The refusal of a report whose `path` is missing or of the wrong shape.
  private static func malformed(_ path: String) -> Refusal {
    Refusal(reason: "it is not a launch report (its '\(path)' is missing or malformed)")
  }

  // MARK: - The report's keys

  /// What a history entry holds besides its report, as `HistoryEntry.read` requires it.
  private struct EntryParts {
    /// The keys it must have, each a bit of ``present``.
    static let keys = [
      "recordedAt", "manifest.path", "manifest.sha256", "machine.host", "machine.system",
      "machine.cores",
    ]
    /// Whether it has the `orchestrateHistory` key, whatever its value.
    var isMarked = false
    /// Whether `orchestrateHistory` is the format this build reads, 1.
    var isCurrent = false
    var report: ScannedReport?
    /// The keys there, valid, each a bit.
    var present: UInt8 = 0
    /// The first key found of the wrong shape.
    var malformed: Int?

    /// Notes key `bit` of ``keys``, as valid or not.
    mutating func note(_ bit: Int, valid: Bool) {
      if valid { present |= 1 << bit } else if malformed == nil { malformed = bit }
    }

    /// The first key missing or of the wrong shape.
    var problem: String? {
      if let malformed { return Self.keys[malformed] }
      return Self.keys.indices.first { present & (1 << $0) == 0 }.map { Self.keys[$0] }
    }
  }

  /// The keys every report has (report.md's first form), each a bit of a mask.
  private static let reportKeys: [StaticString] = [
    "manifest", "name", "outcome", "route", "duration", "milestones", "criticalPath", "steps",
  ]
  /// The keys every step has.
  private static let stepKeys: [StaticString] = [
    "id", "plugin", "state", "start", "end", "attempts", "usedFallback", "error",
  ]

  /// Reads the report object at `object`; at the top level, what a history entry holds is
  /// read too.
  private mutating func scanObject(_ object: Index, topLevel: Bool) throws(Refusal) -> (
    ScannedReport, EntryParts
  ) {
    var report = ScannedReport()
    var entry = EntryParts()
    // A nested report's problems are its own.
    let outer = problem
    problem = nil
    var present: UInt32 = 0
    try members(of: object) { scanner, key, value throws(Refusal) in
      switch key {
      case "manifest" where topLevel && scanner.tape.kind(of: value) == .object:
        // A history entry's: its path and hash. No report's, whose manifest is a string.
        present |= 1 << 0
        scanner.flag(key.description)
        try scanner.members(of: value) { scanner, key, value throws(Refusal) in
          switch key {
          case "path": entry.note(1, valid: scanner.isString(value))
          case "sha256": entry.note(2, valid: scanner.isString(value))
          default: break
          }
        }
      case "manifest", "name":
        present |= key == "manifest" ? 1 << 0 : 1 << 1
        if !scanner.isString(value) { scanner.flag(key.description) }
        if key == "manifest" { entry.note(1, valid: false) }
      case "outcome":
        present |= 1 << 2
        report.hasOutcome = true
        report.outcome = scanner.string(value).flatMap(LaunchOutcome.init(rawValue:))
        if report.outcome == nil { scanner.flag(key.description) }
      case "route":
        present |= 1 << 3
        scanner.nullableString(value, key.description)
      case "duration":
        present |= 1 << 4
        try scanner.requiredTime(value, key.description)
      case "wallDuration":
        _ = try scanner.time(value, key.description)
      case "version":
        if let version = scanner.integer(value) {
          report.formatVersion = version
        } else {
          report.hasMalformedVersion = true
        }
      case "milestones":
        present |= 1 << 5
        report.hasMilestones = true
        guard scanner.isObject(value, key.description) else { break }
        try scanner.members(of: value) { scanner, name, time throws(Refusal) in
          report.milestones.append((name.description, try scanner.time(time, "milestones.\(name)")))
        }
      case "criticalPath":
        present |= 1 << 6
        guard scanner.isArray(value, key.description) else { break }
        for element in scanner.tape.elements(of: value) where !scanner.isString(element) {
          scanner.flag("criticalPath")
        }
      case "steps":
        present |= 1 << 7
        report.hasSteps = true
        guard scanner.isArray(value, key.description) else { break }
        report.steps.reserveCapacity(scanner.tape.count(of: value))
        for element in scanner.tape.elements(of: value) {
          report.steps.append(try scanner.step(element, report.steps.count))
        }
      case "pauses":
        try scanner.objects(value, in: "pauses", required: ["at", "duration"]) {
          scanner, key, value, pause throws(Refusal) in
          if key == "at" || key == "duration" { try scanner.requiredTime(value, pause + key) }
        }
      case "criticalChains":
        try scanner.criticalChains(value)
      case "startedAt":
        try scanner.startedAt(value)
      case "context":
        guard scanner.isObjectOrNull(value, key.description) else { break }
        try scanner.object(value, in: "context.", required: Self.contextKeys) {
          scanner, key, value, path throws(Refusal) in
          switch key {
          case "reason":
            report.reason = scanner.string(value)
            if report.reason == nil { scanner.flag(path + key) }
          case "launchNumber":
            if scanner.integer(value) == nil { scanner.flag(path + key) }
          case "prewarmed", "firstLaunch", "afterUpgrade", "safeMode":
            let bool = scanner.bool(value)
            if key == "firstLaunch" { report.firstLaunch = bool }
            if bool == nil { scanner.flag(path + key) }
          default:
            break
          }
        }
      case "app":
        guard scanner.isObjectOrNull(value, key.description) else { break }
        try scanner.object(value, in: "app.", required: ["version"]) {
          scanner, key, value, path throws(Refusal) in
          guard key == "version" else { return }
          report.version = scanner.string(value)
          if report.version == nil { scanner.flag(path + key) }
        }
      case "labels":
        guard scanner.isObjectOrNull(value, key.description) else { break }
        try scanner.members(of: value) { scanner, key, value throws(Refusal) in
          switch key {
          case "arm": report.arm = scanner.string(value)
          case "device": report.device = scanner.string(value)
          default: break
          }
        }
      case "signals":
        guard scanner.isObjectOrNull(value, key.description) else { break }
        try scanner.members(of: value) { scanner, name, time throws(Refusal) in
          _ = try scanner.time(time, "signals.\(name)")
        }
      case "orchestrateHistory" where topLevel:
        entry.isMarked = true
        entry.isCurrent = scanner.integer(value) == HistoryEntry.formatVersion
      case "recordedAt" where topLevel:
        entry.note(0, valid: scanner.isString(value))
      case "machine" where topLevel:
        guard scanner.tape.kind(of: value) == .object else { return entry.note(3, valid: false) }
        try scanner.members(of: value) { scanner, key, value throws(Refusal) in
          switch key {
          case "host": entry.note(3, valid: scanner.isString(value))
          case "system": entry.note(4, valid: scanner.isString(value))
          case "cores": entry.note(5, valid: scanner.integer(value) != nil)
          default: break
          }
        }
      case "report" where topLevel:
        guard scanner.tape.kind(of: value) == .object else { break }
        entry.report = try scanner.scanObject(value, topLevel: false).0
      default:
        break
      }
    }
    flagMissing(present, of: Self.reportKeys, in: "")
    report.problem = problem
    problem = outer
    return (report, entry)
  }

  /// The keys of a report's `context`.
  private static let contextKeys: [StaticString] = [
    "reason", "prewarmed", "firstLaunch", "afterUpgrade", "launchNumber", "safeMode",
  ]

  /// The step at `value`, the `index`th of `steps`.
  private mutating func step(_ value: Index, _ index: Int) throws(Refusal) -> ScannedReport.Step {
    var step = ScannedReport.Step(id: "")
    guard tape.kind(of: value) == .object else {
      flag("steps[\(index)]")
      return step
    }
    let path = "steps[\(index)]."
    var present: UInt32 = 0
    try members(of: value) { scanner, key, value throws(Refusal) in
      switch key {
      case "id":
        present |= 1 << 0
        if let id = scanner.string(value) { step.id = id } else { scanner.flag(path + key) }
      case "plugin":
        present |= 1 << 1
        if !scanner.isString(value) { scanner.flag(path + key) }
      case "state":
        present |= 1 << 2
        step.state = scanner.string(value).flatMap(StepState.init(rawValue:))
        if step.state == nil { scanner.flag(path + key) }
      case "start":
        present |= 1 << 3
        step.start = try scanner.time(value, path + key)
      case "end":
        present |= 1 << 4
        step.end = try scanner.time(value, path + key)
      case "attempts":
        present |= 1 << 5
        if scanner.integer(value) == nil { scanner.flag(path + key) }
      case "usedFallback":
        present |= 1 << 6
        if scanner.bool(value) == nil { scanner.flag(path + key) }
      case "error":
        present |= 1 << 7
        scanner.nullableString(value, path + key)
      case "ready": step.ready = try scanner.time(value, path + key)
      case "waits", "work": try scanner.spans(value, key, in: path)
      case "refresh": try scanner.refresh(value, in: path + "refresh.")
      case "deferUntil": step.isDeferred = scanner.isString(value)
      default: break
      }
    }
    flagMissing(present, of: Self.stepKeys, in: path)
    return step
  }

  /// A step's or refresh's `waits` or `work` (`key`) at `value`, inside `path` (`steps[0].`).
  private mutating func spans(_ value: Index, _ key: Key, in path: String) throws(Refusal) {
    let isWork = key == "work"
    let required: [StaticString] =
      isWork ? ["attempt", "start", "end"] : ["reason", "start", "end"]
    try objects(value, in: path + key, required: required) {
      scanner, member, value, span throws(Refusal) in
      switch member {
      case "attempt" where isWork:
        if scanner.integer(value) == nil { scanner.flag(span + member) }
      case "reason" where !isWork:
        if scanner.string(value).flatMap(WaitReason.init(rawValue:)) == nil {
          scanner.flag(span + member)
        }
      case "start", "end":
        try scanner.requiredTime(value, span + member)
      default:
        // A wait's `heldBy` is read as whatever strings it holds.
        break
      }
    }
  }

  /// A cached step's `refresh` at `value` (`path` is `steps[0].refresh.`): `null`, or an
  /// object with a step's state, times, attempts and error.
  private mutating func refresh(_ value: Index, in path: String) throws(Refusal) {
    if tape.kind(of: value) == .null { return }
    let required: [StaticString] = ["state", "start", "end", "attempts", "error"]
    try object(value, in: path, required: required) {
      scanner, key, value, path throws(Refusal) in
      switch key {
      case "state":
        if scanner.string(value).flatMap(StepState.init(rawValue:)) == nil {
          scanner.flag(path + key)
        }
      case "attempts":
        if scanner.integer(value) == nil { scanner.flag(path + key) }
      case "error":
        scanner.nullableString(value, path + key)
      case "start", "end", "ready":
        _ = try scanner.time(value, path + key)
      case "waits", "work":
        try scanner.spans(value, key, in: path)
      default:
        break
      }
    }
  }

  /// `criticalChains` at `value`: when an array, each chain's `milestone` and its `links`,
  /// each with its step, how it was held and its times.
  private mutating func criticalChains(_ value: Index) throws(Refusal) {
    let links: [StaticString] = ["step", "heldVia", "start", "end", "wait", "work"]
    try objects(value, in: "criticalChains", required: ["milestone", "links"]) {
      scanner, key, value, chain throws(Refusal) in
      switch key {
      case "milestone":
        scanner.nullableString(value, chain + key)
      case "links":
        guard scanner.isArray(value, chain + key) else { return }
        try scanner.objects(value, in: chain + key, required: links) {
          scanner, key, value, link throws(Refusal) in
          switch key {
          case "step":
            if !scanner.isString(value) { scanner.flag(link + key) }
          case "heldVia":
            if scanner.tape.kind(of: value) == .null { return }
            let hold = scanner.string(value).flatMap(LaunchReport.CriticalChain.Hold.init)
            if hold == nil { scanner.flag(link + key) }
          case "start", "end", "wait", "work":
            try scanner.requiredTime(value, link + key)
          default:
            break
          }
        }
      default:
        break
      }
    }
  }

  // MARK: - Shapes

  /// Notes that the value at `path` is missing or of the wrong shape, unless one was noted
  /// before: the report is refused for the first once it is read.
  private mutating func flag(_ path: @autoclosure () -> String) {
    if problem == nil { problem = path() }
  }

  /// Notes the first of `keys` whose bit is not in `present`, inside `path`.
  private mutating func flagMissing(
    _ present: UInt32, of keys: [StaticString], in path: @autoclosure () -> String
  ) {
    guard problem == nil, present != (1 << keys.count) - 1 else { return }
    let missing = keys.indices.first { present & (1 << $0) == 0 } ?? 0
    flag(path() + keys[missing].description)
  }

  /// Whether `value` is an object; anything else is noted as `path`.
  private mutating func isObject(_ value: Index, _ path: @autoclosure () -> String) -> Bool {
    guard tape.kind(of: value) == .object else {
      flag(path())
      return false
    }
    return true
  }

  /// Whether `value` is an object; `null` is not, anything else is noted as `path`.
  private mutating func isObjectOrNull(_ value: Index, _ path: @autoclosure () -> String)
    -> Bool
  {
    tape.kind(of: value) != .null && isObject(value, path())
  }

  /// Whether `value` is an array; anything else is noted as `path`.
  private mutating func isArray(_ value: Index, _ path: @autoclosure () -> String) -> Bool {
    guard tape.kind(of: value) == .array else {
      flag(path())
      return false
    }
    return true
  }

  /// Calls `body` with each key of the object at `object` and the index of its value; of a
  /// key written twice, the first, as the parser keeps it.
  private mutating func members(
    of object: Index, _ body: (inout ReportScanner, Key, Index) throws(Refusal) -> Void
  ) throws(Refusal) {
    for member in tape.members(of: object) {
      try body(&self, Key(tape: tape, index: member.key), member.value)
    }
  }

  /// A member's key, told from the names `stats` knows by its bytes, without being made into
  /// a `String`: that is made only for a message or a milestone's name.
  private struct Key: CustomStringConvertible {
    let tape: JSONTape
    let index: Index

    var description: String { tape.string(at: index) }

    static func ~= (name: StaticString, key: Key) -> Bool {
      key.tape.string(at: key.index, is: name)
    }

    static func == (key: Key, name: StaticString) -> Bool { name ~= key }

    /// `path` followed by the key.
    static func + (path: String, key: Key) -> String { path + key.description }
  }

  /// The object at `value`, named `path` (with its dot: `app.`), which must hold each of
  /// `required`: `body` reads each key and its value, and passes over those it does not know.
  private mutating func object(
    _ value: Index, in path: String, required: [StaticString],
    _ body: (inout ReportScanner, Key, Index, String) throws(Refusal) -> Void
  ) throws(Refusal) {
    guard isObject(value, String(path.dropLast())) else { return }
    var present: UInt32 = 0
    try members(of: value) { scanner, key, value throws(Refusal) in
      if let bit = required.firstIndex(where: { key == $0 }) { present |= 1 << bit }
      try body(&scanner, key, value, path)
    }
    flagMissing(present, of: required, in: path)
  }

  /// The array at `value`, named `path`, when it is one (anything else is read as none, as
  /// `LaunchReport` reads these): each element an object read by
  /// ``object(_:in:required:_:)``.
  private mutating func objects(
    _ value: Index, in path: String, required: [StaticString],
    _ body: (inout ReportScanner, Key, Index, String) throws(Refusal) -> Void
  ) throws(Refusal) {
    guard tape.kind(of: value) == .array else { return }
    for (position, element) in tape.elements(of: value).enumerated() {
      try object(element, in: "\(path)[\(position)].", required: required, body)
    }
  }

  /// Whether `value` is a string.
  private func isString(_ value: Index) -> Bool {
    tape.kind(of: value) == .string
  }

  /// The string at `value`, or `nil` for anything else.
  private func string(_ value: Index) -> String? {
    isString(value) ? tape.string(at: value) : nil
  }

  /// The Boolean at `value`, or `nil` for anything else.
  private func bool(_ value: Index) -> Bool? {
    switch tape.kind(of: value) {
    case .true: true
    case .false: false
    default: nil
    }
  }

  /// Notes `value` as `path` unless it is a string or `null`.
  private mutating func nullableString(_ value: Index, _ path: @autoclosure () -> String) {
    let kind = tape.kind(of: value)
    if kind != .string && kind != .null { flag(path()) }
  }

  /// A time that must be there: `null` is noted as `path`, as anything but a time is
  /// refused.
  private mutating func requiredTime(_ value: Index, _ path: @autoclosure () -> String)
    throws(Refusal)
  {
    if try time(value, path()) == nil { flag(path()) }
  }

  /// The whole number at `value`, read exactly from its text as `LaunchReport` reads one
  /// (`1.0` and `1e2` are whole); `nil` for anything else.
  private func integer(_ value: Index) -> Int? {
    guard tape.kind(of: value) == .number else { return nil }
    // The common case, digits alone, read from the text without making its value.
    let bytes = tape.bytes
    var position = tape.offset(of: value)
    var integer = 0
    var digits = 0
    while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39, digits < 18 {
      integer = integer * 10 + Int(bytes[position] - 0x30)
      digits += 1
      position += 1
    }
    let ended =
      position == bytes.count
      || !(bytes[position] >= 0x30 && bytes[position] <= 0x39 || bytes[position] == 0x2E
        || bytes[position] | 0x20 == UInt8(ascii: "e"))
    if digits > 0, ended { return integer }
    return tape.value(at: value).exactInteger(Int.self)
  }

  /// A time in seconds at `value`, or `nil` for `null` (a milestone never reached); anything
  /// else, or a time outside 0 to ``longestTime`` (negative, infinite, absurd), refuses the
  /// report, naming `key` (made only then: a report holds thousands of times).
  private func time(_ value: Index, _ key: @autoclosure () -> String) throws(Refusal) -> Double? {
    switch tape.kind(of: value) {
    case .null: return nil
    case .number: break
    default: throw Refusal(reason: "its '\(key())' is not a number of seconds")
    }
    let seconds = tape.number(at: value)
    guard seconds >= 0, seconds <= Self.longestTime else {
      throw Refusal(
        reason:
          "its '\(key())' is \(String(format: "%g", seconds)), not a time from 0 to \(Int(Self.longestTime)) s"
      )
    }
    return seconds
  }

  /// Checks `startedAt` at `value`: a report's time in its form, from 1970 to
  /// ``latestStart``.
  private func startedAt(_ value: Index) throws(Refusal) {
    if tape.kind(of: value) == .null { return }
    guard let text = string(value), let date = ReportDate.date(text) else {
      throw Refusal(reason: "its 'startedAt' is not a time like '2026-11-23T13:57:26Z'")
    }
    let seconds = date.timeIntervalSince1970
    guard seconds >= 0, seconds <= Self.latestStart else {
      throw Refusal(reason: "its 'startedAt' is '\(text)', outside 1970 to 2255")
    }
  }
}
