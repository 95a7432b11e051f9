/// Text from a manifest, a file or a plugin made safe to print: a step id with an escape
/// sequence must not clear the screen, retitle the window or hide the lines before it.
package enum TerminalText {
  /// `text` with control characters written out the way Swift writes them (`\u{1B}`, `\r`,
  /// `\t`, `\n`). Bidirectional overrides are escaped too, since they reorder what is shown,
  /// and the Unicode line and paragraph separators, since they can start a line.
  ///
  /// - Parameter keepingNewlines: whether `text` is several lines of the CLI's own making
  ///   (help, a graph); otherwise it is one line, and a newline in it would let a step id
  ///   forge the lines after it.
  package static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
    func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
      scalar == "\n" ? !keepingNewlines : isControl(scalar)
    }
    guard mayNeedEscaping(text, keepingNewlines: keepingNewlines),
      text.unicodeScalars.contains(where: needsEscaping)
    else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      guard needsEscaping(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      }
    }
    return result
  }

  /// How many terminal columns `text` takes once printed as ``escaped(_:keepingNewlines:)``
  /// prints one line: a character a column, none for one that only adds marks to the one
  /// before (`é` written as `e` and U+0301), two for a wide one (CJK, an emoji), and an
  /// escaped control character as its escape's length. Printable ASCII, the usual case, is
  /// counted from its bytes.
  package static func columns(of text: String) -> Int {
    measured(text).columns
  }

  /// ``columns(of:)`` of `text`, and whether it is only printable ASCII (U+0020 to U+007E),
  /// which ``escaped(_:keepingNewlines:)`` leaves as it is.
  package static func measured(_ text: String) -> (columns: Int, isPrintableASCII: Bool) {
    let ascii = text.utf8.withContiguousStorageIfAvailable { bytes in
      isPrintableASCII(bytes) ? bytes.count : nil
    }
    if let count = ascii.flatMap({ $0 }) { return (count, true) }
    return (nonASCIIColumns(of: text), false)
  }

  /// ``columns(of:)`` of the UTF-8 text `bytes`, and whether it is only printable ASCII.
  package static func measured(
    utf8 bytes: UnsafeBufferPointer<UInt8>
  ) -> (columns: Int, isPrintableASCII: Bool) {
    if isPrintableASCII(bytes) { return (bytes.count, true) }
    return (nonASCIIColumns(of: String(decoding: bytes, as: UTF8.self)), false)
  }

  /// Whether every byte of `bytes` is printable ASCII, U+0020 to U+007E.
  private static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    bytes.allSatisfy { (0x20...0x7E).contains($0) }
  }

  /// ``columns(of:)`` counted character by character.
  private static func nonASCIIColumns(of text: String) -> Int {
    var columns = 0
    for character in text {
      var width = 0
      for scalar in character.unicodeScalars {
        if isControl(scalar) {
          columns += escaped(String(scalar)).count
        } else if isWide(scalar) {
          width = 2
        } else if !isZeroWidth(scalar) {
          width = max(width, 1)
        }
      }
      columns += width
    }
    return columns
  }

  /// `text` and the spaces that make it take `columns` columns (see ``columns(of:)``).
  package static func padded(_ text: String, to columns: Int) -> String {
    text + String(repeating: " ", count: max(0, columns - Self.columns(of: text)))
  }

  /// Whether `scalar` takes no column: a combining mark, a zero-width space or joiner, a
  /// variation selector.
  private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return true
    default: return (0xFE00...0xFE0F).contains(scalar.value)
    }
  }

  /// Whether `scalar` takes two columns: East Asian wide and full-width characters, and
  /// emoji shown as pictures (the ranges terminals draw wide).
  private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.properties.isEmojiPresentation { return true }
    switch scalar.value {
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x20000...0x3FFFD:
      return true
    default: return false
    }
  }

  /// JSON text with what ``escaped(_:keepingNewlines:)`` would escape written as JSON escapes
  /// (`\u202E`), so that it stays valid JSON: such characters can only be inside its strings,
  /// since the JSON writer escapes the ASCII controls and puts only newlines between tokens.
  package static func escapedJSON(_ json: String) -> String {
    guard json.unicodeScalars.contains(where: { $0 != "\n" && isControl($0) }) else { return json }
    var result = ""
    for scalar in json.unicodeScalars {
      if scalar != "\n", isControl(scalar) {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// Whether `text` may hold a scalar ``escaped(_:keepingNewlines:)`` escapes, read from its
  /// UTF-8 bytes: U+0000 to U+001F and U+007F are those bytes, U+0080 to U+009F are 0xC2 and
  /// 0x80 to 0x9F, U+2028 to U+202E are 0xE2 0x80 and 0xA8 to 0xAE, U+2066 to U+2069 are
  /// 0xE2 0x81 and 0xA6 to 0xA9. Decoding each line's scalars to look for them cost more than
  /// writing it (a 10,000-step plan prints 20,000 lines); `true` for a string whose bytes are
  /// not at hand, to decode.
  private static func mayNeedEscaping(_ text: String, keepingNewlines: Bool) -> Bool {
    let scan = text.utf8.withContiguousStorageIfAvailable {
      mayNeedEscaping($0, keepingNewlines: keepingNewlines)
    }
    return scan ?? true
  }

  /// Whether the UTF-8 text `bytes` may hold a scalar ``escaped(_:keepingNewlines:)`` escapes.
  package static func mayNeedEscaping(
    _ bytes: UnsafeBufferPointer<UInt8>, keepingNewlines: Bool = false
  ) -> Bool {
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case 0x20..<0x7F: continue
      case 0x0A: if !keepingNewlines { return true }
      case 0x00...0x1F, 0x7F: return true
      case 0xC2:
        if index < bytes.count, (0x80...0x9F).contains(bytes[index]) { return true }
      case 0xE2:
        guard index + 1 < bytes.count else { continue }
        let (second, third) = (bytes[index], bytes[index + 1])
        if second == 0x80, (0xA8...0xAE).contains(third) { return true }
        if second == 0x81, (0xA6...0xA9).contains(third) { return true }
        // Past a whole three-byte scalar (a timeline's blocks and rules are): its two
        // continuation bytes are none of the bytes above.
        if (0x80...0xBF).contains(second), (0x80...0xBF).contains(third) { index += 2 }
      default: continue
      }
    }
    return false
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: true
    // Line and paragraph separators: some terminals and viewers start a new line there.
    case 0x2028, 0x2029: true
    case 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
