import Foundation
import LaunchJSON
import LaunchOrchestrator

/// One run kept in a history folder: the report, wrapped with what the report itself does
/// not say: when the run was recorded, which bytes of the manifest it ran, and on what machine.
///
/// ```json
/// { "orchestrateHistory": 1, "recordedAt": "2026-11-23T13:57:26.123456Z",
///   "manifest": { "path": "manifests/app.json", "sha256": "9f86d0..." },
///   "machine": { "host": "build-7", "system": "Linux 6.8.0 x86_64", "cores": 2 },
///   "report": { ... the report, as --report writes it ... } }
/// ```
package struct HistoryEntry: Sendable {
  /// The format's version, under the key that marks a file as an entry.
  static let formatKey = "orchestrateHistory"
  static let formatVersion = 1

  /// When the run was recorded, as written: ISO 8601, UTC, to the microsecond.
  package var recordedAt: String
  /// The manifest as the user named it.
  package var manifestPath: String
  /// SHA-256 of the manifest's bytes, in hexadecimal.
  package var manifestHash: String
  /// Where it ran.
  package var machine: Machine
  /// What happened.
  package var report: LaunchReport

  /// Wraps a report.
  package init(
    recordedAt: String, manifestPath: String, manifestHash: String, machine: Machine,
    report: LaunchReport
  ) {
    self.recordedAt = recordedAt
    self.manifestPath = manifestPath
    self.manifestHash = manifestHash
    self.machine = machine
    self.report = report
  }

  /// The entry as pretty-printed JSON.
  package var jsonText: String {
    JSONWriter.prettyPrinted([
      Self.formatKey: JSONValue(integer: Self.formatVersion),
      "recordedAt": JSONValue(.string(recordedAt)),
      "manifest": [
        "path": JSONValue(.string(manifestPath)), "sha256": JSONValue(.string(manifestHash)),
      ],
      "machine": [
        "host": JSONValue(.string(machine.host)), "system": JSONValue(.string(machine.system)),
        "cores": JSONValue(integer: machine.cores),
      ],
      "report": report.json,
    ])
  }

  /// Reads an entry, or `nil` when the JSON is not one (it lacks the marking key): a plain
  /// report, say.
  /// - Throws: a message saying what is wrong with a file that is marked as an entry.
  static func read(_ root: JSONValue) throws(HistoryFormatError) -> HistoryEntry? {
    guard let version = root[formatKey] else { return nil }
    guard version.exactInteger(Int.self) == formatVersion else {
      throw HistoryFormatError(
        "it is a history entry of another format (\(formatKey) is not \(formatVersion)); a newer orchestrate wrote it"
      )
    }
    func text(_ value: JSONValue?, _ name: String) throws(HistoryFormatError) -> String {
      guard let string = value?.stringValue else {
        throw HistoryFormatError("its \(name) is missing or not a string")
      }
      return string
    }
    guard let reportValue = root["report"], reportValue.members != nil else {
      throw HistoryFormatError("it has no report")
    }
    let report: LaunchReport
    do {
      report = try LaunchReport(json: reportValue)
    } catch {
      throw HistoryFormatError("its report is damaged (report.\(error))")
    }
    guard let cores = root["machine"]?["cores"]?.exactInteger(Int.self) else {
      throw HistoryFormatError("its machine.cores is missing or not a whole number")
    }
    return HistoryEntry(
      recordedAt: try text(root["recordedAt"], "recordedAt"),
      manifestPath: try text(root["manifest"]?["path"], "manifest.path"),
      manifestHash: try text(root["manifest"]?["sha256"], "manifest.sha256"),
      machine: Machine(
        host: try text(root["machine"]?["host"], "machine.host"),
        system: try text(root["machine"]?["system"], "machine.system"), cores: cores),
      report: report)
  }
}

/// Why a file marked as a history entry cannot be read.
struct HistoryFormatError: Error, CustomStringConvertible {
  /// What is wrong, to follow "it": `it is not valid JSON (...)`.
  var message: String

  /// The message, as a note that quotes the error prints it.
  var description: String { message }

  init(_ message: String) {
    self.message = message
  }
}
