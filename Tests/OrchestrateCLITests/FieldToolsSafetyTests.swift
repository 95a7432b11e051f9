import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The faults found in `stats` and `export otlp` (#23), through the built binary: their
/// output files follow `run --report`'s rules, impossible numbers are skipped and named, never
/// fatal, and the messages say what to do.
@Suite("orchestrate stats and export: files, bounds and messages", .timeLimit(.minutes(10)))
struct FieldToolsSafetyTests {
  /// A report's compact JSON, changed by `change` (keys as the report writes them).
  private static func report(
    version: String = "1.0.0", interactive: Double = 0.5,
    startedAt: Date? = Date(timeIntervalSince1970: 1_790_000_000),
    _ change: (inout [String: Any]) -> Void = { _ in }
  ) throws -> String {
    var report = LaunchReport(
      manifest: "app.json", name: "App", outcome: .succeeded, route: nil, duration: .seconds(1),
      milestones: [.init(name: "interactive", time: .microseconds(Int64(interactive * 1e6)))],
      criticalPath: ["store"],
      steps: [
        LaunchReport.Step(
          id: "store", plugin: "simulate", state: .succeeded, start: .zero,
          end: .milliseconds(100), attempts: 1, usedFallback: false, error: nil, ready: .zero)
      ])
    report.app = AppInfo(version: version)
    report.startedAt = startedAt
    var object = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONWriter.compact(report.json).utf8))
        as? [String: Any])
    change(&object)
    return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
  }

  /// Runs `command` in `sh`, for pipes the test process cannot give `Orchestrate.run`.
  private static func shell(_ command: String) async throws -> (status: Int32, stdout: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    for await _ in exited {}
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }

  private static var binary: String {
    Orchestrate.buildFolder.appendingPathComponent("orchestrate").path
  }

  // MARK: - 1. Output files

  @Test func refusesEveryInputAsTheChartOrTheTraceHoweverSpelledBeforeReading() async throws {
    let folder = try TemporaryFolder()
    let input = try folder.write("in7.json", try Self.report())
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("dir"), withIntermediateDirectories: true)
    let inside = try folder.write("dir/report-1.json", try Self.report())
    try FileManager.default.linkItem(atPath: inside, toPath: folder.path("hard.json"))
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("soft.json"), withDestinationPath: inside)
    let before = try String(contentsOfFile: inside, encoding: .utf8)
    let cases: [[String]] = [
      ["export", "otlp", input, "-o", input],
      ["export", "otlp", input, "-o", folder.path("dir/../in7.json")],
      ["stats", folder.path("dir"), "--svg", inside],
      ["stats", folder.path("dir"), "--svg", folder.path("dir/new.svg")],
      ["stats", folder.path("dir"), "--svg", folder.path("hard.json")],
      ["stats", folder.path("dir"), "--svg", folder.path("soft.json")],
      ["export", "otlp", folder.path("dir"), "-o", folder.path("hard.json")],
    ]
    for arguments in cases {
      let result = try await Orchestrate.run(arguments)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
      // A file not there yet is not destroyed, but would be read with the folder's reports.
      let why =
        arguments.last == folder.path("dir/new.svg")
        ? "; a new file there would be mixed in with what that folder holds. Name a file outside it."
        : "; writing there would destroy it. Name another file."
      #expect(result.stderr.contains(why), "\(result.stderr)")
      #expect(result.stdout.isEmpty, "\(arguments): nothing is read or printed first")
    }
    #expect(try String(contentsOfFile: inside, encoding: .utf8) == before)
    #expect(try String(contentsOfFile: input, encoding: .utf8).contains("\"outcome\""))
    #expect(!FileManager.default.fileExists(atPath: folder.path("dir/new.svg")))
  }

  @Test func refusesAWriteProtectedFileAndAFolderAtOnceEvenAsRoot() async throws {
    let folder = try TemporaryFolder()
    let input = try folder.write("r.json", try Self.report())
    let kept = try folder.write("kept.svg", "keep")
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: kept)
    for arguments in [
      ["stats", input, "--svg", kept], ["export", "otlp", input, "-o", kept],
      ["stats", input, "--svg", folder.path("")], ["export", "otlp", input, "-o", folder.url.path],
    ] {
      let result = try await Orchestrate.run(arguments)
      #expect(result.status == 73, "\(arguments): \(result.stderr)")
      #expect(result.stderr.hasPrefix("Error: Refusing '"), "\(result.stderr)")
      #expect(result.stderr.contains("before reading any report"), "\(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
    #expect(try String(contentsOfFile: kept, encoding: .utf8) == "keep")
  }

  @Test func aChartToDevStdoutFollowsTheSummaryInAFileAndInAPipe() async throws {
    let folder = try TemporaryFolder()
    let input = try folder.write("r.json", try Self.report())
    // The test's standard output is a file, as with `> out.txt`.
    let result = try await Orchestrate.run(["stats", input, "--svg", "/dev/stdout"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("1 report from 1 file."), "the summary is kept")
    #expect(result.stdout.contains("<svg"))
    let piped = try await Self.shell("'\(Self.binary)' stats '\(input)' --svg /dev/stdout | cat")
    #expect(piped.status == 0)
    #expect(piped.stdout.hasPrefix("1 report from 1 file.") && piped.stdout.contains("</svg>"))
    let trace = try await Self.shell("'\(Self.binary)' export otlp '\(input)' -o /dev/stdout | cat")
    #expect(trace.status == 0)
    #expect(trace.stdout.hasPrefix("{\"resourceSpans\""))
  }

  @Test func aDashSendsTheChartToStandardOutputAndTheFiguresToStandardError() async throws {
    let folder = try TemporaryFolder()
    let input = try folder.write("r.json", try Self.report())
    let result = try await Orchestrate.run(["stats", input, "--svg", "-"], in: folder.url)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("<?xml"))
    #expect(result.stderr.hasPrefix("1 report from 1 file."))
    #expect(!FileManager.default.fileExists(atPath: folder.path("-")))
    let both = try await Orchestrate.run(
      ["stats", input, "--svg", "-", "--json"], in: folder.url)
    #expect(both.status == 64)
    #expect(both.stderr.hasPrefix("Error: '--svg -' and '--json' both print on standard output"))
  }

  // MARK: - 2 and 3. Numbers bounded where they are read

  @Test func impossibleTimesAndWrongTypesSkipAReportNamingItsKeyNeverCrash() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("in"), withIntermediateDirectories: true)
    try folder.write("in/good.json", try Self.report())
    let bad: [(name: String, key: String, text: String)] = [
      (
        "huge", "milestones.interactive",
        try Self.report { $0["milestones"] = ["interactive": 1e308] }
      ),
      (
        "end", "steps[0].end",
        try Self.report {
          var steps = $0["steps"] as! [[String: Any]]
          steps[0]["end"] = 1e300
          $0["steps"] = steps
        }
      ),
      (
        "negative", "milestones.interactive",
        try Self.report { $0["milestones"] = ["interactive": -1] }
      ),
      (
        "string", "milestones.interactive",
        try Self.report { $0["milestones"] = ["interactive": "2s"] }
      ),
      ("future", "startedAt", try Self.report { $0["startedAt"] = "9999-12-31T23:59:59Z" }),
    ]
    for (name, _, text) in bad { try folder.write("in/\(name).json", text) }
    let stats = try await Orchestrate.run(["stats", folder.path("in"), "--json"])
    #expect(stats.status == 0, "\(stats.stderr)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
    #expect(summary["reports"] as? Int == 1)
    #expect(summary["skipped"] as? Int == bad.count)
    let milestone = try #require(
      ((summary["all"] as? [String: Any])?["milestones"] as? [[String: Any]])?.first)
    #expect(milestone["missed"] as? Int == 0, "a string is not a missed milestone")
    #expect(milestone["max"] as? Double == 0.5)
    for (name, key, _) in bad {
      let file = folder.path("in/\(name).json")
      let export = try await Orchestrate.run(["export", "otlp", file])
      #expect(export.status == 65, "\(name): \(export.stderr)")
      #expect(export.stderr.contains("'\(file)': its '\(key)'"), "\(name): \(export.stderr)")
    }
  }

  @Test func statsAndExportReadAndRefuseTheSameReportsOfAJSONLinesFile() async throws {
    let folder = try TemporaryFolder()
    let lines = [
      try Self.report(),
      try Self.report { report in
        var steps = report["steps"] as? [[String: Any]] ?? []
        steps[0]["attempts"] = nil
        report["steps"] = steps
      },
      try Self.report { $0["version"] = "7" },
      try Self.report { $0["name"] = nil },
    ]
    let file = try folder.write("week.jsonl", lines.joined(separator: "\n") + "\n")
    let reasons = [
      (2, "its 'steps[0].attempts' is missing or malformed"),
      (3, "its 'version' is missing or malformed"),
      (4, "its 'name' is missing or malformed"),
    ]
    let stats = try await Orchestrate.run(["stats", file])
    #expect(stats.status == 0, "\(stats.stderr)")
    #expect(
      stats.stdout.hasPrefix("1 report from 1 file; 3 skipped (not reports):"), "\(stats.stdout)")
    let export = try await Orchestrate.run(["export", "otlp", file, "-o", folder.path("out.json")])
    #expect(export.status == 0, "\(export.stderr)")
    #expect(export.stderr.contains("Exported 1 launch to"), "\(export.stderr)")
    for (line, key) in reasons {
      let reason = "it is not a launch report (\(key))"
      #expect(stats.stdout.contains(": \(reason)"), "\(stats.stdout)")
      #expect(
        export.stderr.contains("Note: skipped '\(file)' line \(line): \(reason)"),
        "\(export.stderr)")
    }
  }

  /// Blank is JSON's spaces and tabs (and a CRLF's CR) to both commands: a line of other
  /// white space (a non-breaking space) is refused by both, and an empty or blank file is
  /// refused by both as empty, never passed over by one of them.
  @Test func blankLinesAndEmptyFilesAreTheSameToStatsAndExport() async throws {
    let folder = try TemporaryFolder()
    let lines = ["", " \t\r", try Self.report(), "\u{00A0}", "\u{2003}  "]
    let week = try folder.write("week.jsonl", lines.joined(separator: "\n") + "\n")
    let empty = try folder.write("empty.json", "")
    let blank = try folder.write("blank.json", " \n\t\n")
    let stats = try await Orchestrate.run(["stats", week, empty, blank])
    #expect(stats.status == 0, "\(stats.stderr)")
    #expect(
      stats.stdout.hasPrefix("1 report from 3 files; 4 skipped (not reports):"), "\(stats.stdout)")
    let export = try await Orchestrate.run(
      ["export", "otlp", week, empty, blank, "-o", folder.path("out.json")])
    #expect(export.status == 0, "\(export.stderr)")
    #expect(export.stderr.contains("Exported 1 launch to"), "\(export.stderr)")
    for file in [empty, blank] {
      #expect(stats.stdout.contains("'\(file)': it is empty"), "\(stats.stdout)")
      #expect(export.stderr.contains("Note: skipped '\(file)': it is empty"), "\(export.stderr)")
    }
    for line in [4, 5] {
      #expect(
        export.stderr.contains("Note: skipped '\(week)' line \(line): it is not valid JSON"),
        "\(export.stderr)")
    }
    #expect(
      stats.stdout.components(separatedBy: "it is not valid JSON").count == 3, "\(stats.stdout)")
  }

  @Test func aVersionWrittenTwiceIsReadAsItsFirstByStatsExportAndTheReader() async throws {
    let folder = try TemporaryFolder()
    let report = try Self.report()
    #expect(report.hasPrefix("{") && report.contains(#""version":6"#))
    // The report's own `version` (6) with another before it or after it.
    let unreadable = try folder.write("zero-first.json", #"{"version": 0, "# + report.dropFirst())
    let readable = try folder.write(
      "newer-after.json", report.dropLast() + #", "version": 99}"#)
    let stats = try await Orchestrate.run(["stats", unreadable, readable])
    #expect(stats.status == 0, "\(stats.stderr)")
    #expect(
      stats.stdout.hasPrefix("1 report from 2 files; 1 skipped (not reports):"), "\(stats.stdout)")
    let reason = "it is not a launch report (its 'version' is missing or malformed)"
    #expect(stats.stdout.contains("zero-first.json': \(reason)"), "\(stats.stdout)")
    let export = try await Orchestrate.run(
      ["export", "otlp", unreadable, readable, "-o", folder.path("out.json")])
    #expect(export.status == 0, "\(export.stderr)")
    #expect(export.stderr.contains("Exported 1 launch to"), "\(export.stderr)")
    #expect(export.stderr.contains("Note: skipped '\(unreadable)': \(reason)"), "\(export.stderr)")
    // The commands that read a report whole read the first `version` too.
    let compare = try await Orchestrate.run(["compare", readable, readable])
    #expect(compare.status == 0, "\(compare.stderr)")
    let refused = try await Orchestrate.run(["compare", unreadable, readable])
    #expect(refused.status == 65)
    #expect(
      refused.stderr.contains("is not a launch report (version: missing or malformed)"),
      "\(refused.stderr)")
  }

  /// `report` with `member` (`"key": value`, as bytes) added as its last key.
  private static func bytes(_ report: String, adding member: some Sequence<UInt8>) -> [UInt8] {
    Array(report.utf8.dropLast()) + Array(", ".utf8) + member + Array("}".utf8)
  }

  /// What `stats --json` made of one file: how many reports it read, and why it skipped what
  /// it skipped.
  private static func stats(_ file: String) async throws -> (reports: Int?, skipped: [String]) {
    let result = try await Orchestrate.run(["stats", file, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    return (summary["reports"] as? Int, summary["skippedExamples"] as? [String] ?? [])
  }

  @Test func aPartStatsNeverReadsIsStillJSONToStatsAsToExport() async throws {
    let folder = try TemporaryFolder()
    let report = try Self.report()
    // Each is not JSON in a key that neither command reads; what the parser says of it.
    let broken: [(name: String, value: String, problem: String)] = [
      ("element", "[1,,2]", "unexpected character ','; expected a value at line 1, column "),
      ("closer", "[1}", "unexpected character '}'; expected ',' or ']' after an array element"),
      ("trailing", "[1,]", "a trailing comma before ']'"),
      (
        "deep", String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        "nesting is deeper than 256 levels"
      ),
      ("escape", #""\q""#, "invalid escape sequence in a string"),
      ("surrogate", #""\ud800""#, "unpaired UTF-16 surrogate in a string"),
      ("zeros", "012", "a number cannot have leading zeros"),
      ("huge", "1e999", "the number 1e999 is out of range"),
      ("control", "\"a\u{01}b\"", "a control character must be escaped inside a string"),
      ("literal", "nul", "unexpected character 'n'; expected a value"),
    ]
    var lines = [try Self.report()]
    for (name, value, problem) in broken {
      let text = Self.bytes(report, adding: (#""extra": "# + value).utf8)
      let file = folder.path("\(name).json")
      try Data(text).write(to: URL(fileURLWithPath: file))
      lines.append(String(decoding: text, as: UTF8.self))
      let stats = try await Self.stats(file)
      #expect(stats.reports == 0, "\(name)")
      let reason = try #require(stats.skipped.first, "\(name)")
      #expect(reason.hasPrefix("'\(file)': it is not valid JSON (\(problem)"), "\(reason)")
      let export = try await Orchestrate.run(["export", "otlp", file])
      #expect(export.status == 65, "\(name): \(export.stderr)")
      #expect(export.stderr.contains("Note: skipped \(reason)\n"), "\(export.stderr)")
    }
    // Invalid UTF-8 is read as export reads every text, each bad byte as U+FFFD.
    let repaired = folder.path("utf8.json")
    try Data(Self.bytes(report, adding: Array(#""extra": "a"#.utf8) + [0xFF] + Array(#"b""#.utf8)))
      .write(to: URL(fileURLWithPath: repaired))
    #expect(try await Self.stats(repaired).reports == 1)
    let export = try await Orchestrate.run(["export", "otlp", repaired, "-o", folder.path("o")])
    #expect(export.status == 0, "\(export.stderr)")
    // The same texts as the lines of one file.
    let file = try folder.write("week.jsonl", lines.joined(separator: "\n") + "\n")
    let stats = try await Orchestrate.run(["stats", file])
    #expect(
      stats.stdout.hasPrefix("1 report from 1 file; \(broken.count) skipped (not reports):"),
      "\(stats.stdout)")
    let exported = try await Orchestrate.run(["export", "otlp", file, "-o", folder.path("o")])
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(exported.stderr.contains("Exported 1 launch to"), "\(exported.stderr)")
  }

  @Test func ofAKeyWrittenTwiceStatsReadsTheFirstAsExportDoes() async throws {
    let folder = try TemporaryFolder()
    let report = try Self.report { $0["labels"] = ["arm": "a"] }
    /// `report` with a second copy of keys `stats` reads after their first: `added` at the
    /// top, and each of `inside` after the member it repeats.
    func twice(_ added: String, inside: [(String, String)]) throws -> String {
      var text = String(decoding: Self.bytes(report, adding: added.utf8), as: UTF8.self)
      for (first, second) in inside {
        #expect(text.contains(first), "\(text)")
        text = text.replacingOccurrences(of: first, with: first + "," + second)
      }
      return text
    }
    // Values of their own, which `stats` would count instead of the first.
    let values = try folder.write(
      "values.json",
      try twice(
        #""outcome": "failed", "app": {"version": "9.9.9"}, "labels": {"arm": "b"}"#,
        inside: [(#""interactive":0.5"#, #""interactive":7"#)]))
    // Times that would refuse the report were they read.
    let times = try folder.write(
      "times.json",
      try twice(#""duration": -1"#, inside: [(#""end":0.1"#, #""end":-5"#)]))
    let stats = try await Orchestrate.run(["stats", values, "--json", "--by", "arm"])
    #expect(stats.status == 0, "\(stats.stderr)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
    #expect(summary["reports"] as? Int == 1, "\(stats.stdout)")
    let all = summary["all"] as? [String: Any]
    #expect((all?["outcomes"] as? [String: Any])?["succeeded"] as? Int == 1, "\(stats.stdout)")
    let milestone = (all?["milestones"] as? [[String: Any]])?.first
    #expect(milestone?["max"] as? Double == 0.5, "\(stats.stdout)")
    let groups = summary["groups"] as? [[String: Any]] ?? []
    #expect(groups.map { $0["name"] as? String } == ["a"], "\(stats.stdout)")
    let versions = try await Orchestrate.run(["stats", values, "--by", "version"])
    #expect(versions.stdout.contains("version 1.0.0: 1 report"), "\(versions.stdout)")
    #expect(try await Self.stats(times).reports == 1)
    let exportTimes = try await Orchestrate.run(["export", "otlp", times, "-o", folder.path("t")])
    #expect(exportTimes.status == 0, "\(exportTimes.stderr)")
    let export = try await Orchestrate.run(["export", "otlp", values, "-o", folder.path("o.json")])
    #expect(export.status == 0, "\(export.stderr)")
    let request = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: folder.url.appendingPathComponent("o.json")))
        as? [String: Any])
    let resource = try #require((request["resourceSpans"] as? [[String: Any]])?.first)
    func attributes(_ holder: [String: Any]?) -> [String: String] {
      var values: [String: String] = [:]
      for attribute in holder?["attributes"] as? [[String: Any]] ?? [] {
        let value = attribute["value"] as? [String: Any]
        if let key = attribute["key"] as? String, let text = value?["stringValue"] as? String {
          values[key] = text
        }
      }
      return values
    }
    #expect(attributes(resource["resource"] as? [String: Any])["service.version"] == "1.0.0")
    let spans = (resource["scopeSpans"] as? [[String: Any]])?.first?["spans"] as? [[String: Any]]
    let root = try #require(spans?.first { $0["parentSpanId"] == nil })
    #expect(attributes(root)["launch.outcome"] == "succeeded")
    #expect(attributes(root)["launch.arm"] == "a")
  }

  @Test func theMaximumStaysExactWhenPercentilesAreEstimated() async throws {
    let folder = try TemporaryFolder()
    // More values than are kept exactly, the largest not at any bucket's middle.
    var lines: [String] = []
    for index in 0..<16_500 {
      lines.append(
        try Self.report(interactive: index == 7 ? 123.456789 : 0.5 + Double(index) / 1e5))
    }
    let file = try folder.write("many.ndjson", lines.joined(separator: "\n") + "\n")
    let result = try await Orchestrate.run(["stats", file, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(summary["reports"] as? Int == 16_500, "'.ndjson' is JSON Lines")
    let milestone = try #require(
      ((summary["all"] as? [String: Any])?["milestones"] as? [[String: Any]])?.first)
    #expect(milestone["estimated"] as? Bool == true)
    #expect(milestone["max"] as? Double == 123.456789)
  }

  // MARK: - 4. Links

  @Test func followsALinkNamedOnTheCommandLineButNotOneInsideAFolder() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("reports"), withIntermediateDirectories: true)
    try folder.write("reports/a.json", try Self.report())
    let outside = try folder.write("outside.json", try Self.report())
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("reports/b.json"), withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("link"), withDestinationPath: folder.path("reports"))
    let result = try await Orchestrate.run(["stats", folder.path("link")])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("1 report from 1 file; 1 skipped (not reports):"))
    #expect(result.stdout.contains("b.json': a symbolic link inside a folder, not followed"))
  }

  @Test func aReportThatListsAStepTwiceIsNoReportToAnyCommand() async throws {
    let folder = try TemporaryFolder()
    let good = try folder.write("good.json", try Self.report())
    let twice = try folder.write(
      "twice.json",
      try Self.report { object in
        let steps = object["steps"] as? [Any] ?? []
        object["steps"] = steps + steps
      })
    let stats = try await Orchestrate.run(["stats", good, twice])
    #expect(stats.stdout.hasPrefix("1 report from 2 files; 1 skipped (not reports):"))
    #expect(stats.stdout.contains("twice.json': it lists the step 'store' twice"))
    for command in [["compare", good, twice], ["blame", twice]] {
      let result = try await Orchestrate.run(command)
      #expect(result.status == 65)
      #expect(result.stderr.contains("steps[1].id: the step 'store' is listed twice"))
    }
    let export = try await Orchestrate.run(["export", "otlp", twice, "-o", folder.path("out.json")])
    #expect(export.status != 0)
    #expect(export.stderr.contains("it lists the step 'store' twice"))
  }

  @Test func aFIFOInsideAFolderIsNamedAndCountedNeverRead() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("reports"), withIntermediateDirectories: true)
    try folder.write("reports/a.json", try Self.report())
    // Opened for reading, a FIFO with no writer would hold the command for good.
    #expect(mkfifo(folder.path("reports/pipe.json"), 0o600) == 0)
    let result = try await Orchestrate.run(["stats", folder.path("reports")])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("1 report from 1 file; 1 skipped (not reports):"))
    #expect(result.stdout.contains("pipe.json': a FIFO (named pipe), not a regular file"))
  }

  @Test func aFIFONamedOnTheCommandLineAsJSONLinesIsRefusedByBothNeverRead() async throws {
    let folder = try TemporaryFolder()
    let fifo = folder.path("pipe.jsonl")
    #expect(mkfifo(fifo, 0o600) == 0)
    // A writer that never writes: a reader that opened the FIFO would wait on it for good (or,
    // reading with `pread`, find nothing), rather than say what it is.
    let writer = open(fifo, O_RDWR | O_NONBLOCK)
    try #require(writer >= 0)
    defer { close(writer) }
    let why = "'\(fifo)': '\(fifo)' is a FIFO (named pipe), not a regular file"
    let stats = try await Orchestrate.run(["stats", fifo])
    #expect(stats.status == 0, "\(stats.stderr)")
    #expect(stats.stdout.contains(why), "\(stats.stdout)")
    let export = try await Orchestrate.run(["export", "otlp", fifo])
    #expect(export.status == 65)
    #expect(export.stderr.contains("Note: skipped \(why)"), "\(export.stderr)")
  }

  // MARK: - 5. OTLP

  @Test func exportNotesAMissingStartRefusesNineteenSeventyAndSendsADuplicateOnce() async throws {
    let folder = try TemporaryFolder()
    let report = try folder.write("r.json", try Self.report())
    let copy = try folder.write("copy.json", try Self.report())
    let undated = try folder.write("undated.json", try Self.report(startedAt: nil))
    let epoch = try folder.write(
      "epoch.json", try Self.report(startedAt: Date(timeIntervalSince1970: 0)))
    let result = try await Orchestrate.run(["export", "otlp", report, copy, undated, epoch])
    #expect(result.status == 0, "\(result.stderr)")
    let request = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect((request["resourceSpans"] as? [Any])?.count == 2)
    #expect(
      result.stderr.contains("'\(copy)' is the same launch as '\(report)'; it is exported once."))
    #expect(result.stderr.contains("'\(undated)' has no 'startedAt'"))
    #expect(result.stderr.contains("'\(epoch)': its 'startedAt' is '1970-01-01T00:00:00.000000Z'"))
    #expect(!result.stdout.contains("\"startTimeUnixNano\":\"0\""))
  }

  // MARK: - 6. Messages

  @Test func exportNamesWhatIsWrongWithADamagedHistoryEntryInWords() async throws {
    let folder = try TemporaryFolder()
    let good = try folder.write("r.json", try Self.report())
    // Damaged deep inside: `stats`' scanner, which `export` reads with first, refuses it too.
    let damaged = try Self.report { report in
      var steps = report["steps"] as? [[String: Any]] ?? []
      steps[0]["work"] = [["start": 0, "end": 0.1]]
      report["steps"] = steps
    }
    let entry = try folder.write(
      "entry.json",
      #"{ "orchestrateHistory": 1, "recordedAt": "2026-11-25T00:00:00Z", "report": "#
        + damaged + " }")
    let result = try await Orchestrate.run(["export", "otlp", good, entry])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stderr.contains(
        "'\(entry)': it is not a launch report (its 'report.steps[0].work[0].attempt' is missing or malformed)"
      ), "\(result.stderr)")
    #expect(!result.stderr.contains("HistoryFormatError"))
  }

  @Test func messagesNameTheFileLineAndColumnAndTheSupportedOperators() async throws {
    let folder = try TemporaryFolder()
    let garbage = try folder.write("g.json", "{\n  \"outcome\": oops\n}\n")
    let export = try await Orchestrate.run(["export", "otlp", garbage])
    #expect(export.status == 65)
    #expect(
      export.stderr.contains(
        "'\(garbage)': it is not valid JSON (unexpected character 'o'; expected a value at line 2, column 14)"
      ),
      "\(export.stderr)")
    #expect(!export.stderr.contains("JSONSyntaxError"))
    let input = try folder.write("r.json", try Self.report())
    let inclusive = try await Orchestrate.run(["stats", input, "--fail-if", "interactive.p90>=2s"])
    #expect(inclusive.status == 64)
    #expect(
      inclusive.stderr.contains(
        "only '>' (broken above the value) and '<' (broken below it) are supported; write 'interactive.p90>2s'"
      ), "\(inclusive.stderr)")
    let percent = try await Orchestrate.run(["stats", input, "--fail-if", "failureRate>150%"])
    #expect(percent.status == 64)
    #expect(percent.stderr.contains("is not one from 0 to 100%"), "\(percent.stderr)")
  }

  @Test func aChartThatCannotBeWrittenStillPrintsTheBrokenLimits() async throws {
    // `/dev/full` takes no byte: a write that fails after the check, as a full disk does.
    guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
    let folder = try TemporaryFolder()
    let input = try folder.write("r.json", try Self.report())
    let result = try await Orchestrate.run(
      ["stats", input, "--svg", "/dev/full", "--fail-if", "interactive.p90>100ms"])
    #expect(result.status == 73, "the chart's failure outranks a broken limit")
    #expect(result.stderr.contains("Error: 'interactive.p90>100ms' is broken"), "\(result.stderr)")
    #expect(result.stderr.contains("Error: Cannot write the chart to '/dev/full'"))
  }

  // MARK: - 7. Texts

  @Test func anEmptyVersionIsUnknownALongLabelIsCutAndNoReportsSaysSo() async throws {
    let folder = try TemporaryFolder()
    let long = String(repeating: "x", count: 5_000)
    let empty = try folder.write("empty.json", try Self.report(version: ""))
    let longer = try folder.write("long.json", try Self.report(version: long))
    let result = try await Orchestrate.run(
      ["stats", empty, longer, "--by", "version", "--svg", folder.path("c.svg")])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("version unknown: 1 report"))
    #expect(!result.stdout.contains("version : 1 report"))
    let svg = try String(contentsOfFile: folder.path("c.svg"), encoding: .utf8)
    #expect(svg.contains(String(repeating: "x", count: 23) + "…</text>"))
    #expect(!svg.contains(String(repeating: "x", count: 201)), "cut in the tooltip too")
    let none = try await Orchestrate.run(["stats", folder.path("c.svg")])
    #expect(none.status == 0)
    #expect(none.stdout.hasPrefix("No reports in 1 file; 1 skipped (not reports):"))
    #expect(!none.stdout.contains("0.0% succeeded"))
  }
}
