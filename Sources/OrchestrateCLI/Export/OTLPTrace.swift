import Foundation
import LaunchJSON
import LaunchOrchestrator

/// Launch reports as OpenTelemetry traces: an OTLP/JSON `ExportTraceServiceRequest`, as any
/// OTLP collector takes it (`POST /v1/traces`), following OpenTelemetry's JSON mapping (ids
/// in hexadecimal, times as strings of nanoseconds since 1970, enums as numbers).
///
/// Each launch is one trace with its own resource (`service.name` the manifest's name,
/// `service.version` the app's): a root span for the launch, and a child span for each
/// attempt of each step and of each cached step's refresh. Milestones, pauses and steps
/// served from their cache are events of the root span. Report times are active time; they
/// are placed on the wall clock from the report's `startedAt`, each pause adding its length.
/// Ids are derived from the report's text, so exporting a report twice gives the same trace
/// (and `export` sends a report given twice once).
enum OTLPTrace {
  /// One report, and when its launch started when the report does not say.
  struct Launch {
    let report: LaunchReport
    let fallbackStart: Date
    /// The trace's id (``traceID(of:)``), made once: it writes the whole report's text.
    let traceID: String

    init(report: LaunchReport, fallbackStart: Date) {
      self.report = report
      self.fallbackStart = fallbackStart
      traceID = OTLPTrace.traceID(of: report)
    }
  }

  /// The trace id of `report`: 16 bytes of the SHA-256 of its text, in hexadecimal.
  static func traceID(of report: LaunchReport) -> String {
    String(SHA256.hex(of: Array(report.jsonText.utf8)).prefix(32))
  }

  /// Why `report` cannot be a trace, if it cannot: a `startedAt` at 1970's first second or
  /// before is nanosecond 0, which OTLP reads as "unset", and a collector drops or misplaces
  /// the spans.
  static func refusal(of report: LaunchReport) -> String? {
    guard let start = report.startedAt, start.timeIntervalSince1970 < 1 else { return nil }
    return
      "its 'startedAt' is '\(ReportDate.text(start))', which OTLP would read as an unset time (nanosecond 0); fix the device's clock or remove 'startedAt'"
  }

  static func request(_ launches: [Launch]) -> JSONValue {
    ["resourceSpans": JSONValue(.array(launches.map(resourceSpans)))]
  }

  /// The compact text of ``request(_:)`` for the launches `next` gives until it gives `nil`,
  /// and a newline, handed to `write` piece by piece: the request's opening, then each
  /// launch's element of `resourceSpans` as soon as it is made, before the next launch is
  /// asked for, so that one launch is held at a time however many there are.
  static func writeRequest<Failure: Error>(
    _ next: () -> Launch?, to write: (String) throws(Failure) -> Void
  ) throws(Failure) {
    // `JSONWriter.compact`'s spelling: ", " between elements, ": " after a key.
    try write(#"{"resourceSpans": ["#)
    var first = true
    while let launch = next() {
      if !first { try write(", ") }
      first = false
      try write(JSONWriter.compact(resourceSpans(launch)))
    }
    try write("]}\n")
  }

  private static func resourceSpans(_ launch: Launch) -> JSONValue {
    let report = launch.report
    let start = report.startedAt ?? launch.fallbackStart
    let traceID = launch.traceID
    let rootID = spanID(traceID, "launch")
    var resource = [attribute("service.name", report.name)]
    if let app = report.app { resource.append(attribute("service.version", app.version)) }
    var spans = [rootSpan(report, traceID: traceID, spanID: rootID, start: start)]
    for (index, step) in report.steps.enumerated() {
      for work in step.work {
        spans.append(
          attemptSpan(
            step, work: work, refresh: nil, report: report, start: start, traceID: traceID,
            parent: rootID, key: "step/\(index)/\(work.attempt)"))
      }
      if let refresh = step.refresh {
        for work in refresh.work {
          spans.append(
            attemptSpan(
              step, work: work, refresh: refresh, report: report, start: start, traceID: traceID,
              parent: rootID, key: "refresh/\(index)/\(work.attempt)"))
        }
      }
    }
    return [
      "resource": ["attributes": JSONValue(.array(resource))],
      "scopeSpans": [
        [
          "scope": [
            "name": "LaunchOrchestrator", "version": JSONValue(.string(Orchestrate.version)),
          ],
          "spans": JSONValue(.array(spans)),
        ]
      ],
    ]
  }

  private static func rootSpan(
    _ report: LaunchReport, traceID: String, spanID: String, start: Date
  ) -> JSONValue {
    var attributes = [
      attribute("launch.name", report.name), attribute("launch.manifest", report.manifest),
      attribute("launch.outcome", report.outcome.rawValue),
    ]
    if let route = report.route { attributes.append(attribute("launch.route", route.name)) }
    if let error = report.error { attributes.append(attribute("launch.error", error)) }
    if let app = report.app {
      attributes.append(attribute("app.version", app.version))
      if let build = app.build { attributes.append(attribute("app.build", build)) }
    }
    if let context = report.context {
      attributes += [
        attribute("launch.reason", context.reason.rawValue),
        attribute("launch.prewarmed", context.isPrewarmed),
        attribute("launch.first_launch", context.isFirstLaunch),
        attribute("launch.after_upgrade", context.isFirstLaunchAfterUpgrade),
        attribute("launch.number", context.launchNumber),
        attribute("launch.safe_mode", context.isSafeMode),
      ]
    }
    if let arm = report.labels?.arm { attributes.append(attribute("launch.arm", arm)) }
    if let device = report.labels?.device { attributes.append(attribute("launch.device", device)) }
    if let since = report.sinceProcessStart {
      attributes.append(attribute("launch.since_process_start_s", since.seconds))
    }
    var events: [JSONValue] = report.milestones.compactMap { milestone in
      milestone.time.map { time in
        event(
          "milestone \(milestone.name)", at: wall(time, report, start),
          [attribute("launch.milestone", milestone.name)])
      }
    }
    events += report.pauses.map { pause in
      event(
        "paused", at: wall(pause.at, report, start),
        [attribute("launch.pause.duration_s", pause.duration.seconds)])
    }
    events += report.steps.filter { $0.state == .cached }.map { step in
      event(
        "served from cache", at: wall(step.start ?? .zero, report, start),
        [attribute("launch.step.id", step.id)])
    }
    let failed = report.outcome == .failed
    return span(
      traceID: traceID, spanID: spanID, parent: nil, name: "launch \(report.name)",
      start: nanoseconds(start), end: nanoseconds(wall(report.duration, report, start)),
      attributes: attributes, events: events,
      status: failed ? (2, report.error ?? "the launch failed") : (1, nil))
  }

  private static func attemptSpan(
    _ step: LaunchReport.Step, work: LaunchReport.Work, refresh: LaunchReport.Refresh?,
    report: LaunchReport, start: Date, traceID: String, parent: String, key: String
  ) -> JSONValue {
    let state = refresh?.state ?? step.state
    let attempts = refresh?.attempts ?? step.attempts
    let isLast = work.attempt == attempts
    var attributes = [
      attribute("launch.step.id", step.id), attribute("launch.step.plugin", step.plugin),
      attribute("launch.step.state", state.rawValue),
      attribute("launch.step.attempt", work.attempt),
      attribute("launch.step.attempts", attempts),
    ]
    if let priority = step.priority {
      attributes.append(attribute("launch.step.priority", priority.description))
    }
    if let deferUntil = step.deferUntil {
      attributes.append(attribute("launch.step.defer_until", deferUntil))
    }
    if refresh != nil { attributes.append(attribute("launch.step.refresh", true)) }
    if step.usedFallback, isLast { attributes.append(attribute("launch.step.fallback", true)) }
    if let ready = refresh?.ready ?? step.ready, work.attempt == 1 {
      attributes.append(attribute("launch.step.wait_s", max(.zero, work.start - ready).seconds))
    }
    // OTLP status codes: 0 unset (a cancelled step), 1 ok, 2 error.
    let status: (Int, String?) =
      if !isLast {
        (2, "attempt \(work.attempt) of \(attempts) did not succeed")
      } else if state == .failed || state == .timedOut {
        (2, refresh?.error ?? step.error ?? state.rawValue)
      } else if state == .succeeded || state == .cached {
        (1, nil)
      } else {
        (0, nil)
      }
    return span(
      traceID: traceID, spanID: spanID(traceID, key), parent: parent,
      name: refresh == nil ? step.id : "\(step.id) (refresh)",
      start: nanoseconds(wall(work.start, report, start)),
      end: nanoseconds(wall(work.end, report, start)), attributes: attributes, events: [],
      status: status)
  }

  private static func span(
    traceID: String, spanID: String, parent: String?, name: String, start: String, end: String,
    attributes: [JSONValue], events: [JSONValue], status: (code: Int, message: String?)
  ) -> JSONValue {
    var members = [
      JSONMember(key: "traceId", value: JSONValue(.string(traceID))),
      JSONMember(key: "spanId", value: JSONValue(.string(spanID))),
    ]
    if let parent {
      members.append(JSONMember(key: "parentSpanId", value: JSONValue(.string(parent))))
    }
    members += [
      JSONMember(key: "name", value: JSONValue(.string(name))),
      // SPAN_KIND_INTERNAL: work inside the app.
      JSONMember(key: "kind", value: 1),
      JSONMember(key: "startTimeUnixNano", value: JSONValue(.string(start))),
      JSONMember(key: "endTimeUnixNano", value: JSONValue(.string(end))),
      JSONMember(key: "attributes", value: JSONValue(.array(attributes))),
      JSONMember(key: "events", value: JSONValue(.array(events))),
    ]
    var statusMembers = [JSONMember(key: "code", value: JSONValue(integer: status.code))]
    if let message = status.message {
      statusMembers.append(JSONMember(key: "message", value: JSONValue(.string(message))))
    }
    members.append(JSONMember(key: "status", value: JSONValue(.object(statusMembers))))
    return JSONValue(.object(members))
  }

  private static func event(_ name: String, at time: Date, _ attributes: [JSONValue])
    -> JSONValue
  {
    [
      "timeUnixNano": JSONValue(.string(nanoseconds(time))),
      "name": JSONValue(.string(name)),
      "attributes": JSONValue(.array(attributes)),
    ]
  }

  /// An attribute: `{"key": ..., "value": {"stringValue": ...}}`.
  private static func attribute(_ key: String, _ value: some AttributeValue) -> JSONValue {
    ["key": JSONValue(.string(key)), "value": value.otlpValue]
  }

  /// The wall-clock time of `time`, an active time of `report`: the launch's start, plus the
  /// time, plus every pause that began before it.
  private static func wall(_ time: Duration, _ report: LaunchReport, _ start: Date) -> Date {
    let paused = report.pauses.filter { $0.at < time }.reduce(Duration.zero) { $0 + $1.duration }
    return start.addingTimeInterval((time + paused).seconds)
  }

  /// Nanoseconds since 1970, as a decimal string (OTLP's `fixed64` in JSON). Reports are
  /// bounded where they are read (``ReportScanner/latestStart``); the clamp keeps a time
  /// from elsewhere (a machine's clock) from trapping.
  private static func nanoseconds(_ date: Date) -> String {
    let seconds = min(max(date.timeIntervalSince1970, 0), 1.8e10)
    let whole = seconds.rounded(.down)
    let fraction = UInt64(((seconds - whole) * 1e9).rounded())
    return String(UInt64(whole) * 1_000_000_000 + min(fraction, 999_999_999))
  }

  /// Eight bytes of SHA-256 of the trace and `key`, in hexadecimal.
  private static func spanID(_ traceID: String, _ key: String) -> String {
    String(SHA256.hex(of: Array("\(traceID)/\(key)".utf8)).prefix(16))
  }
}

/// A value an OTLP attribute holds.
private protocol AttributeValue {
  var otlpValue: JSONValue { get }
}

extension String: AttributeValue {
  fileprivate var otlpValue: JSONValue { ["stringValue": JSONValue(.string(self))] }
}

extension Bool: AttributeValue {
  fileprivate var otlpValue: JSONValue { ["boolValue": JSONValue(.bool(self))] }
}

/// `int64` is a string in JSON.
extension Int: AttributeValue {
  fileprivate var otlpValue: JSONValue { ["intValue": JSONValue(.string(String(self)))] }
}

extension Double: AttributeValue {
  fileprivate var otlpValue: JSONValue { ["doubleValue": JSONValue(.number(self))] }
}
