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

  @Test func leavesPrintableTextAlone() {
    let text = "Zoë's 📚 library — 1.5s ✓"
    #expect(TerminalText.escaped(text) == text)
  }
}
