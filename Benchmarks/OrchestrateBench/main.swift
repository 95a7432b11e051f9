import Foundation
import LaunchJSON
import LaunchOrchestrator

let arguments = Array(CommandLine.arguments.dropFirst())
let usage =
  "usage: orchestrate-bench [--quick] [--json] | only BENCHMARK [--quick] [--json] | engine [STEPS] [--runs N] [--timeouts] [--no-events | --async-stream] | fixed [RUNS] [--pause MS] [--floor] | plan FILE [RUNS] | write-manifest STEPS FILE | parse FILE [RUNS] | fuzz [--cases N] [--seed S] | music-page LIBRARY | music-launch DATA_FOLDER"

func emit(_ text: String, json: Bool) {
  // With --json, stdout carries only the JSON object; progress goes to stderr.
  if json {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  } else {
    print(text)
  }
}

do {
  switch arguments.first {
  case "cold-start":
    // A fresh process of the coldStart benchmark: first, before anything else runs.
    try ColdStart.child(Array(arguments.dropFirst()))
  case "plan-child":
    // A fresh process of the manifest benchmark.
    guard arguments.count == 3, let runs = Int(arguments[2]), runs > 0 else {
      throw BenchmarkError(usage)
    }
    try Benchmarks(quick: true).planChild(arguments[1], runs: runs)
  case "fixed":
    // One-step launches, each after a pause, as `fixedMicros` runs them: a steady target for
    // `perf stat` and `perf record` on the fixed cost of a launch.
    let runs = arguments.dropFirst().lazy.compactMap { Int($0) }.first ?? 200
    let pause = arguments.firstIndex(of: "--pause").flatMap { Int(arguments[$0 + 1]) } ?? 20
    let sample = try await Benchmarks(quick: true).oneStepLaunches(
      runs: runs, pause: .milliseconds(pause), floor: arguments.contains("--floor"))
    print("µs a launch:", sample.text(scale: 1e6, unit: "µs"))
  case "music-page":
    guard arguments.count == 2 else { throw BenchmarkError(usage) }
    try await Benchmarks(quick: true).firstPage(of: arguments[1])
  case "music-launch":
    guard arguments.count == 2 else { throw BenchmarkError(usage) }
    try await Benchmarks(quick: true).launchInteractive(data: arguments[1])
  case "fuzz":
    try await runFuzz(Array(arguments.dropFirst()))
  case "engine":
    // The engine alone on the noopDAG graph, repeated: a steady target for `perf record`.
    // `--runs N` launches (9 unless given): `perf stat` of two counts, less each other,
    // leaves the cost of the launches alone, without the plan's building.
    let runsAt = arguments.firstIndex(of: "--runs")
    let runs =
      runsAt.flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? 9
    let steps =
      arguments.indices.dropFirst().lazy.filter { $0 != runsAt.map { $0 + 1 } }
      .compactMap { Int(arguments[$0]) }.first ?? 100_000
    let delivery: EventDelivery? =
      arguments.contains("--no-events")
      ? nil : arguments.contains("--async-stream") ? .asyncStream : .launchEvents
    let sample = try await Benchmarks(quick: true).engineOnly(
      steps: steps, runs: runs, timeouts: arguments.contains("--timeouts"), delivery: delivery)
    print("µs per step:", sample.text(scale: 1e6 / Double(steps), unit: "µs"))
    print(
      sample.values.map { String(format: "%.2f", $0 / Double(steps) * 1e6) }.joined(separator: " "))
  case "plan":
    // Loading, validating and planning one manifest file, repeated: a steady target for
    // `perf record` on plan building.
    guard arguments.count >= 2 else { throw BenchmarkError(usage) }
    let runs = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
    let loads = try Benchmarks(quick: true).timedLoads(of: arguments[1], runs: runs)
    let times = Sample(values: loads.seconds)
    print("µs per step:", times.text(scale: 1e6 / Double(max(loads.steps, 1)), unit: "µs"))
  case "write-manifest":
    // The manifest benchmark's generated manifest of STEPS steps, written to FILE: the same
    // file for `plan FILE RUNS` under callgrind before and after a change.
    guard arguments.count == 3, let steps = Int(arguments[1]), steps > 0 else {
      throw BenchmarkError(usage)
    }
    try Data(
      LayeredDAG(nodes: steps, width: 100).manifest(
        kind: "simulate", params: #"{ "duration": "1ms" }"#)
    ).write(to: URL(fileURLWithPath: arguments[2]))
  case "parse":
    // `JSONParser.parse` of one file, repeated: a steady target for callgrind on reading
    // reports and other JSON the CLI parses into values.
    guard arguments.count >= 2, let data = FileManager.default.contents(atPath: arguments[1])
    else { throw BenchmarkError(usage) }
    let runs = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
    let bytes = Array(data)
    var values = 0
    for _ in 0..<runs { values += try JSONParser.parse(bytes).root.members?.count ?? 0 }
    print("top-level members:", values / max(runs, 1))
  case "only":
    // One benchmark, for a quick look while working on what it measures.
    let benchmarks = Benchmarks(quick: arguments.contains("--quick"))
    let chosen: [String: (Benchmarks) async throws -> Result] = [
      "coldStart": { try await $0.coldStart() },
      "noopDAG": { try await $0.noopDAG(sizes: [1_000, 10_000]) },
      "session": { try await $0.session() },
      "sleepDAG": { try await $0.sleepDAG() },
      "manifest": { try await $0.manifest() }, "seedReplay": { try await $0.seedReplay() },
      "cliStart": { try await $0.cliStart() }, "cli": { try await $0.cli() },
      "writes": { try await $0.writes() },
      "musicPage": { try await $0.musicPage() },
      "musicLaunch": { try await $0.musicLaunch() },
    ]
    guard arguments.count >= 2, let benchmark = chosen[arguments[1]] else {
      throw BenchmarkError("name one of: \(chosen.keys.sorted().joined(separator: ", ")); \(usage)")
    }
    let result = try await benchmark(benchmarks)
    for line in result.lines { emit(line, json: arguments.contains("--json")) }
    if arguments.contains("--json") {
      let fields = result.fields.map { JSONMember(key: $0.0, value: $0.1) }
      let object = JSONValue(
        .object([JSONMember(key: result.name, value: JSONValue(.object(fields)))]))
      print(JSONWriter.prettyPrinted(object), terminator: "")
    }
  default:
    let unknown = arguments.filter { !["--quick", "--json"].contains($0) }
    guard unknown.isEmpty else {
      throw BenchmarkError("unknown argument '\(unknown[0])'; \(usage)")
    }
    let json = arguments.contains("--json")
    let benchmarks = Benchmarks(quick: arguments.contains("--quick"))
    let machine =
      "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    emit("orchestrate-bench\(benchmarks.quick ? " --quick" : ""): \(machine)", json: json)
    var members: [JSONMember] = [
      JSONMember(key: "quick", value: JSONValue(.bool(benchmarks.quick)))
    ]
    let all: [(Benchmarks) async throws -> Result] = [
      { try await $0.coldStart() }, { try await $0.noopDAG() }, { try await $0.session() },
      { try await $0.sleepDAG() },
      { try await $0.manifest() },
      { try await $0.seedReplay() }, { try await $0.cliStart() }, { try await $0.cli() },
      { try await $0.writes() },
      { try await $0.musicPage() },
      { try await $0.musicLaunch() },
    ]
    for benchmark in all {
      let result = try await benchmark(benchmarks)
      emit("\n\(result.name)", json: json)
      for line in result.lines { emit("  " + line, json: json) }
      members.append(
        JSONMember(
          key: result.name,
          value: JSONValue(.object(result.fields.map { JSONMember(key: $0.0, value: $0.1) }))))
    }
    if json { print(JSONWriter.prettyPrinted(JSONValue(.object(members))), terminator: "") }
  }
} catch {
  FileHandle.standardError.write(Data("orchestrate-bench: \(error)\n".utf8))
  exit(1)
}
