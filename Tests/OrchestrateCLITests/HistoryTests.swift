import Foundation
import LaunchOrchestrator
import OrchestrateCLI
import Testing

/// The pieces of `--history` and `compare` in-process: the hash, the statistics, the names.
@Suite("History: hash, median and noise, entry names")
struct HistoryPartsTests {
  @Test func hashesLikeSha256sum() {
    #expect(
      SHA256.hex(of: Array("".utf8))
        == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      SHA256.hex(of: Array("abc".utf8))
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    // 56 bytes: the padding takes a second block.
    #expect(
      SHA256.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
  }

  @Test func theMedianAndItsDeviationIgnoreOneOddRun() throws {
    let figure = try #require(Baseline.Figure([1, 2, 3, 4, 100].map(Duration.milliseconds)))
    #expect(figure.median == .milliseconds(3))
    #expect(figure.deviation == .milliseconds(1))
    #expect(figure.runs == 5)
    let noise = try #require(figure.noise)
    #expect(abs(noise.seconds - 3 * 1.4826 * 0.001) < 1e-9)
    #expect(Baseline.median([4, 1, 3, 2].map(Duration.seconds)) == .milliseconds(2500))
  }

  @Test func noiseNeedsFiveRunsAndIsNeverUnderAMillisecond() throws {
    let four = try #require(Baseline.Figure(Array(repeating: .milliseconds(100), count: 4)))
    #expect(four.noise == nil)
    let five = try #require(Baseline.Figure(Array(repeating: .milliseconds(100), count: 5)))
    #expect(five.deviation == .zero)
    #expect(five.noise == .milliseconds(1))
  }

  @Test func entryNamesOrderBySequenceNotTimeAndDifferBetweenProcesses() {
    let early = Date(timeIntervalSince1970: 1_795_000_000.25)
    let late = early.addingTimeInterval(3600)
    // The clock went back an hour between the two runs: the sequence still says which is newer.
    let first = HistoryFolder.entryName(sequence: 41, at: late, pid: 99_999, tag: 0xffff_ffff)
    let second = HistoryFolder.entryName(sequence: 42, at: early, pid: 1, tag: 0)
    #expect(first < second)
    #expect(HistoryFolder.entryName(sequence: 41, at: late, pid: 1, tag: 7) != first)
    #expect(first == "launch-000000000041-20261118T120640.250000Z-99999-ffffffff.json")
    #expect(HistoryFolder.isEntryName(first) && HistoryFolder.isEntryName(second))
    #expect(HistoryFolder.recordedAt(fromName: second) == "2026-11-18T11:06:40.250000Z")
    #expect(HistoryFolder.nextSequence(in: "/nonexistent-\(UUID().uuidString)") == 1)
    // Names earlier versions wrote, without a sequence, are still entries.
    let unnumbered = "launch-20261118T110640.250000Z-99999-ffffffff.json"
    #expect(HistoryFolder.isEntryName(unnumbered))
    #expect(HistoryFolder.recordedAt(fromName: unnumbered) == "2026-11-18T11:06:40.250000Z")
    for other in [
      "notes.json", "launch-.json", "launch-20261119T074640.250000Z-1-0000000.json",
      "launch-20261119T074640.250000Z-x-00000000.json",
      ".launch-20261119T074640.250000Z-1-00000000.json",
      // A sequence not written as the folder writes one: unpadded, zero, or padded too much.
      "launch-42-20261119T074640.250000Z-1-00000000.json",
      "launch-000000000000-20261119T074640.250000Z-1-00000000.json",
      "launch-0000000000042-20261119T074640.250000Z-1-00000000.json",
    ] {
      #expect(!HistoryFolder.isEntryName(other), "\(other)")
    }
  }
}

/// Writes reports and history entries with known times, so that medians, noise flags and
/// the regression gate are checked exactly, whatever the machine's speed.
struct HistoryFixture {
  let folder: TemporaryFolder

  init() throws {
    folder = try TemporaryFolder()
  }

  /// A report of the two-step launch in ``manifest``: `load` from 0 to `load`, then `page`
  /// for `page`; `interactive` when `page` ends.
  func report(load: Double, page: Double, outcome: LaunchOutcome = .succeeded) -> LaunchReport {
    let loadEnd = Duration.seconds(load)
    let pageEnd = loadEnd + .seconds(page)
    return LaunchReport(
      manifest: "m.json", name: "Fixture", outcome: outcome, route: nil, duration: pageEnd,
      milestones: [
        .init(name: "firstFrame", time: loadEnd), .init(name: "interactive", time: pageEnd),
      ],
      criticalPath: ["load", "page"],
      steps: [
        .init(
          id: "load", plugin: "simulate", state: .succeeded, start: .zero, end: loadEnd,
          attempts: 1, usedFallback: false, error: nil),
        .init(
          id: "page", plugin: "simulate", state: .succeeded, start: loadEnd, end: pageEnd,
          attempts: 1, usedFallback: false, error: nil),
      ])
  }

  /// Adds a history entry to `history` (made if missing), numbered `index + 1` and recorded
  /// `index` seconds into a fixed day, so that entries sort in the order written.
  @discardableResult
  func addEntry(
    _ report: LaunchReport, index: Int, to history: String = "h", hash: String = "abc",
    host: String = "ci-1"
  ) throws -> String {
    let url = folder.url.appendingPathComponent(history)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    let name = HistoryFolder.entryName(
      sequence: index + 1, at: Date(timeIntervalSince1970: 1_795_000_000 + Double(index)), pid: 1,
      tag: 0)
    let entry = HistoryEntry(
      recordedAt: HistoryFolder.recordedAt(fromName: name), manifestPath: "m.json",
      manifestHash: hash, machine: Machine(host: host, system: "Linux 6.8.0 x86_64", cores: 2),
      report: report)
    try folder.write("\(history)/\(name)", entry.jsonText)
    return "\(history)/\(name)"
  }

  /// A manifest whose `load` step takes `load` seconds and `page` takes `page`.
  func manifest(load: String, page: String = "0ms") throws -> String {
    try folder.write(
      "m.json",
      """
      { "version": 1, "name": "Fixture",
        "milestones": { "firstFrame": ["load"], "interactive": ["page"] },
        "steps": [
          { "id": "load", "plugin": "simulate", "params": { "duration": "\(load)" } },
          { "id": "page", "plugin": "simulate", "dependsOn": ["load"], "params": { "duration": "\(page)" } }
        ] }
      """)
  }

  func entries(in history: String = "h") throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path(history))
      .filter(HistoryFolder.isEntryName).sorted()
  }
}
