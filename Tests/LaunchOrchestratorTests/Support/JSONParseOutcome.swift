@testable import LaunchJSON

/// What a parse gave, spelled out in full, to compare the parser with
/// ``ReferenceJSONParser``: values with their offsets and numbers' texts, keys as their bytes,
/// duplicate keys with their paths, or the error.
enum JSONParseOutcome {
  static func of(
    _ parse: ([UInt8]) throws(JSONSyntaxError) -> JSONDocument, _ bytes: [UInt8]
  ) -> String {
    do {
      let document = try parse(bytes)
      var text = ""
      describe(document.root, into: &text)
      for duplicate in document.duplicateKeys {
        text += "\ndup \(Array(duplicate.key.utf8)) at \(duplicate.offset) in "
        for component in duplicate.path.components {
          switch component {
          case .key(let key): text += "k\(Array(key.utf8))"
          case .index(let index): text += "i\(index)"
          }
        }
      }
      return text
    } catch {
      return "error \(error.offset): \(error.message)"
    }
  }

  private static func describe(_ value: JSONValue, into text: inout String) {
    text += "@\(value.offset.map(String.init) ?? "-")"
    switch value.kind {
    case .null: text += "null"
    case .bool(let bool): text += "\(bool)"
    case .number(let number): text += "n\(number.bitPattern)|\(value.numberText ?? "-")"
    case .string(let string): text += "s\(Array(string.utf8))"
    case .array(let elements):
      text += "["
      for element in elements {
        describe(element, into: &text)
        text += ","
      }
      text += "]"
    case .object(let members):
      text += "{"
      for member in members {
        text += "\(Array(member.key.utf8))@\(member.keyOffset.map(String.init) ?? "-"):"
        describe(member.value, into: &text)
        text += ","
      }
      text += "}"
    }
    if case .number = value.kind {
    } else if value.numberText != nil {
      text += "|text"
    }
  }
}
