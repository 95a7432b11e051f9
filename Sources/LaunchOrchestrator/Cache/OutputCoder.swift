import Foundation

/// What an entry must match to be served for a step: its kind's output type (through the
/// coder) and its params.
struct CacheKey: Sendable {
  let coder: OutputCoder
  /// The step's params, as ``OutputCache/fingerprint(of:)`` writes them.
  let params: String
}

/// Turns a step kind's output into JSON and back, for kinds whose output is `Codable`: what
/// lets a step's output outlive the launch that produced it.
struct OutputCoder: Sendable {
  /// The output type's full name, stored with each entry so that an entry of another type is
  /// recognized before it is decoded.
  let typeName: String
  let encode: @Sendable (any Sendable) throws -> Data
  let decode: @Sendable (Data) throws -> any Sendable

  /// The coder for `Output`, or `nil` when it is not `Codable`.
  init?<Output: Sendable>(_ type: Output.Type) {
    guard type is any Codable.Type else { return nil }
    typeName = Self.stableName(of: type)
    encode = { value in
      guard let value = value as? any Encodable else {
        throw StepFailure("the output is a \(Swift.type(of: value)), not a \(Output.self)")
      }
      return try JSONEncoder().encode(value)
    }
    decode = { data in
      // Checked again here rather than captured: metatypes of arbitrary types are not Sendable.
      guard let decodable = Output.self as? any Decodable.Type,
        let output = try JSONDecoder().decode(decodable, from: data) as? Output
      else {
        throw StepFailure("\(Output.self) is not Decodable")
      }
      return output
    }
  }

  /// The type's full name without the `(unknown context at $1234abcd)` that private types get:
  /// that is an address, which changes from one launch to the next.
  static func stableName<T>(of type: T.Type) -> String {
    var name = Substring(String(reflecting: type))
    var stable = ""
    while let open = name.range(of: "(unknown context at $") {
      stable += name[..<open.lowerBound]
      guard let close = name[open.upperBound...].firstIndex(of: ")") else { break }
      name = name[name.index(after: close)...]
      if name.first == "." { name = name.dropFirst() }
    }
    return stable + name
  }
}
