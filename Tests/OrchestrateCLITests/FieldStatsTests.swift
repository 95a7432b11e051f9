import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

/// `orchestrate stats` and `export otlp` through the binary, on real files: figures against
/// ones computed here by hand, `--fail-if` exit codes, the chart, and the OTLP trace parsed
/// with OpenTelemetry's own protobuf definitions.
@Suite("orchestrate stats and export", .timeLimit(.minutes(10)))
struct FieldStatsTests {
  /// A report whose `interactive` is reached at `interactive` seconds (or never).
  private static func report(
    interactive: Double?, version: String, reason: String, outcome: LaunchOutcome = .succeeded,
    storeSeconds: Double = 0.1, deferredState: StepState? = nil
  ) -> LaunchReport {
    var store = LaunchReport.Step(
      id: "store", plugin: "simulate", state: .succeeded, start: .zero,
      end: .microseconds(Int64(storeSeconds * 1e6)), attempts: 1, usedFallback: false,
      error: nil, ready: .zero)
    store.priority = .critical
    var steps = [store]
    if let deferredState {
      let started = deferredState != .skipped
      var cleanup = LaunchReport.Step(
        id: "cleanup", plugin: "simulate", state: deferredState,
        start: started ? .milliseconds(500) : nil, end: started ? .milliseconds(700) : nil,
        attempts: started ? 1 : 0, usedFallback: false, error: nil, ready: .milliseconds(200))
      cleanup.deferUntil = "interactive"
      steps.append(cleanup)
    }
    var report = LaunchReport(
      manifest: "app.json", name: "App", outcome: outcome, route: nil,
      duration: .seconds(1),
      milestones: [
        .init(name: "interactive", time: interactive.map { .microseconds(Int64($0 * 1e6)) })
      ],
      criticalPath: ["store"], steps: steps)
    report.app = AppInfo(version: version)
    report.context = LaunchContext(reason: .init(rawValue: reason))
    return report
  }

  /// The nearest-rank percentile: the value at rank ceil(p/100 × n) of the sorted values.
  private static func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    let rank = max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))
    return sorted[rank - 1]
  }

  private static func json(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(object as? [String: Any])
  }

  private static func milestone(_ group: [String: Any]?, _ name: String) -> [String: Any]? {
    (group?["milestones"] as? [[String: Any]])?.first { $0["name"] as? String == name }
  }

  @Test func figuresMatchOnesComputedByHandFromEveryKindOfSource() async throws {
    let folder = try TemporaryFolder()
    let reports = folder.url.appendingPathComponent("uploads")
    try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
    // 200 launches: interactive at 1..200 ms in a shuffled order, versions alternating.
    var times: [String: [Double]] = ["1.9.0": [], "1.10.0": []]
    var lines: [String] = []
    var order = Array(1...200)
    order.swapAt(3, 150)
    order.swapAt(17, 99)
    for (index, milliseconds) in order.enumerated() {
      let version = index % 2 == 0 ? "1.9.0" : "1.10.0"
      let seconds = Double(milliseconds) / 1000
      times[version]!.append(seconds)
      let outcome: LaunchOutcome = index < 4 ? .failed : index < 10 ? .routed : .succeeded
      let report = Self.report(
        interactive: seconds, version: version, reason: index % 3 == 0 ? "notification" : "userTap",
        outcome: outcome, storeSeconds: seconds / 2,
        deferredState: index < 20 ? .failed : .succeeded)
      // Half as files (a store's, a --report's), half as lines of an export.
      if index < 100 {
        try report.jsonText.write(
          to: reports.appendingPathComponent("r\(index).json"), atomically: true, encoding: .utf8)
      } else {
        lines.append(JSONWriter.compact(report.json))
      }
    }
    try folder.write("export.jsonl", lines.joined(separator: "\n") + "\nnot json\n\n")
    try folder.write("uploads/notes.txt", "not a report")
    try folder.write("uploads/other.json", #"{ "name": "a manifest, not a report" }"#)
    let result = try await Orchestrate.run(
      ["stats", reports.path, folder.path("export.jsonl"), "--json", "--by", "version"])
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try Self.json(result.stdout)
    #expect(summary["reports"] as? Int == 200)
    #expect(summary["skipped"] as? Int == 3)
    let all = summary["all"] as? [String: Any]
    let allTimes = times.values.flatMap { $0 }
    let interactive = try #require(Self.milestone(all, "interactive"))
    #expect(interactive["reached"] as? Int == 200)
    for p in [50.0, 90, 99] {
      #expect(interactive["p\(Int(p))"] as? Double == Self.percentile(allTimes, p))
    }
    #expect(interactive["p50"] as? Double == 0.1)
    #expect(interactive["p90"] as? Double == 0.18)
    #expect(interactive["p99"] as? Double == 0.198)
    #expect(interactive["max"] as? Double == 0.2)
    #expect(all?["failureRate"] as? Double == 4.0 / 200)
    #expect(all?["routedShare"] as? Double == 6.0 / 200)
    #expect(all?["backgroundCompletion"] as? Double == 180.0 / 200)
    // Groups, sorted as versions: 1.9.0 before 1.10.0.
    let groups = try #require(summary["groups"] as? [[String: Any]])
    #expect(groups.map { $0["name"] as? String } == ["1.9.0", "1.10.0"])
    for group in groups {
      let version = try #require(group["name"] as? String)
      let figures = try #require(Self.milestone(group, "interactive"))
      for p in [50.0, 90, 99] {
        #expect(figures["p\(Int(p))"] as? Double == Self.percentile(times[version]!, p))
      }
      let store = try #require((group["steps"] as? [[String: Any]])?.first)
      #expect(
        (store["duration"] as? [String: Any])?["p90"] as? Double
          == Self.percentile(times[version]!.map { $0 / 2 }, 90))
    }
    // The text shows the same figures.
    let text = try await Orchestrate.run(["stats", reports.path, folder.path("export.jsonl")])
    #expect(text.stdout.contains("200 reports from 102 files; 3 skipped (not reports):"))
    #expect(text.stdout.contains("  interactive      200       0  0.100s  0.180s  0.198s  0.200s"))
    #expect(
      text.stdout.contains("outcomes: 95.0% succeeded, 0.0% degraded, 2.0% failed, 3.0% routed"))
    #expect(text.stdout.contains("background completion: 90.0% (180 of 200 deferred steps"))
  }

  @Test func generatedReportsSplitByVersionAndReasonMatchAnIndependentComputation() async throws {
    let folder = try TemporaryFolder()
    let reports = folder.path("reports")
    let generated = try await Orchestrate.run([reports, "--count", "600"], binary: "field-reports")
    #expect(generated.status == 0, "\(generated.stderr)")
    // The independent computation: every file read with Foundation's JSON parser.
    var byVersion: [String: [Double]] = [:]
    var byReason: [String: Int] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: reports) {
      let report = try Self.json(String(contentsOfFile: "\(reports)/\(name)", encoding: .utf8))
      let version = try #require((report["app"] as? [String: Any])?["version"] as? String)
      let reason = try #require((report["context"] as? [String: Any])?["reason"] as? String)
      byReason[reason, default: 0] += 1
      if let time = (report["milestones"] as? [String: Any])?["interactive"] as? Double {
        byVersion[version, default: []].append(time)
      }
    }
    let result = try await Orchestrate.run(
      ["stats", reports, "--json", "--by", "version", "--svg", folder.path("chart.svg")])
    #expect(result.status == 0, "\(result.stderr)")
    let decoded = try Self.json(result.stdout)
    let groups = try #require(decoded["groups"] as? [[String: Any]])
    #expect(groups.map { $0["name"] as? String } == ["1.8.0", "1.9.0", "2.0.0"])
    for group in groups {
      let name = try #require(group["name"] as? String)
      let times = try #require(byVersion[name])
      let figures = try #require(Self.milestone(group, "interactive"))
      #expect(figures["reached"] as? Int == times.count)
      for p in [50.0, 90, 99] {
        #expect(figures["p\(Int(p))"] as? Double == Self.percentile(times, p))
      }
    }
    let reasons = try await Orchestrate.run(["stats", reports, "--json", "--by", "reason"])
    let reasonSummary = try Self.json(reasons.stdout)
    let reasonGroups = try #require(reasonSummary["groups"] as? [[String: Any]])
    #expect(reasonGroups.map { $0["name"] as? String } == byReason.keys.sorted())
    #expect(
      reasonGroups.map { $0["reports"] as? Int } == byReason.keys.sorted().map { byReason[$0] })
    // The chart is well-formed SVG with a box per version for each milestone.
    let svg = try String(contentsOfFile: folder.path("chart.svg"), encoding: .utf8)
    let (status, parsed) = try await runTool([
      "python3", "-c",
      "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); print(d.documentElement.tagName, len(d.getElementsByTagName('rect')))",
      folder.path("chart.svg"),
    ])
    #expect(status == 0)
    #expect(parsed == "svg 7\n", "a background and 2 milestones × 3 versions")
    for label in ["firstFrame", "interactive", "1.8.0", "1.9.0", "2.0.0", "p25 to p75"] {
      #expect(svg.contains(label))
    }
  }

  @Test func readsAStoresFolderAndAHistoryFolder() async throws {
    let folder = try TemporaryFolder()
    let store = LaunchReportStore(folder: folder.url.appendingPathComponent("store"))
    for milliseconds in [10.0, 20, 30] {
      try store.append(Self.report(interactive: milliseconds / 1000, version: "1.0", reason: "url"))
    }
    let manifest = try folder.write(
      "app.json",
      #"{ "version": 1, "milestones": { "interactive": ["a"] }, "steps": [ { "id": "a", "plugin": "simulate" } ] }"#
    )
    for _ in 0..<2 {
      let run = try await Orchestrate.run(
        ["run", manifest, "--quiet", "--history", folder.path("history"), "--app-version", "2.0"])
      #expect(run.status == 0)
    }
    let result = try await Orchestrate.run(
      ["stats", folder.path("store"), folder.path("history"), "--json", "--by", "version"])
    #expect(result.status == 0, "\(result.stderr)")
    let summary = try Self.json(result.stdout)
    #expect(summary["reports"] as? Int == 5)
    #expect(summary["skipped"] as? Int == 0, "the store's lock file is not a report")
    let groups = try #require(summary["groups"] as? [[String: Any]])
    #expect(groups.map { $0["name"] as? String } == ["1.0", "2.0"])
    #expect(groups.map { $0["reports"] as? Int } == [3, 2])
    #expect(Self.milestone(groups.first, "interactive")?["p50"] as? Double == 0.02)
  }

  @Test func failIfExitsThreeExactlyWhenALimitIsBroken() async throws {
    let folder = try TemporaryFolder()
    var lines: [String] = []
    for milliseconds in 1...100 {
      let report = Self.report(
        interactive: Double(milliseconds) / 1000, version: milliseconds <= 50 ? "1.0" : "2.0",
        reason: "userTap", outcome: milliseconds == 7 ? .failed : .succeeded)
      lines.append(JSONWriter.compact(report.json))
    }
    let file = try folder.write("field.jsonl", lines.joined(separator: "\n"))
    // p90 is 90ms: a limit at it holds, one just under it breaks.
    let holds = try await Orchestrate.run(
      ["stats", file, "--fail-if", "interactive.p90>90ms", "--fail-if", "failureRate>1%"])
    #expect(holds.status == 0, "\(holds.stderr)")
    #expect(holds.stderr.isEmpty)
    let broken = try await Orchestrate.run(
      [
        "stats", file, "--fail-if", "interactive.p90>89ms", "--fail-if", "failureRate>0.5%",
        "--fail-if", "store.max>1s",
      ])
    #expect(broken.status == 3)
    #expect(
      broken.stderr
        == """
        Error: 'interactive.p90>89ms' is broken: 'interactive' p90 is 0.090s (all reports, 100 reports).
        Error: 'failureRate>0.5%' is broken: failureRate is 1.0% (all reports, 100 reports).

        """)
    // Split by version, each group is checked too: only 2.0 is slower than 60ms at p50.
    let grouped = try await Orchestrate.run(
      ["stats", file, "--by", "version", "--fail-if", "interactive.p50>60ms", "--quiet-check"])
    #expect(grouped.status == 64, "an unknown option is a usage error")
    let byVersion = try await Orchestrate.run(
      ["stats", file, "--by", "version", "--fail-if", "interactive.p50>60ms"])
    #expect(byVersion.status == 3)
    #expect(
      byVersion.stderr
        == "Error: 'interactive.p50>60ms' is broken: 'interactive' p50 is 0.075s (version 2.0, 50 reports).\n"
    )
    let floor = try await Orchestrate.run(["stats", file, "--fail-if", "backgroundCompletion<95%"])
    #expect(floor.status == 0, "no deferred step started: nothing to judge")
    let typo = try await Orchestrate.run(["stats", file, "--fail-if", "interactve.p90>2s"])
    #expect(typo.status == 64)
    #expect(
      typo.stderr.hasPrefix(
        "Error: The limit 'interactve.p90>2s' names 'interactve', which no report has as a milestone or step. Did you mean 'interactive'?"
      ))
    let syntax = try await Orchestrate.run(["stats", file, "--fail-if", "interactive.p95>2s"])
    #expect(syntax.status == 64)
    let missing = try await Orchestrate.run(["stats", folder.path("nothing")])
    #expect(missing.status == 66)
  }

  @Test func exportsLaunchesAsAnOTLPTraceThatOpenTelemetrysDefinitionsRead() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "retry.json",
      """
      { "version": 1, "name": "Retry", "app": { "version": "3.1.0", "build": "7" },
        "milestones": { "interactive": ["flaky", "page"] },
        "steps": [
          { "id": "flaky", "plugin": "simulate", "retry": { "attempts": 3, "backoff": "1ms" },
            "params": { "failAttempts": 2 } },
          { "id": "page", "plugin": "simulate", "dependsOn": ["flaky"] },
          { "id": "never", "plugin": "simulate", "dependsOn": ["flaky"], "when": { "firstLaunch": false } },
          { "id": "later", "plugin": "simulate", "deferUntil": "interactive", "priority": "background" }
        ] }
      """)
    let run = try await Orchestrate.run(
      [
        "run", manifest, "--quiet", "--report", folder.path("a.json"), "--otlp",
        folder.path("run.otlp.json"), "--reason", "notification", "--first-launch",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    let second = try await Orchestrate.run(
      ["run", manifest, "--quiet", "--report", folder.path("b.json")])
    #expect(second.status == 0, "\(second.stderr)")
    let export = try await Orchestrate.run(
      [
        "export", "otlp", folder.path("a.json"), folder.path("b.json"), "-o",
        folder.path("two.json"),
      ])
    #expect(export.status == 0, "\(export.stderr)")
    // Attempts per launch: flaky 3, page 1, later 1; `never` is skipped in the first launch.
    let expected = try [readReport(folder.path("a.json")), readReport(folder.path("b.json"))].map {
      $0.steps.map(\.work.count).reduce(0, +)
    }
    #expect(expected.first == 5)
    let script = """
      import base64, json, sys
      from google.protobuf import json_format
      from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
      document = json.load(open(sys.argv[1]))
      # The generic JSON reader takes ids as base64, as protobuf's JSON mapping has bytes;
      # OTLP/JSON has them in hexadecimal, so convert them first, as OTLP receivers do.
      for resource in document["resourceSpans"]:
          for scope in resource["scopeSpans"]:
              for span in scope["spans"]:
                  for key in ("traceId", "spanId", "parentSpanId"):
                      if key in span:
                          span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
      request = json_format.Parse(json.dumps(document), trace_service_pb2.ExportTraceServiceRequest())
      for resource in request.resource_spans:
          spans = [span for scope in resource.scope_spans for span in scope.spans]
          roots = [span for span in spans if not span.parent_span_id]
          assert len(roots) == 1, "one root span per launch"
          root = roots[0]
          children = [span for span in spans if span.parent_span_id]
          assert all(child.parent_span_id == root.span_id for child in children)
          assert all(span.trace_id == root.trace_id and len(span.trace_id) == 16 for span in spans)
          assert all(root.start_time_unix_nano <= child.start_time_unix_nano <= child.end_time_unix_nano <= root.end_time_unix_nano for child in children)
          attributes = {a.key: a.value for a in root.attributes}
          service = {a.key: a.value.string_value for a in resource.resource.attributes}
          print(root.name, len(children), service["service.version"],
                attributes["launch.outcome"].string_value, attributes["launch.reason"].string_value,
                attributes["launch.first_launch"].bool_value,
                ",".join(sorted(e.name for e in root.events)),
                ",".join("%s#%d:%d" % (c.name, next(a.value.int_value for a in c.attributes if a.key == "launch.step.attempt"), c.status.code) for c in children))
      """
    let (status, text) = try await runTool(["python3", "-c", script, folder.path("two.json")])
    #expect(status == 0, "python3 with opentelemetry-proto is needed (.ci/run installs it)")
    let lines = text.split(separator: "\n").map(String.init)
    // Required: without the module the lines are not there, and reading one would stop the
    // whole test run instead of failing this test.
    try #require(lines.count == 2, "\(text)")
    #expect(
      lines.first
        == "launch Retry 5 3.1.0 succeeded notification True milestone interactive flaky#1:2,flaky#2:2,flaky#3:1,page#1:1,later#1:1"
    )
    #expect(lines.last?.hasPrefix("launch Retry \(expected[1]) 3.1.0 succeeded") == true)
    // `run --otlp` writes the same trace for its launch as `export` does from its report.
    let (runStatus, runText) = try await runTool([
      "python3", "-c", script, folder.path("run.otlp.json"),
    ])
    #expect(runStatus == 0)
    #expect(runText == lines[0] + "\n")
  }
}
