/// Text from a manifest, a file or a plugin made safe to print: a step id with an escape
/// sequence must not clear the screen, retitle the window or hide the lines before it.
package enum TerminalText {
  /// `text` with control characters written out the way Swift writes them (`\u{1B}`, `\r`,
  /// `\t`), newlines kept. Bidirectional overrides are escaped too, since they reorder what
  /// is shown.
  package static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      guard needsEscaping(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      }
    }
    return result
  }

  private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A: false
    case 0x00...0x1F, 0x7F...0x9F: true
    case 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
