import Foundation
import LaunchJSON
import PluginTestSupport
import Testing

@testable import LaunchOrchestrator

/// The report store on real files: its bounds, two processes appending at once, a damaged
/// entry, and a session that appends each launch by itself.
@Suite("Launch report store")
struct LaunchReportStoreTests {
  private static func folder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "report-store-\(UUID().uuidString)")
  }

  private static func report(_ number: Int) -> LaunchReport {
    var report = LaunchReport(
      manifest: "app.json", name: "App", outcome: .succeeded, route: nil,
      duration: .milliseconds(number), milestones: [], criticalPath: [], steps: [])
    report.labels = LaunchLabels(arm: String(number))
    return report
  }

  @Test @MainActor func aSessionKeeps500LaunchesInAStoreOf100AsTheNewest100() async throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = LaunchReportStore(folder: folder, maxReports: 100)
    let plan = try loadPlan(
      """
      { "version": 1, "app": { "version": "2.3.0" },
        "milestones": { "interactive": ["a"] }, "steps": [ { "id": "a", "plugin": "noop" } ] }
      """)
    let session = LaunchSession(reportStore: store)
    for number in 0..<500 {
      var environment = LaunchEnvironment()
      environment[LaunchLabels.self] = LaunchLabels(arm: String(number), device: "test")
      _ = await session.run(plan, on: LaunchEngine(), environment: environment)
    }
    let kept = try store.reports()
    #expect(kept.map(\.labels?.arm) == (400..<500).map(String.init))
    #expect(kept.allSatisfy { $0.app == AppInfo(version: "2.3.0") && $0.labels?.device == "test" })
    #expect(kept.allSatisfy { $0.sinceProcessStart != nil })
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    #expect(files.filter { $0.hasPrefix("report-") }.count == 100)
  }

  @Test func dropsTheOldestToStayUnderItsBytes() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let size = JSONWriter.compact(Self.report(10).json).utf8.count + 1
    let store = LaunchReportStore(folder: folder, maxReports: 100, maxBytes: size * 3 + size / 2)
    for number in 10..<20 { try store.append(Self.report(number)) }
    #expect(try store.reports().map(\.labels?.arm) == ["17", "18", "19"])
    let tiny = LaunchReportStore(folder: folder, maxBytes: 10)
    #expect(throws: (any Error).self) { try tiny.append(Self.report(1)) }
    try store.removeAll()
    #expect(try store.reports().isEmpty)
    try store.append(Self.report(30))
    #expect(try store.reports().map(\.labels?.arm) == ["30"])
  }

  /// Not in the thread-sanitizer pass (`.ci/run` sets `TSAN_OPTIONS` for it): there two
  /// instrumented processes, among the whole suite's, keep each other waiting for the store's
  /// lock past the 5 s an append waits (a documented limit: the append throws, naming the
  /// lock), and this test would measure the machine. The other pass runs it.
  @Test(
    .enabled(
      if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil,
      "two sanitized processes appending 300 reports outlast the store's documented wait"))
  func twoProcessesAppendingAtOnceLoseNoReport() async throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    async let first = TestHelper.run(["store-append", folder.path, "0", "150", "1000"])
    async let second = TestHelper.run(["store-append", folder.path, "1000", "150", "1000"])
    let statuses = try await [first.status, second.status]
    #expect(statuses == [0, 0])
    let arms = try LaunchReportStore(folder: folder, maxReports: 1000).reports().compactMap {
      $0.labels?.arm.flatMap(Int.init)
    }
    #expect(arms.count == 300)
    #expect(Set(arms) == Set(Array(0..<150) + Array(1000..<1150)))
    // Each process's own reports stay in the order it appended them.
    #expect(arms.filter { $0 < 1000 } == Array(0..<150))
    #expect(arms.filter { $0 >= 1000 } == Array(1000..<1150))
  }

  @Test func aFolderWhereTheLockGoesLosesNoReport() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent(".reports.lock"), withIntermediateDirectories: true)
    let store = LaunchReportStore(folder: folder)
    // Each report has a name of its own: written without the lock rather than lost.
    try store.append(Self.report(1))
    try store.append(Self.report(2))
    #expect(try store.reports().map(\.labels?.arm) == ["1", "2"])
    try store.removeAll()
    #expect(try store.reports().isEmpty)
  }

  @Test func skipsADamagedEntryWithANote() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = LaunchReportStore(folder: folder, maxReports: 3)
    for number in 1...3 { try store.append(Self.report(number)) }
    let damaged = folder.appendingPathComponent("report-000000000002.json")
    try Data("{\"version\": 6, \"steps\": [".utf8).write(to: damaged)
    var notes: [String] = []
    #expect(try store.reports(notes: &notes).map(\.labels?.arm) == ["1", "3"])
    #expect(notes.count == 1)
    #expect(notes.first?.contains("report-000000000002.json") == true)
    #expect(notes.first?.contains("damaged") == true)
    // It ages out like any other entry; files that are not the store's stay.
    try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
    try store.append(Self.report(4))
    try store.append(Self.report(5))
    notes = []
    #expect(try store.reports(notes: &notes).map(\.labels?.arm) == ["3", "4", "5"])
    #expect(notes.isEmpty)
    try store.removeAll()
    #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("notes.txt").path))
  }

  /// The upload flow the docs show: read, send, remove what was read. Another process
  /// appends between the read and the removal, as an app extension would, and an entry of a
  /// newer format (a newer build of the app wrote it) was skipped by the read: both stay.
  @Test(
    .enabled(
      if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil,
      "a sanitized helper process may outlast the store's documented wait"))
  func removingWhatWasReadKeepsReportsAppendedSinceAndEntriesItCouldNotRead() async throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = LaunchReportStore(folder: folder)
    for number in 1...3 { try store.append(Self.report(number)) }
    let current = JSONWriter.compact(Self.report(4).json)
    let newer = current.replacingOccurrences(
      of: "\"version\": \(LaunchReport.formatVersion)",
      with: "\"version\": \(LaunchReport.formatVersion + 1)")
    #expect(newer != current)
    let newerName = "report-000000000004.json"
    try Data(newer.utf8).write(to: folder.appendingPathComponent(newerName))

    var notes: [String] = []
    let read = try store.reports(notes: &notes)
    #expect(read.map(\.labels?.arm) == ["1", "2", "3"])
    #expect(notes.count == 1 && notes.first?.contains(newerName) == true)
    // While the app uploads, another process appends two launches.
    let helper = try await TestHelper.run(["store-append", folder.path, "100", "2", "100"])
    #expect(helper.status == 0)
    try store.removeAll(where: read.contains)

    notes = []
    #expect(try store.reports(notes: &notes).map(\.labels?.arm) == ["100", "101"])
    #expect(notes.count == 1 && notes.first?.contains(newerName) == true)
    // Without a condition it still empties the store, the unread entry included.
    try store.removeAll()
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy {
        !$0.hasPrefix("report-")
      })
  }

  @Test func countsReadsAndRemovesOnlyTheNamesItWrites() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    // Names an `Int` reads a sequence from, but not as the store writes them: signed,
    // unpadded, padded too much, zero, and beyond `Int`. Each holds a report of its own.
    let strays = [
      "report-+2.json", "report--5.json", "report-7.json", "report-0000000000003.json",
      "report-000000000000.json", "report-99999999999999999999.json",
    ]
    let stray = Data((JSONWriter.compact(Self.report(99).json) + "\n").utf8)
    for name in strays { try stray.write(to: folder.appendingPathComponent(name)) }
    let store = LaunchReportStore(folder: folder, maxReports: 2)
    for number in 1...3 { try store.append(Self.report(number)) }

    var notes: [String] = []
    #expect(try store.reports(notes: &notes).map(\.labels?.arm) == ["2", "3"])
    #expect(notes.isEmpty)
    let names = { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
    #expect(
      try names().filter { $0.hasPrefix("report-") }
        == (strays + ["report-000000000002.json", "report-000000000003.json"]).sorted())
    try store.removeAll()
    #expect(try names().filter { $0.hasPrefix("report-") } == strays.sorted())
    for name in strays {
      #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == stray)
    }
  }

  @Test func anEntryAtTheLargestSequenceRefusesTheNextReportWithAReason() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let last = "report-\(Int.max).json"
    try Data("{}".utf8).write(to: folder.appendingPathComponent(last))
    let store = LaunchReportStore(folder: folder)
    let error = #expect(throws: (any Error).self) { try store.append(Self.report(1)) }
    #expect(
      error.map { "\($0)" }
        == "cannot add a report to '\(folder.path)': its newest entry '\(last)' has the largest"
        + " sequence there is, so none can follow it; removeAll() empties the store and"
        + " numbering starts again")
    // It is an entry like any other: damaged, so skipped with a note, and removed by removeAll.
    var notes: [String] = []
    #expect(try store.reports(notes: &notes).isEmpty)
    #expect(notes.count == 1)
    #expect(notes.first?.contains(last) == true)
    try store.removeAll()
    try store.append(Self.report(1))
    #expect(try store.reports().map(\.labels?.arm) == ["1"])
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
        $0.hasPrefix("report-")
      } == ["report-000000000001.json"])
  }

  @Test @MainActor func aStoreThatCannotBeWrittenNeverFailsTheLaunch() async throws {
    let file = Self.folder()
    try Data("not a folder".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let plan = try loadPlan(
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "noop" } ] }"#)
    let session = LaunchSession(reportStore: LaunchReportStore(folder: file))
    let report = await session.run(plan, on: LaunchEngine())
    #expect(report.outcome == .succeeded)
    #expect(session.phase == .finished(.succeeded))
  }

  @Test func readsTheProcessStartFromTheSystem() throws {
    let since = try #require(ProcessStart.Mark().sinceProcessStart)
    #expect(since > .zero)
    // The test process started before this test, and not before the machine booted.
    #expect(since < .seconds(86_400 * 365))
  }
}
