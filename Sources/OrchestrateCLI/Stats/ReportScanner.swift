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

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index: Int
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
    var scanner = ReportScanner(bytes: bytes, index: 0)
    scanner.skipWhitespace()
    guard scanner.peek == UInt8(ascii: "{") else {
      throw scanner.atEnd
        ? Refusal(reason: "it is empty") : scanner.refusal("expected a JSON object, '{',")
    }
    let (report, entry) = try scanner.scanObject(topLevel: true)
    scanner.skipWhitespace()
    guard scanner.atEnd else { throw Refusal(reason: "it has text after its JSON object") }
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
    var hasReportKey = false
    /// The keys there, valid, each a bit.
    var present: UInt8 = 0
    /// The first key found of the wrong shape: a key written twice is read as its first.
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
  private static let reportKeys = [
    "manifest", "name", "outcome", "route", "duration", "milestones", "criticalPath", "steps",
  ]
  /// The keys every step has.
  private static let stepKeys = [
    "id", "plugin", "state", "start", "end", "attempts", "usedFallback", "error",
  ]

  /// Reads a report object; at the top level, what a history entry holds is read too.
  private mutating func scanObject(topLevel: Bool) throws(Refusal) -> (
    ScannedReport, EntryParts
  ) {
    var report = ScannedReport()
    var entry = EntryParts()
    // A nested report's problems are its own.
    let outer = problem
    problem = nil
    var present: UInt32 = 0
    try members { scanner, key throws(Refusal) in
      switch key {
      case "manifest" where topLevel && scanner.peek == UInt8(ascii: "{"):
        // A history entry's: its path and hash. No report's, whose manifest is a string.
        present |= 1 << 0
        scanner.flag(key)
        try scanner.members { scanner, key throws(Refusal) in
          switch key {
          case "path": entry.note(1, valid: try scanner.skipsString())
          case "sha256": entry.note(2, valid: try scanner.skipsString())
          default: try scanner.skipValue()
          }
        }
      case "manifest", "name":
        present |= key == "manifest" ? 1 << 0 : 1 << 1
        if try !scanner.skipsString() { scanner.flag(key) }
        if key == "manifest" { entry.note(1, valid: false) }
      case "outcome":
        present |= 1 << 2
        report.hasOutcome = true
        report.outcome = try scanner.string().flatMap(LaunchOutcome.init(rawValue:))
        if report.outcome == nil { scanner.flag(key) }
      case "route":
        present |= 1 << 3
        try scanner.nullableString(key)
      case "duration":
        present |= 1 << 4
        try scanner.requiredTime(key)
      case "wallDuration":
        _ = try scanner.time(key)
      case "version":
        // A key written twice is read as its first by `LaunchReport` (the parser keeps the
        // first), so the second is read as nothing here too, whatever it says.
        guard report.formatVersion == nil, !report.hasMalformedVersion else {
          return try scanner.skipValue()
        }
        if let version = try scanner.integer() {
          report.formatVersion = version
        } else {
          report.hasMalformedVersion = true
        }
      case "milestones":
        present |= 1 << 5
        report.hasMilestones = true
        guard try scanner.isObject(key) else { break }
        try scanner.members { scanner, name throws(Refusal) in
          report.milestones.append((name, try scanner.time("milestones.\(name)")))
        }
      case "criticalPath":
        present |= 1 << 6
        guard try scanner.isArray(key) else { break }
        try scanner.elements { scanner throws(Refusal) in
          if try !scanner.skipsString() { scanner.flag("criticalPath") }
        }
      case "steps":
        present |= 1 << 7
        report.hasSteps = true
        guard try scanner.isArray(key) else { break }
        try scanner.elements { scanner throws(Refusal) in
          report.steps.append(try scanner.step(report.steps.count))
        }
      case "pauses":
        try scanner.objects(in: "pauses", required: ["at", "duration"]) {
          scanner, key, pause throws(Refusal) in
          if key == "at" || key == "duration" {
            try scanner.requiredTime(pause + key)
          } else {
            try scanner.skipValue()
          }
        }
      case "criticalChains":
        try scanner.criticalChains()
      case "startedAt":
        try scanner.startedAt()
      case "context":
        guard try scanner.isObjectOrNull(key) else { break }
        try scanner.object(in: "context.", required: Self.contextKeys) {
          scanner, key, path throws(Refusal) in
          switch key {
          case "reason":
            report.reason = try scanner.string()
            if report.reason == nil { scanner.flag(path + key) }
          case "launchNumber":
            if try scanner.integer() == nil { scanner.flag(path + key) }
          case "prewarmed", "firstLaunch", "afterUpgrade", "safeMode":
            let value = try scanner.bool()
            if key == "firstLaunch" { report.firstLaunch = value }
            if value == nil { scanner.flag(path + key) }
          default:
            try scanner.skipValue()
          }
        }
      case "app":
        guard try scanner.isObjectOrNull(key) else { break }
        try scanner.object(in: "app.", required: ["version"]) {
          scanner, key, path throws(Refusal) in
          guard key == "version" else { return try scanner.skipValue() }
          report.version = try scanner.string()
          if report.version == nil { scanner.flag(path + key) }
        }
      case "labels":
        guard try scanner.isObjectOrNull(key) else { break }
        try scanner.members { scanner, key throws(Refusal) in
          switch key {
          case "arm": report.arm = try scanner.string()
          case "device": report.device = try scanner.string()
          default: try scanner.skipValue()
          }
        }
      case "signals":
        guard try scanner.isObjectOrNull(key) else { break }
        try scanner.members { scanner, name throws(Refusal) in
          _ = try scanner.time("signals.\(name)")
        }
      case "orchestrateHistory" where topLevel:
        let isCurrent = try scanner.integer() == HistoryEntry.formatVersion
        entry.isCurrent = isCurrent && (entry.isCurrent || !entry.isMarked)
        entry.isMarked = true
      case "recordedAt" where topLevel:
        entry.note(0, valid: try scanner.skipsString())
      case "machine" where topLevel:
        guard scanner.peek == UInt8(ascii: "{") else {
          entry.note(3, valid: false)
          return try scanner.skipValue()
        }
        try scanner.members { scanner, key throws(Refusal) in
          switch key {
          case "host": entry.note(3, valid: try scanner.skipsString())
          case "system": entry.note(4, valid: try scanner.skipsString())
          case "cores": entry.note(5, valid: try scanner.integer() != nil)
          default: try scanner.skipValue()
          }
        }
      case "report" where topLevel:
        // The first is the one `HistoryEntry` reads.
        let isFirst = !entry.hasReportKey
        entry.hasReportKey = true
        guard scanner.peek == UInt8(ascii: "{") else { return try scanner.skipValue() }
        let nested = try scanner.scanObject(topLevel: false).0
        if isFirst { entry.report = nested }
      default:
        try scanner.skipValue()
      }
    }
    flagMissing(present, of: Self.reportKeys, in: "")
    report.problem = problem
    problem = outer
    return (report, entry)
  }

  /// The keys of a report's `context`.
  private static let contextKeys = [
    "reason", "prewarmed", "firstLaunch", "afterUpgrade", "launchNumber", "safeMode",
  ]

  private mutating func step(_ index: Int) throws(Refusal) -> ScannedReport.Step {
    var step = ScannedReport.Step(id: "")
    let path = "steps[\(index)]."
    guard peek == UInt8(ascii: "{") else {
      flag("steps[\(index)]")
      try skipValue()
      return step
    }
    var present: UInt32 = 0
    try members { scanner, key throws(Refusal) in
      switch key {
      case "id":
        present |= 1 << 0
        if let id = try scanner.string() { step.id = id } else { scanner.flag(path + key) }
      case "plugin":
        present |= 1 << 1
        if try !scanner.skipsString() { scanner.flag(path + key) }
      case "state":
        present |= 1 << 2
        step.state = try scanner.string().flatMap(StepState.init(rawValue:))
        if step.state == nil { scanner.flag(path + key) }
      case "start":
        present |= 1 << 3
        step.start = try scanner.time(path + key)
      case "end":
        present |= 1 << 4
        step.end = try scanner.time(path + key)
      case "attempts":
        present |= 1 << 5
        if try scanner.integer() == nil { scanner.flag(path + key) }
      case "usedFallback":
        present |= 1 << 6
        if try scanner.bool() == nil { scanner.flag(path + key) }
      case "error":
        present |= 1 << 7
        try scanner.nullableString(path + key)
      case "ready": step.ready = try scanner.time(path + key)
      case "waits", "work": try scanner.spans(key, in: path)
      case "refresh": try scanner.refresh(in: path + "refresh.")
      case "deferUntil": step.isDeferred = try scanner.skipsString()
      default: try scanner.skipValue()
      }
    }
    flagMissing(present, of: Self.stepKeys, in: path)
    return step
  }

  /// A step's or refresh's `waits` or `work` (`key`), inside `path` (`steps[0].`).
  private mutating func spans(_ key: String, in path: String) throws(Refusal) {
    let isWork = key == "work"
    let required = isWork ? ["attempt", "start", "end"] : ["reason", "start", "end"]
    try objects(in: path + key, required: required) { scanner, member, span throws(Refusal) in
      switch member {
      case "attempt" where isWork:
        if try scanner.integer() == nil { scanner.flag(span + member) }
      case "reason" where !isWork:
        if try scanner.string().flatMap(WaitReason.init(rawValue:)) == nil {
          scanner.flag(span + member)
        }
      case "start", "end":
        try scanner.requiredTime(span + member)
      default:
        // A wait's `heldBy` is read as whatever strings it holds.
        try scanner.skipValue()
      }
    }
  }

  /// A cached step's `refresh` (`path` is `steps[0].refresh.`): `null`, or an object with a
  /// step's state, times, attempts and error.
  private mutating func refresh(in path: String) throws(Refusal) {
    if try literalNull() { return }
    let required = ["state", "start", "end", "attempts", "error"]
    try object(in: path, required: required) { scanner, key, path throws(Refusal) in
      switch key {
      case "state":
        if try scanner.string().flatMap(StepState.init(rawValue:)) == nil {
          scanner.flag(path + key)
        }
      case "attempts":
        if try scanner.integer() == nil { scanner.flag(path + key) }
      case "error":
        try scanner.nullableString(path + key)
      case "start", "end", "ready":
        _ = try scanner.time(path + key)
      case "waits", "work":
        try scanner.spans(key, in: path)
      default:
        try scanner.skipValue()
      }
    }
  }

  /// `criticalChains`: when an array, each chain's `milestone` and its `links`, each with
  /// its step, how it was held and its times.
  private mutating func criticalChains() throws(Refusal) {
    let links = ["step", "heldVia", "start", "end", "wait", "work"]
    try objects(in: "criticalChains", required: ["milestone", "links"]) {
      scanner, key, chain throws(Refusal) in
      switch key {
      case "milestone":
        try scanner.nullableString(chain + key)
      case "links":
        guard try scanner.isArray(chain + key) else { return }
        try scanner.objects(in: chain + key, required: links) {
          scanner, key, link throws(Refusal) in
          switch key {
          case "step":
            if try !scanner.skipsString() { scanner.flag(link + key) }
          case "heldVia":
            if try scanner.literalNull() { return }
            let hold = try scanner.string().flatMap(LaunchReport.CriticalChain.Hold.init)
            if hold == nil { scanner.flag(link + key) }
          case "start", "end", "wait", "work":
            try scanner.requiredTime(link + key)
          default:
            try scanner.skipValue()
          }
        }
      default:
        try scanner.skipValue()
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
    _ present: UInt32, of keys: [String], in path: @autoclosure () -> String
  ) {
    guard problem == nil, present != (1 << keys.count) - 1 else { return }
    let missing = keys.indices.first { present & (1 << $0) == 0 } ?? 0
    flag(path() + keys[missing])
  }

  /// Whether an object is next; anything else is noted as `path` and skipped.
  private mutating func isObject(_ path: @autoclosure () -> String) throws(Refusal) -> Bool {
    guard peek == UInt8(ascii: "{") else {
      flag(path())
      try skipValue()
      return false
    }
    return true
  }

  /// Whether an object is next; `null` is skipped, anything else noted as `path` and skipped.
  private mutating func isObjectOrNull(_ path: @autoclosure () -> String) throws(Refusal) -> Bool {
    if try literalNull() { return false }
    return try isObject(path())
  }

  /// Whether an array is next; anything else is noted as `path` and skipped.
  private mutating func isArray(_ path: @autoclosure () -> String) throws(Refusal) -> Bool {
    guard peek == UInt8(ascii: "[") else {
      flag(path())
      try skipValue()
      return false
    }
    return true
  }

  /// The object next, named `path` (with its dot: `app.`), which must hold each of
  /// `required`: `body` reads each key (the scanner at its value) and skips those it does
  /// not know.
  private mutating func object(
    in path: String, required: [String],
    _ body: (inout ReportScanner, String, String) throws(Refusal) -> Void
  ) throws(Refusal) {
    guard try isObject(String(path.dropLast())) else { return }
    var present: UInt32 = 0
    try members { scanner, key throws(Refusal) in
      if let bit = required.firstIndex(of: key) { present |= 1 << bit }
      try body(&scanner, key, path)
    }
    flagMissing(present, of: required, in: path)
  }

  /// The array next, named `path`, when it is one (anything else is read as none, as
  /// `LaunchReport` reads these): each element an object read by
  /// ``object(in:required:_:)``.
  private mutating func objects(
    in path: String, required: [String],
    _ body: (inout ReportScanner, String, String) throws(Refusal) -> Void
  ) throws(Refusal) {
    guard peek == UInt8(ascii: "[") else { return try skipValue() }
    var count = 0
    try elements { scanner throws(Refusal) in
      try scanner.object(in: "\(path)[\(count)].", required: required, body)
      count += 1
    }
  }

  /// A string or `null`; anything else is noted as `path`.
  private mutating func nullableString(_ path: @autoclosure () -> String) throws(Refusal) {
    if try literalNull() { return }
    if try !skipsString() { flag(path()) }
  }

  /// Whether a string is next, skipped without building it; anything else is skipped too.
  private mutating func skipsString() throws(Refusal) -> Bool {
    guard peek == UInt8(ascii: "\"") else {
      try skipValue()
      return false
    }
    try skipString()
    return true
  }

  /// A time that must be there: `null` is noted as `path`, as anything but a time is
  /// refused.
  private mutating func requiredTime(_ path: @autoclosure () -> String) throws(Refusal) {
    if try time(path()) == nil { flag(path()) }
  }

  /// A whole number, read exactly from its text as `LaunchReport` reads one (`1.0` and `1e2`
  /// are whole); `nil` for anything else, which is skipped.
  private mutating func integer() throws(Refusal) -> Int? {
    guard let first = peek, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else {
      try skipValue()
      return nil
    }
    let start = index
    _ = try numberValue()
    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
    // The common case, digits alone, without building anything.
    if text.count <= 18, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
      return text.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
    let value = try? JSONParser.parse([UInt8(ascii: "[")] + Array(text) + [UInt8(ascii: "]")])
      .root.elements?.first
    return value?.exactInteger(Int.self)
  }

  /// A time in seconds, or `nil` for `null` (a milestone never reached); anything else, or a
  /// time outside 0 to ``longestTime`` (negative, infinite, absurd), refuses the report,
  /// naming `key` (made only then: a report holds thousands of times).
  private mutating func time(_ key: @autoclosure () -> String) throws(Refusal) -> Double? {
    if try literalNull() { return nil }
    guard let first = peek, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else {
      throw Refusal(reason: "its '\(key())' is not a number of seconds")
    }
    let value = try numberValue()
    guard value.isFinite, value >= 0, value <= Self.longestTime else {
      throw Refusal(
        reason:
          "its '\(key())' is \(value.isFinite ? String(format: "%g", value) : "out of range"), not a time from 0 to \(Int(Self.longestTime)) s"
      )
    }
    return value
  }

  /// Checks `startedAt`: a report's time in its form, from 1970 to ``latestStart``.
  private mutating func startedAt() throws(Refusal) {
    skipWhitespace()
    if try literalNull() { return }
    guard let text = try stringValue(), let date = ReportDate.date(text) else {
      throw Refusal(reason: "its 'startedAt' is not a time like '2026-11-23T13:57:26Z'")
    }
    let seconds = date.timeIntervalSince1970
    guard seconds >= 0, seconds <= Self.latestStart else {
      throw Refusal(
        reason: "its 'startedAt' is '\(text)', outside 1970 to 2255")
    }
  }

  // MARK: - JSON

  private var atEnd: Bool { index >= bytes.count }
  private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

  /// A syntax error, placed by line and column as an editor shows them.
  private func refusal(_ what: String) -> Refusal {
    let end = Swift.min(index, bytes.count)
    var line = 1
    var lineStart = 0
    for offset in 0..<end where bytes[offset] == 0x0A {
      line += 1
      lineStart = offset + 1
    }
    return Refusal(
      reason: "it is not valid JSON (\(what) at line \(line), column \(end - lineStart + 1))")
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return
      }
    }
  }

  private mutating func expect(_ byte: UInt8) throws(Refusal) {
    skipWhitespace()
    guard peek == byte else { throw refusal("expected '\(Character(UnicodeScalar(byte)))'") }
    index += 1
  }

  /// Calls `body` with each key of an object, the scanner at its value; `null` is an empty
  /// object.
  private mutating func members(
    _ body: (inout ReportScanner, String) throws(Refusal) -> Void
  ) throws(Refusal) {
    skipWhitespace()
    if try literalNull() { return }
    try expect(UInt8(ascii: "{"))
    skipWhitespace()
    if peek == UInt8(ascii: "}") {
      index += 1
      return
    }
    while true {
      skipWhitespace()
      guard let key = try stringValue() else { throw refusal("expected a key") }
      try expect(UInt8(ascii: ":"))
      skipWhitespace()
      try body(&self, key)
      skipWhitespace()
      guard let next = peek else { throw refusal("unfinished object") }
      index += 1
      if next == UInt8(ascii: "}") { return }
      guard next == UInt8(ascii: ",") else { throw refusal("expected ',' or '}'") }
    }
  }

  /// Calls `body` with the scanner at each element of an array; `null` is an empty array.
  private mutating func elements(_ body: (inout ReportScanner) throws(Refusal) -> Void)
    throws(Refusal)
  {
    skipWhitespace()
    if try literalNull() { return }
    try expect(UInt8(ascii: "["))
    skipWhitespace()
    if peek == UInt8(ascii: "]") {
      index += 1
      return
    }
    while true {
      skipWhitespace()
      try body(&self)
      skipWhitespace()
      guard let next = peek else { throw refusal("unfinished array") }
      index += 1
      if next == UInt8(ascii: "]") { return }
      guard next == UInt8(ascii: ",") else { throw refusal("expected ',' or ']'") }
    }
  }

  /// Consumes `null` if it is next.
  private mutating func literalNull() throws(Refusal) -> Bool {
    guard peek == UInt8(ascii: "n") else { return false }
    try literal("null")
    return true
  }

  private mutating func literal(_ text: StaticString) throws(Refusal) {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count else { throw refusal("unfinished literal") }
    for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] {
      throw refusal("unknown literal")
    }
    index += count
  }

  /// A string, or `nil` for `null`; anything else is skipped and read as `nil`.
  private mutating func string() throws(Refusal) -> String? {
    guard peek == UInt8(ascii: "\"") else {
      try skipValue()
      return nil
    }
    return try stringValue()
  }

  private mutating func bool() throws(Refusal) -> Bool? {
    switch peek {
    case UInt8(ascii: "t"):
      try literal("true")
      return true
    case UInt8(ascii: "f"):
      try literal("false")
      return false
    default:
      try skipValue()
      return nil
    }
  }

  /// The string at the scanner (which must be at its quote), escapes decoded.
  private mutating func stringValue() throws(Refusal) -> String? {
    guard peek == UInt8(ascii: "\"") else { return nil }
    index += 1
    let start = index
    var escaped = false
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        guard escaped else { return String(decoding: slice, as: UTF8.self) }
        return try Self.unescape(slice)
      }
      if byte == UInt8(ascii: "\\") {
        escaped = true
        index += 1
      }
      index += 1
    }
    throw refusal("unfinished string")
  }

  /// A string with escapes: read by the package's own JSON parser, which knows them all.
  private static func unescape(_ slice: UnsafeBufferPointer<UInt8>) throws(Refusal) -> String {
    let quoted = [UInt8(ascii: "\"")] + Array(slice) + [UInt8(ascii: "\"")]
    guard let value = try? JSONParser.parse(quoted).root.stringValue else {
      throw Refusal(reason: "it is not valid JSON (a bad escape in a string)")
    }
    return value
  }

  /// A number in JSON's syntax. Up to 18 significant digits are read exactly and scaled by
  /// a power of ten (reports have six decimals); longer ones are read by the standard library.
  private mutating func numberValue() throws(Refusal) -> Double {
    let start = index
    var negative = false
    if peek == UInt8(ascii: "-") {
      negative = true
      index += 1
    }
    var mantissa: UInt64 = 0
    var digits = 0
    var scale = 0
    var sawDigit = false
    while let byte = peek, byte >= 0x30, byte <= 0x39 {
      if digits < 18 {
        mantissa = mantissa * 10 + UInt64(byte - 0x30)
        if mantissa > 0 { digits += 1 }
      } else {
        scale += 1
      }
      sawDigit = true
      index += 1
    }
    guard sawDigit else { throw refusal("a number without digits") }
    if peek == UInt8(ascii: ".") {
      index += 1
      var fractionDigits = false
      while let byte = peek, byte >= 0x30, byte <= 0x39 {
        if digits < 18 {
          mantissa = mantissa * 10 + UInt64(byte - 0x30)
          if mantissa > 0 { digits += 1 }
          scale -= 1
        }
        fractionDigits = true
        index += 1
      }
      guard fractionDigits else { throw refusal("a number without digits after its point") }
    }
    if let byte = peek, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
      index += 1
      if let sign = peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
      while let byte = peek, byte >= 0x30, byte <= 0x39 { index += 1 }
      let text = String(
        decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
      guard let value = Double(text) else { throw refusal("a malformed number") }
      return value
    }
    var value = Double(mantissa)
    if scale < 0 {
      value /= Self.powersOfTen[min(-scale, 22)]
    } else if scale > 0 {
      value *= Self.powersOfTen[min(scale, 22)]
    }
    return negative ? -value : value
  }

  private static let powersOfTen: [Double] = (0...22).map { pow(10.0, Double($0)) }

  /// Skips one value of any kind.
  private mutating func skipValue() throws(Refusal) {
    skipWhitespace()
    guard let first = peek else { throw refusal("a missing value") }
    switch first {
    case UInt8(ascii: "\""):
      _ = try skipString()
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      while index < bytes.count {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\""):
          try skipString()
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["):
          depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 {
            index += 1
            return
          }
        default:
          break
        }
        index += 1
      }
      throw refusal("an unfinished object or array")
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    case UInt8(ascii: "-"), 0x30...0x39: _ = try numberValue()
    default: throw refusal("an unexpected '\(Character(UnicodeScalar(first)))'")
    }
  }

  private mutating func skipString() throws(Refusal) {
    index += 1
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        index += 1
        return
      }
      index += byte == UInt8(ascii: "\\") ? 2 : 1
    }
    throw refusal("unfinished string")
  }
}
