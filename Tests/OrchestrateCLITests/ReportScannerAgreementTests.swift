import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

/// `stats` reads reports with its scanner, `export otlp` with the scanner and then the report
/// reader (`LaunchReport(json:)`, `HistoryEntry.read`): the scanner must refuse every report the
/// reader refuses, or `stats` counts launches `export` cannot send. Every key of a report that
/// has every part, and of a history entry holding it, is removed or given a value of each
/// other type, and the two are asked.
@Suite("The scanner refuses what the report reader refuses")
struct ReportScannerAgreementTests {
  /// A format 6 report with each part the reader knows: a context, the app, labels, a pause,
  /// a signal, a splash, critical chains, a retried step with a wait and two attempts, and a
  /// cached step with its refresh.
  static let report = """
    { "version": 6, "manifest": "app.json", "name": "App", "outcome": "degraded",
      "route": null, "error": null, "startedAt": "2026-11-23T13:57:26.123456Z",
      "context": { "reason": "userTap", "prewarmed": false, "firstLaunch": true,
        "afterUpgrade": false, "launchNumber": 1, "safeMode": false, "notes": [] },
      "app": { "version": "1.2.0", "build": "7" }, "labels": { "arm": "a", "device": "phone" },
      "duration": 0.5, "wallDuration": 0.6, "sinceProcessStart": 0.01,
      "pauses": [ { "at": 0.1, "duration": 0.1 } ], "signals": { "consent": 0.05 },
      "milestones": { "firstFrame": 0.2, "interactive": null },
      "splash": { "contentAt": 0.3, "skeletonFrom": null },
      "criticalPath": ["store", "page"],
      "criticalChains": [ { "milestone": "firstFrame", "links": [
        { "step": "store", "heldVia": null, "start": 0, "end": 0.2, "wait": 0, "work": 0.2 },
        { "step": "page", "heldVia": "dependency", "start": 0.2, "end": 0.5, "wait": 0,
          "work": 0.3 } ] } ],
      "steps": [
        { "id": "store", "plugin": "store.init", "state": "succeeded", "start": 0, "end": 0.2,
          "attempts": 2, "usedFallback": false, "error": null, "notes": ["moved"], "ready": 0,
          "waits": [ { "reason": "backoff", "start": 0.05, "end": 0.1, "heldBy": [] } ],
          "work": [ { "attempt": 1, "start": 0, "end": 0.05 },
            { "attempt": 2, "start": 0.1, "end": 0.2 } ],
          "refresh": null, "reused": false, "priority": "critical", "deferUntil": null },
        { "id": "page", "plugin": "music.page", "state": "cached", "start": 0.2, "end": 0.2,
          "attempts": 0, "usedFallback": false, "error": null, "notes": [], "ready": 0.2,
          "waits": [], "work": [],
          "refresh": { "state": "succeeded", "start": 0.2, "end": 0.5, "attempts": 1,
            "error": null, "ready": 0.2,
            "waits": [ { "reason": "concurrency", "start": 0.2, "end": 0.25,
              "heldBy": ["store"] } ],
            "work": [ { "attempt": 1, "start": 0.25, "end": 0.5 } ] },
          "reused": false, "priority": "high", "deferUntil": "firstFrame" } ] }
    """

  static let entry = """
    { "orchestrateHistory": 1, "recordedAt": "2026-11-23T13:57:27.000000Z",
      "manifest": { "path": "app.json", "sha256": "abc" },
      "machine": { "host": "ci-1", "system": "Linux", "cores": 2 },
      "report": \(report) }
    """

  /// What a key is replaced with: each type of JSON value, and numbers a whole number, a
  /// time, a negative and a newer version would be.
  static var replacements: [Any?] {
    [nil, NSNull(), "x", "", 7, 1.5, -1, 0, true, [Any](), [String: Any]()]
  }

  /// Whether `export` reads `text`: as a history entry when it is marked as one, else as a
  /// report.
  static func readerAccepts(_ text: String) -> Bool {
    guard let root = try? JSONParser.parse(Array(text.utf8)).root else { return false }
    do {
      if try HistoryEntry.read(root) != nil { return true }
      _ = try LaunchReport(json: root)
      return true
    } catch {
      return false
    }
  }

  static func scannerAccepts(_ text: String) -> Bool {
    Array(text.utf8).withUnsafeBufferPointer { buffer in
      (try? ReportScanner.scan(buffer)) != nil
    }
  }

  /// Each way to change `value` at one place: the path, and the value changed.
  static func variants(of value: Any, at path: String = "") -> [(String, Any)] {
    var variants: [(String, Any)] = []
    if let object = value as? [String: Any] {
      for (key, member) in object {
        let place = path.isEmpty ? key : "\(path).\(key)"
        for replacement in replacements {
          var changed = object
          changed[key] = replacement
          variants.append(("\(place) = \(replacement.map { "\($0)" } ?? "(removed)")", changed))
        }
        for (inner, changedMember) in Self.variants(of: member, at: place) {
          var changed = object
          changed[key] = changedMember
          variants.append((inner, changed))
        }
      }
    } else if let array = value as? [Any] {
      for (index, element) in array.enumerated() {
        let place = "\(path)[\(index)]"
        for replacement in replacements.compactMap({ $0 }) {
          var changed = array
          changed[index] = replacement
          variants.append(("\(place) = \(replacement)", changed))
        }
        for (inner, changedElement) in Self.variants(of: element, at: place) {
          var changed = array
          changed[index] = changedElement
          variants.append((inner, changed))
        }
      }
    }
    return variants
  }

  @Test(arguments: ["report", "entry"])
  func noReportTheReaderRefusesPassesTheScanner(_ form: String) throws {
    let text = form == "report" ? Self.report : Self.entry
    #expect(Self.readerAccepts(text) && Self.scannerAccepts(text))
    let root = try JSONSerialization.jsonObject(with: Data(text.utf8))
    var refused = 0
    for (place, changed) in Self.variants(of: root) {
      let changedText = String(
        decoding: try JSONSerialization.data(withJSONObject: changed), as: UTF8.self)
      let reader = Self.readerAccepts(changedText)
      if !reader { refused += 1 }
      // The scanner may refuse more (a time out of bounds the reader takes), never less.
      #expect(reader || !Self.scannerAccepts(changedText), "\(form): \(place)")
    }
    #expect(refused > 100)
  }
}

extension ReportScannerAgreementTests {
  /// The reader reads the first of a key written twice (the parser keeps it): the scanner
  /// reads the first `version` too, so the two accept and refuse the same reports whatever
  /// the second says.
  @Test(arguments: ["report", "entry"])
  func aVersionWrittenTwiceIsReadAsItsFirstByBoth(_ form: String) throws {
    let values = ["6", "5", "1", "0", "-1", "7", "99", "6.0", "1.5", "\"6\"", "null", "true", "[]"]
    for first in values {
      for second in values {
        // Before every other key of the report, and after them all.
        let keys = Self.report.replacingOccurrences(of: #""version": 6, "#, with: "")
          .drop { $0 != "\"" }.dropLast()
        let report = #"{"version": \#(first), "# + keys + #", "version": \#(second)}"#
        let text =
          form == "report"
          ? report
          : Self.entry.replacingOccurrences(
            of: Self.report, with: report)
        #expect(
          Self.readerAccepts(text) == Self.scannerAccepts(text),
          "\(form): version \(first), then \(second)")
      }
    }
  }
}
