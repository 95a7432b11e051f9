import Foundation
import LaunchJSON

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The report's JSON form, as `--report` writes it and `plan --durations` reads it;
/// docs/report.md describes every key. Each part of a report writes and reads its own keys
/// below, side by side; values are read through one `FieldReader`.
extension LaunchReport {
  /// The version of the JSON form this build writes (the `version` key) and reads up to:
  /// 2 added wait reasons, critical chains, notes, `error` and `splash` to the first form
  /// (which had no `version`); 3 added cached steps (`state` `cached`, `refresh`) and the
  /// `main` wait reason; 4 added `wallDuration`, `pauses`, `signals` and a step's `reused`;
  /// 5 added `context`; 6 added `startedAt`, `app`, `labels`, `sinceProcessStart` and a step's
  /// `priority` and `deferUntil`.
  package static let formatVersion = 6

  /// The report as a JSON value with the documented keys, in the documented order.
  package var json: JSONValue {
    [
      "version": Self.formatVersion.reportJSON,
      "manifest": manifest.reportJSON,
      "name": name.reportJSON,
      "outcome": outcome.reportJSON,
      "route": route.map(\.name).reportJSON,
      "error": error.reportJSON,
      "startedAt": startedAt.map { JSONValue(.string(ReportDate.text($0))) } ?? nil,
      "context": context.map { $0.reportJSON(notes: contextNotes) } ?? nil,
      "app": app.map(\.reportJSON) ?? nil,
      "labels": labels.map(\.reportJSON) ?? nil,
      "duration": duration.reportJSON,
      "wallDuration": wallDuration.reportJSON,
      "sinceProcessStart": sinceProcessStart.reportJSON,
      "pauses": JSONValue(
        .array(
          pauses.map { ["at": $0.at.reportJSON, "duration": $0.duration.reportJSON] as JSONValue })),
      "signals": JSONValue(
        .object(signals.map { JSONMember(key: $0.name, value: $0.time.reportJSON) })),
      "milestones": JSONValue(
        .object(milestones.map { JSONMember(key: $0.name, value: $0.time.reportJSON) })),
      "splash": splash.map(\.reportJSON) ?? nil,
      "criticalPath": criticalPath.reportJSON,
      "criticalChains": JSONValue(.array(criticalChains.map(\.reportJSON))),
      "steps": JSONValue(.array(steps.map(\.reportJSON))),
    ]
  }

  /// The report as pretty-printed JSON text.
  public var jsonText: String { JSONWriter.prettyPrinted(json) }

  /// Reads a report written by ``jsonText``.
  /// - Throws: an error whose description names the first field that is missing or malformed.
  public init(jsonText: String) throws {
    var reader = try FieldReader(reportText: jsonText)
    try self.init(reader: &reader)
  }

  /// Reads a report from its parsed JSON (`root`), for a reader that parsed the file already:
  /// a report of 100,000 steps is tens of megabytes, and parsing it is most of reading it.
  /// - Throws: ``ReportFormatError`` naming the first field that is missing or malformed.
  package init(json root: JSONValue) throws {
    var reader = FieldReader(value: root)
    try self.init(reader: &reader)
  }

  private init(reader report: inout FieldReader) throws(ReportFormatError) {
    try Self.checkVersion(of: &report)
    // Steps first: a file that is not a report at all is named by its missing steps.
    let steps = try report.elements("steps", Step.init)
    // Steps are known by their ids: a second line of one would be read as either.
    var ids = Set<String>(minimumCapacity: steps.count)
    for (index, step) in steps.enumerated() where !ids.insert(step.id).inserted {
      throw ReportFormatError(
        path: JSONPath.root.appending("steps").appending(index).appending("id"),
        message: "the step '\(step.id)' is listed twice")
    }
    let milestones = try Self.milestones(of: &report)
    self.init(
      manifest: try report.field("manifest", as: String.self),
      name: try report.field("name", as: String.self),
      outcome: try report.field("outcome", as: LaunchOutcome.self),
      route: try report.field("route", as: String?.self).map(LaunchRoute.init),
      duration: try report.field("duration", as: Duration.self),
      milestones: milestones,
      criticalPath: try report.field("criticalPath", as: [String].self),
      steps: steps,
      // Reports written before these existed have neither.
      error: report.fieldIfPresent("error", as: String.self),
      splash: try report.member("splash", SplashTiming.init))
    // Reports written before critical chains have none.
    criticalChains = try report.elementsIfPresent("criticalChains", CriticalChain.init)
    // Reports written before pauses and signals have none; `wallDuration` follows from them.
    pauses = try report.elementsIfPresent("pauses") {
      (pause: inout FieldReader) throws(ReportFormatError) in
      Pause(
        at: try pause.field("at", as: Duration.self),
        duration: try pause.field("duration", as: Duration.self))
    }
    // Reports written before launch contexts, or of launches that kept no record, have none.
    let context = try report.objectIfPresent("context") {
      (object: inout FieldReader) throws(ReportFormatError) in
      (try LaunchContext(&object), object.stringsIfPresent("notes"))
    }
    if let context { (self.context, contextNotes) = context }
    // Reports written before format 6 have none of these.
    app = try report.objectIfPresent("app", AppInfo.init)
    labels = try report.objectIfPresent("labels", LaunchLabels.init)
    sinceProcessStart = report.fieldIfPresent("sinceProcessStart", as: Duration.self)
    if let text = report.fieldIfPresent("startedAt", as: String.self) {
      guard let date = ReportDate.date(text) else { throw report.malformed("startedAt") }
      startedAt = date
    }
    let signals = try report.objectIfPresent("signals") {
      (object: inout FieldReader) throws(ReportFormatError) in
      try object.keys.map { name throws(ReportFormatError) in
        Signal(name: name, time: try object.field(name, as: Duration?.self))
      }
    }
    if let signals { self.signals = signals }
  }

  /// Older forms read as far as they go; a newer one may mean something else by a key.
  private static func checkVersion(of report: inout FieldReader) throws(ReportFormatError) {
    guard report.has("version") else { return }
    let version = try report.field("version", as: Int.self)
    guard version >= 1 else { throw report.malformed("version") }
    guard version <= formatVersion else {
      throw ReportFormatError(
        path: .root.appending("version"),
        message:
          "the report is format \(version), and this build reads formats up to \(formatVersion); use a newer orchestrate"
      )
    }
  }

  /// The `milestones` object: each milestone's time under its name, in manifest order.
  private static func milestones(
    of report: inout FieldReader
  ) throws(ReportFormatError) -> [Milestone] {
    try report.object("milestones") { (milestones: inout FieldReader) throws(ReportFormatError) in
      try milestones.keys.map { name throws(ReportFormatError) in
        Milestone(name: name, time: try milestones.field(name, as: Duration?.self))
      }
    }
  }
}

extension LaunchReport.Step {
  fileprivate var reportJSON: JSONValue {
    [
      "id": id.reportJSON,
      "plugin": plugin.reportJSON,
      "state": state.reportJSON,
      "start": start.reportJSON,
      "end": end.reportJSON,
      "attempts": attempts.reportJSON,
      "usedFallback": usedFallback.reportJSON,
      "error": error.reportJSON,
      "notes": notes.reportJSON,
      "ready": ready.reportJSON,
      "waits": JSONValue(.array(waits.map(\.reportJSON))),
      "work": JSONValue(.array(work.map(\.reportJSON))),
      "refresh": refresh.map(\.reportJSON) ?? nil,
      "reused": reused.reportJSON,
      "priority": priority.map(\.description).reportJSON,
      "deferUntil": deferUntil.reportJSON,
    ]
  }

  fileprivate init(_ step: inout FieldReader) throws(ReportFormatError) {
    self.init(
      id: try step.field("id", as: String.self),
      plugin: try step.field("plugin", as: String.self),
      state: try step.field("state", as: StepState.self),
      start: try step.field("start", as: Duration?.self),
      end: try step.field("end", as: Duration?.self),
      attempts: try step.field("attempts", as: Int.self),
      usedFallback: try step.field("usedFallback", as: Bool.self),
      error: try step.field("error", as: String?.self),
      // Reports written before notes existed have none.
      notes: step.stringsIfPresent("notes"),
      // Reports written before wait reasons have no ready time, waits or work.
      ready: step.fieldIfPresent("ready", as: Duration.self),
      waits: try step.elementsIfPresent("waits", LaunchReport.Wait.init),
      work: try step.elementsIfPresent("work", LaunchReport.Work.init))
    // Reports written before retries have no `reused`.
    reused = step.fieldIfPresent("reused", as: Bool.self) ?? false
    // Reports written before format 6 have no priority or deferral.
    priority = step.fieldIfPresent("priority", as: String.self).flatMap(StepPriority.init(name:))
    deferUntil = step.fieldIfPresent("deferUntil", as: String.self)
    // Reports written before cached steps have no refresh.
    refresh = try step.memberIfPresent("refresh", LaunchReport.Refresh.init)
  }
}

extension LaunchReport.Refresh {
  fileprivate var reportJSON: JSONValue {
    [
      "state": state.reportJSON,
      "start": start.reportJSON,
      "end": end.reportJSON,
      "attempts": attempts.reportJSON,
      "error": error.reportJSON,
      "ready": ready.reportJSON,
      "waits": JSONValue(.array(waits.map(\.reportJSON))),
      "work": JSONValue(.array(work.map(\.reportJSON))),
    ]
  }

  fileprivate init(_ refresh: inout FieldReader) throws(ReportFormatError) {
    self.init(
      state: try refresh.field("state", as: StepState.self),
      start: try refresh.field("start", as: Duration?.self),
      end: try refresh.field("end", as: Duration?.self),
      attempts: try refresh.field("attempts", as: Int.self),
      error: try refresh.field("error", as: String?.self),
      ready: refresh.fieldIfPresent("ready", as: Duration.self),
      waits: try refresh.elementsIfPresent("waits", LaunchReport.Wait.init),
      work: try refresh.elementsIfPresent("work", LaunchReport.Work.init))
  }
}

extension LaunchReport.Wait {
  fileprivate var reportJSON: JSONValue {
    [
      "reason": reason.reportJSON,
      "start": start.reportJSON,
      "end": end.reportJSON,
      "heldBy": heldBy.reportJSON,
    ]
  }

  fileprivate init(_ wait: inout FieldReader) throws(ReportFormatError) {
    self.init(
      reason: try wait.field("reason", as: WaitReason.self),
      start: try wait.field("start", as: Duration.self),
      end: try wait.field("end", as: Duration.self),
      heldBy: wait.stringsIfPresent("heldBy"))
  }
}

extension LaunchReport.Work {
  fileprivate var reportJSON: JSONValue {
    [
      "attempt": attempt.reportJSON,
      "start": start.reportJSON,
      "end": end.reportJSON,
    ]
  }

  fileprivate init(_ work: inout FieldReader) throws(ReportFormatError) {
    self.init(
      attempt: try work.field("attempt", as: Int.self),
      start: try work.field("start", as: Duration.self),
      end: try work.field("end", as: Duration.self))
  }
}

extension LaunchReport.CriticalChain {
  fileprivate var reportJSON: JSONValue {
    [
      "milestone": milestone.reportJSON,
      "links": JSONValue(.array(links.map(\.reportJSON))),
    ]
  }

  fileprivate init(_ chain: inout FieldReader) throws(ReportFormatError) {
    self.init(
      milestone: try chain.field("milestone", as: String?.self),
      links: try chain.elements("links", Link.init))
  }
}

extension LaunchReport.CriticalChain.Link {
  fileprivate var reportJSON: JSONValue {
    [
      "step": step.reportJSON,
      "heldVia": heldVia.reportJSON,
      "start": start.reportJSON,
      "end": end.reportJSON,
      "wait": wait.reportJSON,
      "work": work.reportJSON,
    ]
  }

  fileprivate init(_ link: inout FieldReader) throws(ReportFormatError) {
    self.init(
      step: try link.field("step", as: String.self),
      heldVia: try link.field("heldVia", as: LaunchReport.CriticalChain.Hold?.self),
      start: try link.field("start", as: Duration.self),
      end: try link.field("end", as: Duration.self),
      wait: try link.field("wait", as: Duration.self),
      work: try link.field("work", as: Duration.self))
  }
}

extension SplashTiming {
  fileprivate var reportJSON: JSONValue {
    [
      "contentAt": contentAt.reportJSON,
      "skeletonFrom": skeletonFrom.reportJSON,
    ]
  }

  /// Reads what reports write since `splash` existed, and tolerates anything else: it was
  /// added without a version of its own.
  fileprivate init?(_ splash: inout FieldReader) {
    guard splash.value.members != nil else { return nil }
    self.init(
      contentAt: splash.fieldIfPresent("contentAt", as: Duration.self),
      skeletonFrom: splash.fieldIfPresent("skeletonFrom", as: Duration.self))
  }
}

/// A report file that does not have the shape ``LaunchReport/jsonText`` writes.
package struct ReportFormatError: Error, Sendable, CustomStringConvertible {
  /// Where in the report.
  package var path: JSONPath
  /// What is wrong.
  package var message: String

  /// `steps[2].state: missing or malformed`.
  package var description: String { "\(path): \(message)" }
}

/// Reads the fields of one JSON object of a report, each as the type it is written as, and
/// names the path of the first that is missing or malformed.
///
/// A reader does not know where it is: an error names the field from the reader that found
/// it, and each array or object it is inside adds its own key on the way out. A path made for
/// every element read would cost an allocation each, in reports of 100,000 steps that are
/// almost never malformed.
private struct FieldReader {
  /// The object (or whatever stands where one should be).
  let value: JSONValue
  /// Where the search for the next key starts: fields are read in the order the report
  /// writes them, so each is usually the member after the last one found, where a search from
  /// the first member would compare half of an object's keys for each field.
  private var next = 0

  /// Reads the report's root.
  init(reportText: String) throws(ReportFormatError) {
    do {
      self.init(value: try JSONParser.parse(Array(reportText.utf8)).root)
    } catch {
      throw ReportFormatError(
        path: .root, message: "the report is not valid JSON: \(error.message)")
    }
  }

  init(value: JSONValue) {
    self.value = value
  }

  /// The value of the member `key`. A parsed object has each key once (the parser keeps the
  /// first of a key written twice), so the one found from the cursor is the only one.
  private mutating func lookup(_ key: String) -> JSONValue? {
    value.member(key, from: &next)
  }

  /// Whether the object has the member `key`, whatever its value.
  mutating func has(_ key: String) -> Bool {
    lookup(key) != nil
  }

  /// The field `key` as a `T`.
  mutating func field<T: ReportField>(
    _ key: String, as type: T.Type
  ) throws(ReportFormatError) -> T {
    guard let field = lookup(key).flatMap(T.init(reportJSON:)) else { throw malformed(key) }
    return field
  }

  /// The field `key` as a `T`, or `nil` when it is missing (or null, or anything else): for
  /// fields older reports lack.
  mutating func fieldIfPresent<T: ReportField>(_ key: String, as type: T.Type) -> T? {
    lookup(key).flatMap(T.init(reportJSON:))
  }

  /// The strings of the array `key`, anything else left out; none when it is missing.
  mutating func stringsIfPresent(_ key: String) -> [String] {
    lookup(key)?.elements?.compactMap(\.stringValue) ?? []
  }

  /// Each element of the array `key`, read by `read`.
  mutating func elements<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> [T] {
    guard let elements = lookup(key)?.elements else { throw malformed(key) }
    return try Self.read(elements, of: key, read)
  }

  /// Each element of the array `key`, read by `read`; none when it is missing (or anything
  /// else).
  mutating func elementsIfPresent<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> [T] {
    guard let elements = lookup(key)?.elements else { return [] }
    return try Self.read(elements, of: key, read)
  }

  /// Each of `elements`, the array `key`, read by `read`; an error inside one names `key` and
  /// its index.
  private static func read<T>(
    _ elements: [JSONValue], of key: String,
    _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> [T] {
    var values: [T] = []
    values.reserveCapacity(elements.count)
    for index in elements.indices {
      var element = FieldReader(value: elements[index])
      do {
        values.append(try read(&element))
      } catch {
        throw error.inside(.key(key), .index(index))
      }
    }
    return values
  }

  /// The object `key`, read by `read`.
  mutating func object<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> T {
    guard let object = lookup(key), object.members != nil else { throw malformed(key) }
    return try Self.read(object, of: key, read)
  }

  /// The object `key`, read by `read`; `nil` when it is missing or null: for parts older
  /// reports lack.
  mutating func objectIfPresent<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> T? {
    guard let object = lookup(key), object.kind != .null else { return nil }
    guard object.members != nil else { throw malformed(key) }
    return try Self.read(object, of: key, read)
  }

  /// The value of `key`, whatever it is (missing reads as null), read by `read`.
  mutating func member<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> T {
    try Self.read(lookup(key) ?? nil, of: key, read)
  }

  /// The value of `key`, whatever it is, read by `read`; `nil` when it is missing or null.
  mutating func memberIfPresent<T>(
    _ key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> T? {
    guard let member = lookup(key), member.kind != .null else { return nil }
    return try Self.read(member, of: key, read)
  }

  /// `value`, the member `key`, read by `read`; an error inside it names `key`.
  private static func read<T>(
    _ value: JSONValue, of key: String, _ read: (inout FieldReader) throws(ReportFormatError) -> T
  ) throws(ReportFormatError) -> T {
    var member = FieldReader(value: value)
    do {
      return try read(&member)
    } catch {
      throw error.inside(.key(key))
    }
  }

  /// The keys of this object, in order.
  var keys: [String] { value.members?.map(\.key) ?? [] }

  /// The error for the field `key`.
  func malformed(_ key: String) -> ReportFormatError {
    ReportFormatError(path: .root.appending(key), message: "missing or malformed")
  }
}

extension ReportFormatError {
  /// The error as seen from the array or object that holds where it was found.
  fileprivate func inside(_ components: JSONPath.Component...) -> ReportFormatError {
    ReportFormatError(path: JSONPath(components: components + path.components), message: message)
  }
}

/// A value a report writes as one JSON value and reads back from it: one declaration of its
/// form for both.
private protocol ReportField {
  /// The value `json` holds, or `nil` when it holds something else.
  init?(reportJSON json: JSONValue)
  /// The value as the report writes it.
  var reportJSON: JSONValue { get }
}

extension String: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    guard let string = json.stringValue else { return nil }
    self = string
  }

  fileprivate var reportJSON: JSONValue { JSONValue(.string(self)) }
}

/// Integers stay integers: read exactly from their text, written as their digits.
extension Int: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    guard let integer = json.exactInteger(Int.self) else { return nil }
    self = integer
  }

  fileprivate var reportJSON: JSONValue { JSONValue(integer: self) }
}

extension Bool: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    guard case .bool(let bool) = json.kind else { return nil }
    self = bool
  }

  fileprivate var reportJSON: JSONValue { JSONValue(.bool(self)) }
}

/// Times and durations as seconds since the launch started.
extension Duration: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    guard case .number(let seconds) = json.kind, let duration = DurationText.seconds(seconds)
    else { return nil }
    self = duration
  }

  fileprivate var reportJSON: JSONValue {
    // The text has six decimals at most: a time within half a microsecond of a whole second
    // is written as that second (`1`, not `1.0`), the way it is written again once read back.
    let microseconds = (seconds * 1e6).rounded()
    guard microseconds.truncatingRemainder(dividingBy: 1e6) == 0 else {
      return JSONValue(.number(seconds))
    }
    return JSONValue(.number(microseconds / 1e6))
  }
}

/// `null` for `nil`: a field that may be null is still required.
extension Optional: ReportField where Wrapped: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    if json.kind == .null {
      self = .none
    } else if let wrapped = Wrapped(reportJSON: json) {
      self = .some(wrapped)
    } else {
      return nil
    }
  }

  fileprivate var reportJSON: JSONValue { map(\.reportJSON) ?? nil }
}

/// An array is read only when every element is.
extension Array: ReportField where Element: ReportField {
  fileprivate init?(reportJSON json: JSONValue) {
    guard let elements = json.elements else { return nil }
    var array: [Element] = []
    array.reserveCapacity(elements.count)
    for element in elements {
      guard let read = Element(reportJSON: element) else { return nil }
      array.append(read)
    }
    self = array
  }

  fileprivate var reportJSON: JSONValue { JSONValue(.array(map(\.reportJSON))) }
}

/// Names written as their raw value.
extension ReportField where Self: RawRepresentable, RawValue == String {
  fileprivate init?(reportJSON json: JSONValue) {
    guard let name = json.stringValue else { return nil }
    self.init(rawValue: name)
  }

  fileprivate var reportJSON: JSONValue { JSONValue(.string(rawValue)) }
}

extension StepState: ReportField {}
extension LaunchOutcome: ReportField {}
extension WaitReason: ReportField {}
extension LaunchReport.CriticalChain.Hold: ReportField {}

extension LaunchContext {
  fileprivate func reportJSON(notes: [String]) -> JSONValue {
    [
      "reason": reason.rawValue.reportJSON,
      "prewarmed": isPrewarmed.reportJSON,
      "firstLaunch": isFirstLaunch.reportJSON,
      "afterUpgrade": isFirstLaunchAfterUpgrade.reportJSON,
      "launchNumber": launchNumber.reportJSON,
      "safeMode": isSafeMode.reportJSON,
      "notes": notes.reportJSON,
    ]
  }

  fileprivate init(_ context: inout FieldReader) throws(ReportFormatError) {
    self.init(
      reason: Reason(rawValue: try context.field("reason", as: String.self)),
      isPrewarmed: try context.field("prewarmed", as: Bool.self),
      isFirstLaunch: try context.field("firstLaunch", as: Bool.self),
      isFirstLaunchAfterUpgrade: try context.field("afterUpgrade", as: Bool.self),
      launchNumber: try context.field("launchNumber", as: Int.self),
      isSafeMode: try context.field("safeMode", as: Bool.self))
  }
}

extension AppInfo {
  fileprivate var reportJSON: JSONValue {
    ["version": version.reportJSON, "build": build.reportJSON]
  }

  fileprivate init(_ app: inout FieldReader) throws(ReportFormatError) {
    self.init(
      version: try app.field("version", as: String.self),
      build: app.fieldIfPresent("build", as: String.self))
  }
}

extension LaunchLabels {
  fileprivate var reportJSON: JSONValue {
    ["arm": arm.reportJSON, "device": device.reportJSON]
  }

  fileprivate init(_ labels: inout FieldReader) throws(ReportFormatError) {
    self.init(
      arm: labels.fieldIfPresent("arm", as: String.self),
      device: labels.fieldIfPresent("device", as: String.self))
  }
}

/// A wall-clock time as a report writes it: ISO 8601, UTC, to the microsecond
/// (`2026-11-23T13:57:26.123456Z`).
package enum ReportDate {
  /// The text of `date`.
  package static func text(_ date: Date) -> String {
    let seconds = date.timeIntervalSince1970
    var whole = time_t(seconds.rounded(.down))
    var micros = Int(((seconds - Double(whole)) * 1_000_000).rounded())
    if micros == 1_000_000 {
      whole += 1
      micros = 0
    }
    var parts = tm()
    gmtime_r(&whole, &parts)
    func digits(_ value: Int, _ count: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, count - text.count)) + text
    }
    return
      "\(digits(Int(parts.tm_year) + 1900, 4))-\(digits(Int(parts.tm_mon) + 1, 2))-\(digits(Int(parts.tm_mday), 2))T\(digits(Int(parts.tm_hour), 2)):\(digits(Int(parts.tm_min), 2)):\(digits(Int(parts.tm_sec), 2)).\(digits(micros, 6))Z"
  }

  /// The time `text` names, in the form ``text(_:)`` writes or without the fraction;
  /// `nil` for anything else.
  package static func date(_ text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      guard range.upperBound <= bytes.count else { return nil }
      var value = 0
      for byte in bytes[range] {
        guard byte >= 0x30, byte <= 0x39 else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
      bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
    else { return nil }
    var fraction = 0.0
    if bytes.count > 20 {
      guard bytes[19] == UInt8(ascii: "."), let digits = number(20..<(bytes.count - 1)) else {
        return nil
      }
      fraction = Double(digits) / pow(10, Double(bytes.count - 21))
    } else if bytes.count != 20 {
      return nil
    }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    let seconds = timegm(&parts)
    return Date(timeIntervalSince1970: Double(seconds) + fraction)
  }
}
