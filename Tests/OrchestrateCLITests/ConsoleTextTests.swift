import Foundation
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

@Suite("Tables and timelines written for the console")
struct ConsoleTextTests {
  /// Texts a manifest or a plugin may put in a line: plain, escaped for a terminal (an escape
  /// sequence, a bidirectional override, a newline), wide, combining, trailing spaces.
  private static let texts = [
    "store", "a\u{1B}[2Jb", "x\u{202E}y", "名前", "e\u{301}", "line\nbreak", "n ", "",
    "\u{85}next", "tab\there",
  ]

  /// `lines` as ``Console/out(_:)`` prints each of them.
  private static func printed(_ lines: [String]) -> String {
    lines.map { TerminalText.escaped($0) + "\n" }.joined()
  }

  @Test func writesEachTimelineLineAsConsoleOutPrintsIt() {
    var steps: [LaunchReport.Step] = []
    for (index, text) in Self.texts.enumerated() {
      let start = Duration.milliseconds(index * 10)
      steps.append(
        .init(
          id: text, plugin: "p", state: .succeeded, start: start, end: start + .milliseconds(15),
          attempts: 1, usedFallback: false, error: nil))
      steps.append(
        .init(
          id: "failed \(index)", plugin: "p", state: .failed, start: start,
          end: start + .milliseconds(5), attempts: 2, usedFallback: false, error: text))
      steps.append(
        .init(
          id: "skipped \(index)", plugin: "p", state: .skipped, start: nil, end: nil, attempts: 0,
          usedFallback: false, error: text))
    }
    let report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .degraded, route: nil, duration: .milliseconds(120),
      milestones: [], criticalPath: [], steps: steps)
    var text = ConsoleText()
    Timeline.write(report, width: 12, to: &text)
    #expect(
      String(decoding: text.bytes, as: UTF8.self)
        == Self.printed(Timeline.render(report, width: 12)))
  }

  @Test(arguments: [false, true])
  func writesEachTableLineAsConsoleOutPrintsIt(plainOnly: Bool) {
    let texts = plainOnly ? ["store", "a b ", "", "-"] : Self.texts
    var rows: [[String]] = [["start", "id", "note"]]
    for (index, text) in texts.enumerated() {
      rows.append([TimeText.seconds(.milliseconds(index)), text, "\(text), \(index)"])
      rows.append([text, "short"])
    }
    var cells = TableCells()
    for row in rows {
      cells.startRow()
      for cell in row { cells.addCell { $0.append(contentsOf: cell.utf8) } }
    }
    var fromCells = ConsoleText()
    Table.write(cells, rightAligned: [0], indent: "  ", to: &fromCells)
    var fromRows = ConsoleText()
    Table.write(rows, rightAligned: [0], indent: "  ", to: &fromRows)
    let expected = Self.printed(Table.render(rows, rightAligned: [0]).map { "  " + $0 })
    #expect(String(decoding: fromCells.bytes, as: UTF8.self) == expected)
    #expect(String(decoding: fromRows.bytes, as: UTF8.self) == expected)
  }
}
