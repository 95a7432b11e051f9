import Foundation
import LaunchJSON
import LaunchOrchestrator
import MusicLibraryPlugin
import SQLiteStore
import SampleDataPlugin
import SimulatePlugin
import StoreInitPlugin

/// One benchmark's results: fields for `--json`, lines for people.
struct Result {
  var name: String
  var fields: [(String, JSONValue)] = []
  var lines: [String] = []

  mutating func field(_ key: String, _ value: Double) {
    fields.append((key, JSONValue(.number(value.isFinite ? (value * 1e6).rounded() / 1e6 : -1))))
  }

  mutating func field(_ key: String, _ value: Int) {
    fields.append((key, JSONValue(integer: value)))
  }
}

struct Benchmarks {
  let quick: Bool
  let registry: PluginRegistry

  init(quick: Bool) {
    self.quick = quick
    var registry = PluginRegistry()
    registry.register([
      SimulateStep.self, StoreInitStep.self, SampleDataStep.self, MusicPageStep.self,
      MusicSearchStep.self,
    ])
    registry.register(kind: "noop") { _ in }
    self.registry = registry
  }

  /// The plan of a manifest's bytes, with the bench's plugins.
  func plan(_ bytes: [UInt8]) throws -> LaunchPlan {
    try ManifestLoader(registry: registry).load(
      bytes: bytes, file: "bench.json",
      directory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
  }

  /// The engine, with and without a timeout on every step (and with its events on an
  /// `AsyncStream` instead of `LaunchEvents`), against the hand-written floor and OperationQueue, on a 10,000-step graph of steps that do nothing; then 1,000 and
  /// 100,000 steps to show the cost per step stays flat.
  func noopDAG(sizes: [Int] = [1_000, 10_000, 100_000]) async throws -> Result {
    var result = Result(name: "noopDAG")
    for size in sizes {
      let dag = LayeredDAG(nodes: size, width: 100)
      let plain = try plan(dag.manifest(kind: "noop"))
      let timed = try plan(dag.manifest(kind: "noop", defaults: #"{ "timeout": "30s" }"#))
      // A 1,000-step launch takes a few milliseconds: more rounds to steady its median.
      let repetitions =
        size >= 100_000 ? (quick ? 1 : 5) : size <= 1_000 ? (quick ? 15 : 31) : (quick ? 5 : 15)
      var contenders: [(name: String, run: () async throws -> Double)] = [
        ("engine", { await seconds { _ = await runEngine(plain) } }),
        ("engineWithTimeouts", { await seconds { _ = await runEngine(timed) } }),
        (
          "engineAsyncStream",
          { await seconds { _ = await runEngine(plain, delivery: .asyncStream) } }
        ),
        ("floor", { await seconds { await dag.runFloor() } }),
        (
          "operationQueue",
          {
            await seconds {
              await dag.runOperationQueue(width: ProcessInfo.processInfo.activeProcessorCount)
            }
          }
        ),
      ]
      if size <= 1_000 {
        // The default width is quadratic on Linux (12.9 s for 10,000 steps here): only small graphs.
        contenders.append(
          ("operationQueueDefault", { await seconds { await dag.runOperationQueue(width: nil) } }))
      }
      let samples = try await interleaved(repetitions: repetitions, contenders)
      func micros(_ name: String) -> Double { (samples[name]?.median ?? .nan) / Double(size) * 1e6 }
      let queue = min(
        micros("operationQueue"),
        samples["operationQueueDefault"] == nil ? .infinity : micros("operationQueueDefault"))
      let suffix = size == 10_000 ? "" : "At\(size)"
      result.field("steps\(suffix)", size)
      result.field("engineMicrosPerStep\(suffix)", micros("engine"))
      result.field("engineWithTimeoutsMicrosPerStep\(suffix)", micros("engineWithTimeouts"))
      result.field("engineAsyncStreamMicrosPerStep\(suffix)", micros("engineAsyncStream"))
      result.field("floorMicrosPerStep\(suffix)", micros("floor"))
      result.field("operationQueueMicrosPerStep\(suffix)", queue)
      result.field("overheadRatio\(suffix)", micros("engine") / micros("floor"))
      result.field("timeoutOverheadRatio\(suffix)", micros("engineWithTimeouts") / micros("floor"))
      result.field("operationQueueRatio\(suffix)", queue / micros("engine"))
      result.lines.append("\(size) steps, µs per step (median [min-max] of \(repetitions)):")
      for name in contenders.map(\.name) {
        let text = samples[name]?.text(scale: 1e6 / Double(size), unit: "µs") ?? "-"
        result.lines.append("  \(name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(text)")
      }
      result.lines.append(
        String(
          format:
            "  overhead %.2fx the floor, %.2fx with timeouts; OperationQueue %.2fx the engine",
          micros("engine") / micros("floor"),
          micros("engineWithTimeouts") / micros("floor"), queue / micros("engine")))
    }
    try await fixedCost(into: &result)
    return result
  }

  /// The fixed cost of a launch (`fixedMicros`): the engine on a one-step plan, events and
  /// the report on, against the floor on the same step, alternating; each launch alone after
  /// the pause, as an app launches once from a quiet process.
  private func fixedCost(into result: inout Result) async throws {
    let dag = LayeredDAG(nodes: 1, width: 100)
    let plain = try plan(dag.manifest(kind: "noop"))
    let repetitions = quick ? 41 : 101
    let samples = try await interleaved(
      repetitions: repetitions,
      [
        ("engine", { await seconds { _ = await runEngine(plain) } }),
        ("floor", { await seconds { await dag.runFloor() } }),
      ])
    let engine = (samples["engine"]?.median ?? .nan) * 1e6
    let floor = (samples["floor"]?.median ?? .nan) * 1e6
    result.field("fixedMicros", engine)
    result.field("floorFixedMicros", floor)
    result.lines.append("a one-step launch, µs (median [min-max] of \(repetitions)):")
    for name in ["engine", "floor"] {
      let text = samples[name]?.text(scale: 1e6, unit: "µs") ?? "-"
      result.lines.append("  \(name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(text)")
    }
  }

  /// The seconds of `runs` one-step launches (the engine with its events and report, or the
  /// floor), each after `pause`, as `fixedMicros` measures them.
  func oneStepLaunches(runs: Int, pause: Duration, floor: Bool) async throws -> Sample {
    let dag = LayeredDAG(nodes: 1, width: 100)
    let plain = try plan(dag.manifest(kind: "noop"))
    var sample = Sample(values: [])
    for _ in 0..<runs {
      try await Task.sleep(for: pause)
      sample.values.append(
        floor
          ? await seconds { await dag.runFloor() } : await seconds { _ = await runEngine(plain) })
    }
    return sample
  }

  /// The seconds of the engine alone on the noopDAG graph of `steps` steps, `runs` times.
  func engineOnly(steps: Int, runs: Int, timeouts: Bool, delivery: EventDelivery?) async throws
    -> Sample
  {
    let plan = try plan(
      LayeredDAG(nodes: steps, width: 100).manifest(
        kind: "noop", defaults: timeouts ? #"{ "timeout": "30s" }"# : "{}"))
    let samples = try await interleaved(
      repetitions: runs,
      [
        (
          "engine",
          {
            await seconds {
              if let delivery {
                _ = await runEngine(plan, delivery: delivery)
              } else {
                _ = await LaunchEngine().run(plan)
              }
            }
          }
        )
      ])
    return samples["engine"] ?? Sample(values: [])
  }

  /// 10 layers of 50 steps that each take 10 ms: how close the engine gets to the critical
  /// path (beside ten 10 ms sleeps in a row, what the machine's timers alone add), and
  /// blocking steps against OperationQueue running Thread.sleep, and again once the blocking
  /// pool's threads have exited.
  func sleepDAG() async throws -> Result {
    var result = Result(name: "sleepDAG")
    let dag = LayeredDAG(nodes: 500, width: 50)
    let sleeping = try plan(dag.manifest(kind: "simulate", params: #"{ "duration": "10ms" }"#))
    let blocking = try plan(
      dag.manifest(kind: "simulate", params: #"{ "duration": "10ms", "blocking": true }"#))
    let samples = try await interleaved(
      repetitions: quick ? 5 : 15,
      [
        ("engine", { await seconds { _ = await runEngine(sleeping) } }),
        (
          "sleepChain",
          {
            // What the machine's timers alone cost: ten 10 ms sleeps, one after another.
            try await seconds {
              for _ in 0..<10 { try await Task.sleep(for: .milliseconds(10)) }
            }
          }
        ),
        ("blockingEngine", { await seconds { _ = await runEngine(blocking) } }),
        (
          "blockingOperationQueue",
          {
            await seconds {
              await dag.runOperationQueue(width: 64) { Thread.sleep(forTimeInterval: 0.01) }
            }
          }
        ),
      ])
    // The blocking pool gives a thread back after 2 s idle: a blocking launch after a quiet
    // spell starts its threads again. Not interleaved: each run needs the spell first.
    var afterIdle = Sample(values: [])
    for _ in 0..<(quick ? 1 : 3) {
      try await Task.sleep(for: .milliseconds(2_500))
      afterIdle.values.append(await seconds { _ = await runEngine(blocking) })
    }
    let criticalPath = 0.1
    let engine = samples["engine"]?.median ?? .nan
    result.field("criticalPathSeconds", criticalPath)
    result.field("engineSeconds", engine)
    result.field("overheadPercent", (engine - criticalPath) / criticalPath * 100)
    result.field("sleepChainSeconds", samples["sleepChain"]?.median ?? .nan)
    result.field("blockingEngineSeconds", samples["blockingEngine"]?.median ?? .nan)
    result.field("blockingOperationQueueSeconds", samples["blockingOperationQueue"]?.median ?? .nan)
    result.field("blockingEngineAfterIdleSeconds", afterIdle.median)
    result.lines.append("500 steps in 10 layers, 10 ms each (critical path 0.100s):")
    for name in ["engine", "sleepChain", "blockingEngine", "blockingOperationQueue"] {
      result.lines.append(
        "  \(name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(samples[name]?.text(unit: "s", digits: 3) ?? "-")"
      )
    }
    result.lines.append(
      "  blockingEngine, its threads idled out first \(afterIdle.text(unit: "s", digits: 3))")
    return result
  }

  /// Reading, decoding, validating and planning a generated manifest, from its file, in a
  /// process of its own for each size: an app loads its manifest early in a fresh process, not
  /// in a heap the other benchmarks have cut up.
  func manifest() async throws -> Result {
    var result = Result(name: "manifest")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    result.lines.append("read + decode + validate + plan, each size in a process of its own:")
    for size in [10_000, 100_000] {
      let file = folder.appendingPathComponent("m\(size).json")
      try Data(
        LayeredDAG(nodes: size, width: 100).manifest(
          kind: "simulate", params: #"{ "duration": "1ms" }"#)
      ).write(to: file)
      let runs = quick ? 5 : (size > 10_000 ? 7 : 15)
      let numbers = try numbersFromChild("plan-child", file.path, "\(runs)")
      let load = Sample(values: Array(numbers.dropFirst()))
      let bytes = numbers[0] / Double(size)
      let suffix = size == 10_000 ? "" : "Large"
      let micros = load.median / Double(size) * 1e6
      let firstMicros = (load.values.first ?? .nan) / Double(size) * 1e6
      result.field("steps\(suffix)", size)
      result.field("loadValidatePlanSeconds\(suffix)", load.median)
      result.field("planMicrosPerStep\(suffix)", micros)
      result.field("firstPlanMicrosPerStep\(suffix)", firstMicros)
      result.field("planBytesPerStep\(suffix)", bytes.rounded())
      result.lines.append(
        "  \(size) steps  \(load.text(unit: "s", digits: 3))"
          + String(
            format: ", %.2f µs and %.0f bytes a step (the first load %.2f µs a step)", micros,
            bytes, firstMicros))
    }
    try migrationsLoad(in: folder, into: &result)
    return result
  }

  /// A one-step manifest whose `store.init` names a folder of 40 migrations, against the same
  /// step with a built-in schema, loaded alternately in this process (31 of each, medians): what
  /// an app's migrations folder adds to every launch's load, where only its names are read.
  private func migrationsLoad(in folder: URL, into result: inout Result) throws {
    let migrations = folder.appendingPathComponent("migrations/app")
    try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: true)
    let count = 40
    for number in 1...count {
      let table = "t\(number)"
      let sql =
        (number == 1 ? "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" : "")
        + "CREATE TABLE \(table) (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created_at REAL);\n"
        + "CREATE INDEX \(table)_created ON \(table) (created_at DESC, id);\n"
        + "ALTER TABLE items ADD COLUMN c\(number) INTEGER;\n"
      try Data(sql.utf8).write(
        to: migrations.appendingPathComponent(
          String(format: "%03d_add_table_%d.sql", number, number)))
    }
    func manifest(_ params: String) throws -> String {
      let file = folder.appendingPathComponent("store-\(UUID().uuidString).json")
      try Data(
        #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": \#(params) } ] }"#
          .utf8
      ).write(to: file)
      return file.path
    }
    let withFolder = try manifest(#"{ "path": "app.sqlite", "migrations": "migrations/app" }"#)
    let builtIn = try manifest(#"{ "path": "app.sqlite", "schema": "books" }"#)
    let loader = ManifestLoader(registry: registry)
    let clock = ContinuousClock()
    func timedLoad(_ path: String) throws -> Double {
      let start = clock.now
      _ = try loader.load(path: path)
      return (clock.now - start).secondsValue
    }
    var folderSeconds: [Double] = []
    var builtInSeconds: [Double] = []
    for _ in 0..<31 {
      folderSeconds.append(try timedLoad(withFolder))
      builtInSeconds.append(try timedLoad(builtIn))
    }
    let withMigrations = Sample(values: folderSeconds)
    let alone = Sample(values: builtInSeconds)
    result.field("migrationsLoadMicros", withMigrations.median * 1e6)
    result.field("builtInSchemaLoadMicros", alone.median * 1e6)
    result.field("migrationsLoadRatio", withMigrations.median / alone.median)
    result.lines.append(
      "  a store.init step with \(count) migration files \(withMigrations.text(scale: 1e6, unit: "µs"))"
        + ", with a built-in schema \(alone.text(scale: 1e6, unit: "µs"))"
        + String(format: ": %.2fx", withMigrations.median / alone.median))
  }

  /// The child's side of ``manifest()``: prints what ``timedLoads(of:runs:)`` measured, the
  /// bytes first, then the seconds of each load.
  func planChild(_ path: String, runs: Int) throws {
    let loads = try timedLoads(of: path, runs: runs)
    print(([Double(loads.grownBy)] + loads.seconds).map { "\($0)" }.joined(separator: " "))
  }

  /// Loads `path` `runs` times: how much the process's resident memory grew by to hold the
  /// first plan, the seconds of each load, and the plan's steps. The first loads of a process
  /// pay for memory it has not used yet (the kernel's fresh pages, the allocator growing its
  /// heap): here the first two, so that of 5 the median is the slowest of the other three.
  /// Each plan is let go after its clock stops: an app keeps its plan for the launch, so
  /// freeing it is not plan building.
  func timedLoads(of path: String, runs: Int) throws -> (
    grownBy: Int, seconds: [Double], steps: Int
  ) {
    let loader = ManifestLoader(registry: registry)
    var grownBy = 0
    var seconds: [Double] = []
    var steps = 0
    let clock = ContinuousClock()
    for run in 0..<runs {
      let before = residentBytes()
      let start = clock.now
      let plan = try loader.load(path: path)
      seconds.append((clock.now - start).secondsValue)
      if run == 0 { grownBy = residentBytes() - before }
      steps = plan.steps.count
    }
    return (grownBy, seconds, steps)
  }

  /// `plan` on a 10,000-step manifest against `validate` of it, each a process of the
  /// release `orchestrate`, alternating: what drawing the plan's table and timeline adds to
  /// reading the manifest. `plan --durations` with a report of the manifest's launch, and
  /// `compare` of that report with itself, against the same `validate`: reading a report (five
  /// times the manifest's bytes) must keep them within 3x of it, as it grows linearly.
  func cli() async throws -> Result {
    var result = Result(name: "cli")
    let binary = try releaseOrchestrate(static: false)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("m10000.json")
    try Data(
      LayeredDAG(nodes: 10_000, width: 100).manifest(
        kind: "simulate", params: #"{ "duration": "1ms" }"#)
    ).write(to: file)
    let report = folder.appendingPathComponent("r10000.json").path
    func command(_ arguments: [String]) throws -> Double {
      let clock = ContinuousClock()
      let start = clock.now
      let process = Process()
      process.executableURL = binary
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        throw BenchmarkError(
          "orchestrate \(arguments.joined(separator: " ")) failed on the 10,000-step manifest")
      }
      return (clock.now - start).secondsValue
    }
    _ = try command(["run", file.path, "--quiet", "--report", report])
    let samples = try await interleaved(
      repetitions: quick ? 7 : 15,
      [
        ("validate", { try command(["validate", file.path]) }),
        ("plan", { try command(["plan", file.path]) }),
        ("durations", { try command(["plan", file.path, "--durations", report]) }),
        ("compare", { try command(["compare", report, report]) }),
      ])
    let validate = samples["validate"]?.median ?? .nan
    let plan = samples["plan"]?.median ?? .nan
    let durations = samples["durations"]?.median ?? .nan
    let compare = samples["compare"]?.median ?? .nan
    result.field("steps", 10_000)
    result.field("validateSeconds", validate)
    result.field("planSeconds", plan)
    result.field("planToValidateRatio", plan / validate)
    result.field("planDurationsSeconds", durations)
    result.field("planDurationsToValidateRatio", durations / validate)
    result.field("compareSeconds", compare)
    result.field("compareToValidateRatio", compare / validate)
    result.lines.append("orchestrate on a 10,000-step manifest, release build, as a process:")
    result.lines.append(
      "  validate            \(samples["validate"]?.text(unit: "s", digits: 3) ?? "-")")
    result.lines.append(
      "  plan                \(samples["plan"]?.text(unit: "s", digits: 3) ?? "-")")
    result.lines.append(
      "  plan --durations    \(samples["durations"]?.text(unit: "s", digits: 3) ?? "-")")
    result.lines.append(
      "  compare             \(samples["compare"]?.text(unit: "s", digits: 3) ?? "-")")
    result.lines.append(
      String(
        format:
          "  plan / validate %.2fx, plan --durations / validate %.2fx, compare / validate %.2fx",
        plan / validate, durations / validate, compare / validate))
    return result
  }

  /// The BookTrack replay: time to interactive, serial as shipped and orchestrated.
  func seedReplay() async throws -> Result {
    var result = Result(name: "seedReplay")
    let loader = ManifestLoader(registry: registry)
    let serial = try loader.load(path: "manifests/simulated/booktrack-serial.json")
    let orchestrated = try loader.load(path: "manifests/simulated/booktrack.json")
    func interactive(_ plan: LaunchPlan) async -> Double {
      let report = await runEngine(plan)
      return (report.time(ofMilestone: "interactive") ?? nil)?.secondsValue ?? .nan
    }
    let samples = try await interleaved(
      repetitions: quick ? 1 : 3,
      [
        ("serial", { await interactive(serial) }),
        ("orchestrated", { await interactive(orchestrated) }),
      ])
    let serialSeconds = samples["serial"]?.median ?? .nan
    let orchestratedSeconds = samples["orchestrated"]?.median ?? .nan
    result.field("serialInteractiveSeconds", serialSeconds)
    result.field("orchestratedInteractiveSeconds", orchestratedSeconds)
    result.field("speedup", serialSeconds / orchestratedSeconds)
    result.lines.append(
      String(
        format: "time to interactive: serial %.3fs, orchestrated %.3fs, %.2fx faster",
        serialSeconds,
        orchestratedSeconds, serialSeconds / orchestratedSeconds))
    return result
  }

  /// Wall time of the release `orchestrate validate` on a small manifest, as a process: the
  /// distribution build (`--static-swift-stdlib`), and the default dynamic one beside it.
  func cliStart() async throws -> Result {
    var result = Result(name: "cliStart")
    let staticBinary = try releaseOrchestrate(static: true)
    let dynamicBinary = try releaseOrchestrate(static: false)
    func validate(_ binary: URL) throws -> Double {
      let clock = ContinuousClock()
      let start = clock.now
      let process = Process()
      process.executableURL = binary
      process.arguments = ["validate", "manifests/simulated/booktrack.json"]
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      return (clock.now - start).secondsValue
    }
    let samples = try await interleaved(
      repetitions: quick ? 10 : 30,
      [("static", { try validate(staticBinary) }), ("dynamic", { try validate(dynamicBinary) })])
    result.field("cliValidateSmallSeconds", samples["static"]?.median ?? .nan)
    result.field("cliValidateSmallDynamicSeconds", samples["dynamic"]?.median ?? .nan)
    result.lines.append("orchestrate validate (small manifest), release build:")
    result.lines.append(
      "  --static-swift-stdlib  \(samples["static"]?.text(scale: 1000, unit: "ms") ?? "-")")
    result.lines.append(
      "  dynamic stdlib         \(samples["dynamic"]?.text(scale: 1000, unit: "ms") ?? "-")")
    return result
  }

  /// The release `orchestrate`, built first (a no-op when it is current): the static one in
  /// `.build-static/`, the dynamic one beside this binary. Built every time, not only when
  /// missing: `swift build --product orchestrate-bench` leaves an older `orchestrate` as it
  /// was, and the `cli` figures then timed code the bench was not built from.
  func releaseOrchestrate(static isStatic: Bool) throws -> URL {
    let binary =
      isStatic
      ? URL(fileURLWithPath: ".build-static/release/orchestrate")
      : URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("orchestrate")
    FileHandle.standardError.write(Data("building \(binary.path) if it is not current...\n".utf8))
    let build = Process()
    build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    build.arguments =
      ["swift", "build", "-c", "release", "--product", "orchestrate"]
      + (isStatic ? ["--static-swift-stdlib", "--scratch-path", ".build-static"] : [])
    // The build's progress goes with the bench's: with --json, stdout is the JSON alone.
    build.standardOutput = FileHandle.standardError
    try build.run()
    build.waitUntilExit()
    guard build.terminationStatus == 0 else {
      throw BenchmarkError("building \(binary.path) failed; run the bench from the package's root")
    }
    return binary
  }
}

/// The process's resident memory, in bytes; 0 where `/proc` does not say.
func residentBytes() -> Int {
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
    let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
  else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
