import Foundation
import LaunchJSON
import LaunchOrchestrator

/// The values an app saved last session (the scrolled-to result, the selected tab), as
/// `state.restore` hands them to the app and as ``LaunchStateFile`` saves them.
///
/// Each value is kept as the JSON the app's `Encodable` type wrote, and decoded only when the
/// app asks for it with the type it expects:
///
/// ```swift
/// let restored = launch.output(of: "restore", as: RestoredState.self) ?? RestoredState()
/// let anchor = restored.value(for: "scrollAnchor", as: String.self)   // nil if absent
/// ```
public struct RestoredState: Sendable, Equatable {
  /// Each key's value as compact JSON text.
  private var values: [String: String]

  /// An empty state: nothing was saved, or what was saved could not be read.
  public init() {
    values = [:]
  }

  init(values: [String: String]) {
    self.values = values
  }

  /// The saved keys, sorted.
  public var keys: [String] { values.keys.sorted() }

  /// Whether nothing was restored.
  public var isEmpty: Bool { values.isEmpty }

  /// The value saved for `key`, decoded as `T`; `nil` when no value was saved for `key` or
  /// it was saved as another type (a number read as a `String`), never a crash.
  public func value<T: Decodable>(for key: String, as type: T.Type = T.self) -> T? {
    guard let text = values[key] else { return nil }
    return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
  }

  /// The whole state decoded as the app's own `Decodable` type, whose properties are the
  /// keys; `nil` when it does not decode (a key saved with another type, a missing key that
  /// is not optional).
  public func decode<T: Decodable>(as type: T.Type = T.self) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(jsonText.utf8))
  }

  /// Sets the value saved for `key`; `nil` removes it.
  ///
  /// - Throws: `EncodingError` when `value` cannot be encoded as JSON (a `Double.nan`).
  public mutating func set<T: Encodable>(_ value: T?, for key: String) throws {
    guard let value else {
      values[key] = nil
      return
    }
    values[key] = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
  }

  /// The state as the JSON object the state file holds, keys sorted, one per line.
  var jsonText: String {
    guard !values.isEmpty else { return "{}\n" }
    let members = keys.map { key in
      "  " + JSONWriter.compact(JSONValue(.string(key))) + ": " + values[key, default: "null"]
    }
    return "{\n" + members.joined(separator: ",\n") + "\n}\n"
  }

  /// Only the values of `keys`, in any order.
  func keeping(_ keys: [String]) -> RestoredState {
    RestoredState(values: values.filter { keys.contains($0.key) })
  }

  /// The state held by a parsed JSON object, each value written back as compact JSON with
  /// its numbers exactly as the file wrote them.
  init(object members: [JSONMember]) {
    var values: [String: String] = [:]
    for member in members { values[member.key] = JSONWriter.compact(member.value) }
    self.values = values
  }
}
