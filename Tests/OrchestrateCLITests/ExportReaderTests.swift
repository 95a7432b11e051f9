import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The parts of `export otlp` that keep its memory to one launch's: the request written
/// launch by launch, JSON Lines read line by line, and the file written by pieces into the
/// temporary file that replaces it.
@Suite("export otlp's parts, one launch at a time")
struct ExportReaderTests {
  /// A report of `steps` steps named `name`.
  private static func launch(_ name: String, steps: Int = 2) -> OTLPTrace.Launch {
    let report = LaunchReport(
      manifest: "app.json", name: name, outcome: .succeeded, route: nil, duration: .seconds(1),
      milestones: [.init(name: "interactive", time: .milliseconds(800))],
      criticalPath: ["step0"],
      steps: (0..<steps).map { index in
        LaunchReport.Step(
          id: "step\(index)", plugin: "simulate", state: .succeeded, start: .zero,
          end: .milliseconds(100), attempts: 1, usedFallback: false, error: nil, ready: .zero)
      })
    return OTLPTrace.Launch(report: report, fallbackStart: Date(timeIntervalSince1970: 1.8e9))
  }

  @Test func theRequestIsWrittenLaunchByLaunchAsTheWholeOneIs() throws {
    let launches = (0..<4).map { Self.launch("App\($0)", steps: $0 + 1) }
    var events: [String] = []
    var text = ""
    var given = 0
    OTLPTrace.writeRequest(
      {
        guard given < launches.count else { return nil }
        events.append("asked for launch \(given)")
        given += 1
        return launches[given - 1]
      },
      to: { piece in
        // Each launch's element names its service: which launch it is.
        let launch = launches.indices.last { piece.contains(#""stringValue": "App\#($0)""#) }
        events.append(launch.map { "wrote launch \($0)" } ?? "wrote '\(piece)'")
        text += piece
      })
    #expect(text == JSONWriter.compact(OTLPTrace.request(launches)) + "\n")
    // Each launch is written before the next is asked for: none is held for later.
    #expect(
      events == [
        #"wrote '{"resourceSpans": ['"#, "asked for launch 0", "wrote launch 0",
        "asked for launch 1", "wrote ', '", "wrote launch 1", "asked for launch 2",
        "wrote ', '", "wrote launch 2", "asked for launch 3", "wrote ', '", "wrote launch 3",
        "wrote ']}\n'",
      ])
    var none = ""
    OTLPTrace.writeRequest({ nil }, to: { none += $0 })
    #expect(none == JSONWriter.compact(OTLPTrace.request([])) + "\n")
  }

  @Test(arguments: [1, 2, 3, 7, 64, 1 << 20])
  func linesAreThoseOfTheWholeFileWhateverTheBufferSize(_ bufferSize: Int) throws {
    let folder = try TemporaryFolder()
    let texts = [
      "", "\n", "a", "a\n", "\n\na", "one\ntwo\r\nthree", "one\n\ntwo\n\n",
      String(repeating: "long line ", count: 50) + "\nshort\n" + String(repeating: "x", count: 300),
    ]
    for (index, text) in texts.enumerated() {
      let path = try folder.write("\(index).jsonl", text)
      let descriptor = open(path, O_RDONLY)
      try #require(descriptor >= 0)
      let reader = JSONLinesReader(descriptor: descriptor, limit: 1_000, bufferSize: bufferSize)
      var lines: [[UInt8]] = []
      var numbers: [Int] = []
      while let line = try reader.next() {
        guard case .text(let bytes) = line else {
          Issue.record("no line is over the limit")
          break
        }
        lines.append(bytes)
        numbers.append(reader.number)
      }
      let whole = Data(text.utf8).split(
        separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      #expect(lines == whole.map { Array($0) }, "\(text.debugDescription)")
      #expect(numbers == Array(1...whole.count))
      #expect(try reader.next() == nil, "nothing after the last line")
    }
  }

  @Test func aLineOverTheLimitIsSkippedByNumberAndTheNextOnesAreRead() throws {
    let folder = try TemporaryFolder()
    let report = JSONWriter.compact(Self.launch("Short").report.json)
    let long = JSONWriter.compact(Self.launch("Long", steps: 40).report.json)
    let limit = report.utf8.count + 10
    #expect(long.utf8.count > limit)
    let file = try folder.write(
      "day.jsonl",
      [report, long, JSONWriter.compact(Self.launch("After").report.json)]
        .joined(separator: "\n"))
    var reader = ExportReader(files: [file], skipped: [], lineLimit: limit)
    var names: [String] = []
    while let launch = reader.next() { names.append(launch.report.name) }
    #expect(names == ["Short", "After"])
    #expect(
      reader.skipped.first == [
        "'\(file)' line 2: it is longer than \(limit) bytes, which no report is"
      ])
    #expect(reader.count == 2)
  }

  @Test func notesKeepTheirFirstFiveAndCountTheRest() {
    var lines = ExportReader.Lines()
    for index in 1...8 { lines.append("note \(index)") }
    #expect(lines.first == (1...5).map { "note \($0)" })
    #expect(lines.count == 8)
  }

  @Test func aFileWrittenByPiecesReplacesTheOldOneOnlyWhenWhole() throws {
    let folder = try TemporaryFolder()
    let path = try folder.write("out.json", "old")
    #expect(chmod(path, 0o640) == 0)
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try SafeFiles.writeAtomically(to: URL(fileURLWithPath: path)) { write in
        try Array("half of the new".utf8).withUnsafeBytes(write)
        throw Stop()
      }
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["out.json"])
    try SafeFiles.writeAtomically(to: URL(fileURLWithPath: path)) { write in
      for piece in ["one", ", ", "two"] { try Array(piece.utf8).withUnsafeBytes(write) }
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "one, two")
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o640)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["out.json"])
  }
}
