import OrchestrateCLI
import Testing

@Suite("Terminal text")
struct TerminalTextTests {
  @Test func writesControlCharactersOutTheWaySwiftDoes() {
    #expect(TerminalText.escaped("a\u{1B}[2Jb") == #"a\u{1B}[2Jb"#)
    #expect(TerminalText.escaped("bell\u{07}\u{7F}") == #"bell\u{7}\u{7F}"#)
    #expect(TerminalText.escaped("csi\u{9B}31m") == #"csi\u{9B}31m"#)
    #expect(TerminalText.escaped("tab\there\rback") == #"tab\there\rback"#)
    #expect(TerminalText.escaped("\u{202E}txt.exe") == #"\u{202E}txt.exe"#)
    #expect(TerminalText.escaped("line\u{2028}para\u{2029}") == #"line\u{2028}para\u{2029}"#)
  }

  @Test func escapesNewlinesInALineButKeepsThemInText() {
    #expect(TerminalText.escaped("one\ntwo") == #"one\ntwo"#)
    #expect(TerminalText.escaped("one\ntwo\u{1B}", keepingNewlines: true) == "one\ntwo\\u{1B}")
  }

  /// Names are measured in the terminal's columns, as printed: tables, the timeline and the
  /// live display pad by this, so a CJK id or an escaped control no longer shifts its row.
  @Test func measuresTextInTerminalColumnsAsPrinted() {
    #expect(TerminalText.columns(of: "store") == 5)
    #expect(TerminalText.columns(of: "日本語ステップ") == 14)
    #expect(TerminalText.columns(of: "e\u{301}clair") == 6)
    #expect(TerminalText.columns(of: "🚀 go") == 5)
    #expect(TerminalText.columns(of: "👨‍👩‍👧") == 2)
    #expect(TerminalText.columns(of: "a\u{1B}b") == 2 + TerminalText.escaped("\u{1B}").count)
    #expect(TerminalText.columns(of: "ｆｕｌｌ") == 8)
    #expect(TerminalText.padded("日本", to: 6) == "日本  ")
    #expect(TerminalText.padded("e\u{301}", to: 3) == "e\u{301}  ")
    #expect(TerminalText.padded("toolong", to: 3) == "toolong")
  }

  @Test func leavesPrintableTextAlone() {
    let text = "Zoë's 📚 library — 1.5s ✓"
    #expect(TerminalText.escaped(text) == text)
  }

  /// The quick scan, which steps over a timeline's three-byte glyphs whole, answers as a
  /// byte-by-byte scan does, on any bytes: text that is mostly glyphs and ASCII with the
  /// escaped scalars mixed in, cut anywhere, and bytes that are not UTF-8.
  @Test func theQuickScanAnswersAsAByteByByteScan() {
    func byteByByte(_ bytes: [UInt8], keepingNewlines: Bool) -> Bool {
      for index in bytes.indices {
        switch bytes[index] {
        case 0x0A: if !keepingNewlines { return true }
        case 0x00...0x1F, 0x7F: return true
        case 0xC2:
          if index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) { return true }
        case 0xE2:
          guard index + 2 < bytes.count else { continue }
          let (second, third) = (bytes[index + 1], bytes[index + 2])
          if second == 0x80, (0xA8...0xAE).contains(third) { return true }
          if second == 0x81, (0xA6...0xA9).contains(third) { return true }
        default: continue
        }
      }
      return false
    }
    let pieces = [
      "a", " ", "█", "░", "─", "│", "é", "😀", "\u{1B}", "\n", "\u{7F}", "\u{85}", "\u{9B}",
      "\u{2028}", "\u{2029}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{2027}", "\u{2030}",
      "\u{2080}",
    ].map { Array($0.utf8) }
    var state: UInt64 = 24
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    for round in 0..<40_000 {
      var bytes = (0..<next(12)).flatMap { _ in pieces[next(pieces.count)] }
      // Cut anywhere, or bytes that are not UTF-8 at all.
      if round % 3 == 1, !bytes.isEmpty { bytes.removeFirst(next(bytes.count)) }
      if round % 3 == 2 { bytes = (0..<next(8)).map { _ in UInt8(next(256)) } }
      for keepingNewlines in [false, true] {
        let quick = bytes.withUnsafeBufferPointer {
          TerminalText.mayNeedEscaping($0, keepingNewlines: keepingNewlines)
        }
        #expect(quick == byteByByte(bytes, keepingNewlines: keepingNewlines), "\(bytes)")
      }
    }
  }
}
