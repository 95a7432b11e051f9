import Foundation
import LaunchJSON
import LaunchOrchestrator

/// A JSON file a gate reads (app metadata, session, profile), with errors that name the file
/// and the field.
struct GateFile {
  let url: URL
  let root: JSONValue

  /// The largest file a gate reads: app metadata, a session or a profile is a few kilobytes.
  static let maximumSize = 1 << 20

  /// Reads the file; `nil` when it does not exist (a link to nothing, or a loop of links,
  /// included). A link is followed to its file, read through one descriptor: a FIFO at the
  /// path is refused, never waited on.
  static func read(_ url: URL) throws -> GateFile? {
    guard FileManager.default.fileExists(atPath: url.path) else { return nil }
    let bytes: Data
    do {
      // Gone since the look: as if it had not been there.
      guard
        let data = try SafeFiles.contentsOfRegularFile(
          at: url.resolvingSymlinksInPath(), limit: maximumSize)
      else { return nil }
      bytes = data
    } catch {
      throw StepFailure("\(error); a gate needs a readable JSON file of at most 1 MiB there")
    }
    let document: JSONDocument
    do {
      document = try JSONParser.parse(Array(bytes))
    } catch {
      throw StepFailure("'\(url.path)' is not valid JSON: \(error.message)")
    }
    guard document.root.members != nil else {
      throw StepFailure(
        "'\(url.path)' must hold a JSON object, not \(document.root.typeDescription)")
    }
    return GateFile(url: url, root: document.root)
  }

  /// Reads the file, which must exist.
  static func require(_ url: URL, what: String) throws -> GateFile {
    guard let file = try read(url) else {
      throw StepFailure("the \(what) file '\(url.path)' does not exist")
    }
    return file
  }

  func bool(_ key: String) throws -> Bool? {
    guard let value = root[key], value.kind != .null else { return nil }
    guard case .bool(let bool) = value.kind else { throw mistyped(key, "true or false", value) }
    return bool
  }

  func string(_ key: String) throws -> String? {
    guard let value = root[key], value.kind != .null else { return nil }
    guard let string = value.stringValue else { throw mistyped(key, "a string", value) }
    return string
  }

  func strings(_ key: String) throws -> [String]? {
    guard let value = root[key], value.kind != .null else { return nil }
    guard let elements = value.elements else { throw mistyped(key, "an array of strings", value) }
    let strings = elements.compactMap(\.stringValue)
    guard strings.count == elements.count else { throw mistyped(key, "an array of strings", value) }
    return strings
  }

  private func mistyped(_ key: String, _ expected: String, _ value: JSONValue) -> StepFailure {
    StepFailure("'\(key)' in '\(url.path)' must be \(expected), not \(value.typeDescription)")
  }
}
