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
  var hasMilestones = false
  var hasSteps = false
  var formatVersion: Int?
}

/// A reader of report JSON that takes only the keys `stats` needs and skips the rest without
/// building it: a million reports are read at the speed of a scan, in constant memory.
///
/// It reads what `orchestrate run --report` writes, one line of a JSON Lines export, a
/// stored report and a history entry (whose report is under `report`). A text that is not
/// JSON, or JSON that is not a report, is refused with a short reason.
struct ReportScanner {
  /// Why a text is not a report `stats` can read.
  struct Refusal: Error {
    var reason: String
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index: Int

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
    let (report, nested) = try scanner.scanObject(topLevel: true)
    scanner.skipWhitespace()
    guard scanner.atEnd else { throw Refusal(reason: "it has text after its JSON object") }
    let chosen = report.hasSteps ? report : nested ?? report
    guard chosen.hasSteps, chosen.hasMilestones, chosen.outcome != nil else {
      throw Refusal(reason: "it is not a launch report (no outcome, milestones and steps)")
    }
    // Steps are known by their ids: a second line of one would be counted as either.
    var ids = Set<String>(minimumCapacity: chosen.steps.count)
    for step in chosen.steps where !ids.insert(step.id).inserted {
      throw Refusal(reason: "it lists the step '\(step.id)' twice")
    }
    if let version = chosen.formatVersion, version > LaunchReport.formatVersion {
      throw Refusal(
        reason:
          "it is report format \(version), and this build reads up to \(LaunchReport.formatVersion)"
      )
    }
    return chosen
  }

  // MARK: - The report's keys

  /// Reads a report object; at the top level, a history entry's `report` object is read too.
  private mutating func scanObject(topLevel: Bool) throws(Refusal) -> (
    ScannedReport, nested: ScannedReport?
  ) {
    var report = ScannedReport()
    var nested: ScannedReport?
    try members { scanner, key throws(Refusal) in
      switch key {
      case "outcome":
        report.outcome = try scanner.string().flatMap(LaunchOutcome.init(rawValue:))
      case "version":
        report.formatVersion = try scanner.number().map { Int(exactly: $0.rounded(.down)) ?? 0 }
      case "milestones":
        report.hasMilestones = true
        try scanner.members { scanner, name throws(Refusal) in
          report.milestones.append((name, try scanner.time("milestones.\(name)")))
        }
      case "steps":
        report.hasSteps = true
        try scanner.elements { scanner throws(Refusal) in
          report.steps.append(try scanner.step(report.steps.count))
        }
      case "duration", "wallDuration":
        _ = try scanner.time(key)
      case "pauses":
        try scanner.elements { scanner throws(Refusal) in
          try scanner.members { scanner, key throws(Refusal) in
            if key == "at" || key == "duration" {
              _ = try scanner.time("pauses[].\(key)")
            } else {
              try scanner.skipValue()
            }
          }
        }
      case "startedAt":
        try scanner.startedAt()
      case "context":
        try scanner.members { scanner, key throws(Refusal) in
          switch key {
          case "reason": report.reason = try scanner.string()
          case "firstLaunch": report.firstLaunch = try scanner.bool()
          default: try scanner.skipValue()
          }
        }
      case "app":
        try scanner.members { scanner, key throws(Refusal) in
          if key == "version" {
            report.version = try scanner.string()
          } else {
            try scanner.skipValue()
          }
        }
      case "labels":
        try scanner.members { scanner, key throws(Refusal) in
          switch key {
          case "arm": report.arm = try scanner.string()
          case "device": report.device = try scanner.string()
          default: try scanner.skipValue()
          }
        }
      case "report" where topLevel && scanner.peek == UInt8(ascii: "{"):
        nested = try scanner.scanObject(topLevel: false).0
      default:
        try scanner.skipValue()
      }
    }
    return (report, nested)
  }

  private mutating func step(_ index: Int) throws(Refusal) -> ScannedReport.Step {
    var step = ScannedReport.Step(id: "")
    var hasID = false
    try members { scanner, key throws(Refusal) in
      switch key {
      case "id":
        step.id = try scanner.string() ?? ""
        hasID = true
      case "state": step.state = try scanner.string().flatMap(StepState.init(rawValue:))
      case "start": step.start = try scanner.time("steps[\(index)].start")
      case "end": step.end = try scanner.time("steps[\(index)].end")
      case "ready": step.ready = try scanner.time("steps[\(index)].ready")
      case "work", "refresh":
        try scanner.times(in: "steps[\(index)].\(key)")
      case "deferUntil": step.isDeferred = try scanner.string() != nil
      default: try scanner.skipValue()
      }
    }
    guard hasID, step.state != nil else {
      throw Refusal(reason: "a step has no id or state")
    }
    return step
  }

  /// A time in seconds, or `nil` for `null` (a milestone never reached); anything else, or a
  /// time outside 0 to ``longestTime`` (negative, infinite, absurd), refuses the report,
  /// naming `key`.
  private mutating func time(_ key: String) throws(Refusal) -> Double? {
    if try literalNull() { return nil }
    guard let first = peek, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else {
      throw Refusal(reason: "its '\(key)' is not a number of seconds")
    }
    let value = try numberValue()
    guard value.isFinite, value >= 0, value <= Self.longestTime else {
      throw Refusal(
        reason:
          "its '\(key)' is \(value.isFinite ? String(format: "%g", value) : "out of range"), not a time from 0 to \(Int(Self.longestTime)) s"
      )
    }
    return value
  }

  /// Checks the times of every `start`, `end`, `ready`, `at` and `duration` inside the value
  /// at the scanner (a step's attempts, its refresh), which `export` places on the clock.
  private mutating func times(in key: String) throws(Refusal) {
    skipWhitespace()
    switch peek {
    case UInt8(ascii: "["):
      try elements { scanner throws(Refusal) in try scanner.times(in: key) }
    case UInt8(ascii: "{"):
      try members { scanner, member throws(Refusal) in
        switch member {
        case "start", "end", "ready", "at", "duration": _ = try scanner.time("\(key).\(member)")
        default: try scanner.times(in: "\(key).\(member)")
        }
      }
    default:
      try skipValue()
    }
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

  /// A number, or `nil` for `null` or anything else.
  private mutating func number() throws(Refusal) -> Double? {
    guard let first = peek, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else {
      try skipValue()
      return nil
    }
    return try numberValue()
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
