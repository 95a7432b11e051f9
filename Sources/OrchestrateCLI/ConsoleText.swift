/// Lines for the console, made safe for a terminal as ``Console/out(_:)`` makes them, built as
/// UTF-8 in one buffer and written in one go: a plan of 10,000 steps is 20,000 lines, and a
/// `String` for each, then another for the escaped text, cost more than drawing them.
struct ConsoleText {
  /// The lines so far, each ending with a newline.
  private(set) var bytes: [UInt8] = []

  /// Adds `line`, escaped, and a newline.
  mutating func add(_ line: String) {
    var line = line
    line.withUTF8 { add(line: $0) }
  }

  /// Makes room for `count` more bytes, so that a text of 20,000 lines is not copied as it
  /// grows.
  mutating func reserveCapacity(_ count: Int) {
    bytes.reserveCapacity(bytes.count + count)
  }

  /// Adds the UTF-8 text `line`, escaped, and a newline.
  ///
  /// - Parameter isKnownSafe: whether the caller knows that `line` holds nothing
  ///   ``TerminalText/escaped(_:keepingNewlines:)`` escapes (it is made of printable ASCII and
  ///   the caller's own glyphs), so that its bytes are not looked at again.
  mutating func add(line: UnsafeBufferPointer<UInt8>, isKnownSafe: Bool = false) {
    if isKnownSafe {
      bytes.append(contentsOf: line)
      bytes.append(UInt8(ascii: "\n"))
      return
    }
    if TerminalText.mayNeedEscaping(line) {
      bytes.append(contentsOf: TerminalText.escaped(String(decoding: line, as: UTF8.self)).utf8)
    } else {
      bytes.append(contentsOf: line)
    }
    bytes.append(UInt8(ascii: "\n"))
  }
}
