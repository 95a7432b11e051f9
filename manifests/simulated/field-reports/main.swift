import Foundation
import LaunchJSON
import LaunchOrchestrator

/// Generates launch reports as a fleet of BookTrack installs would upload them
/// (`booktrack.json`'s steps and milestones), so that `orchestrate stats` and `--svg` can be
/// tried at once:
///
///     swift run field-reports reports/                 # 3,000 files in a folder
///     swift run field-reports field.jsonl --count 1000000
///     orchestrate stats reports/ --by version --svg launches.svg
///
/// Three versions (2.0.0 defers the store's migration and launches faster), four launch
/// reasons, two experiment arms, three device classes, first launches, failures, routes,
/// cancellations and degraded launches. The same seed gives the same reports.
struct Generator {
  /// SplitMix64: a small, fast generator whose sequence is the same on every platform.
  struct Random {
    var state: UInt64

    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Log-normal around `median` with spread `sigma`.
    mutating func logNormal(median: Double, sigma: Double) -> Double {
      let u1 = max(unit(), 1e-12)
      let u2 = unit()
      let normal = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
      return median * exp(sigma * normal)
    }

    mutating func pick<T>(_ weighted: [(T, Double)]) -> T {
      var roll = unit() * weighted.reduce(0) { $0 + $1.1 }
      for (value, weight) in weighted {
        roll -= weight
        if roll < 0 { return value }
      }
      return weighted[weighted.count - 1].0
    }
  }

  var random: Random

  func seconds(_ value: Double) -> Duration {
    .microseconds(Int64((value * 1e6).rounded()))
  }

  mutating func report(number: Int) -> LaunchReport {
    let version = random.pick([("1.8.0", 0.2), ("1.9.0", 0.45), ("2.0.0", 0.35)])
    let reason = random.pick([
      ("userTap", 0.7), ("notification", 0.15), ("url", 0.05), ("backgroundTask", 0.1),
    ])
    let arm = random.pick([("control", 0.5), ("deferred-store", 0.5)])
    let device = random.pick([("iPhone12", 0.3), ("iPhone15", 0.5), ("iPad", 0.2)])
    let firstLaunch = random.unit() < 0.05
    let slowDevice = device == "iPhone12" ? 1.4 : device == "iPad" ? 0.9 : 1.0
    let storeMedian =
      (version == "2.0.0" ? 0.55 : version == "1.9.0" ? 1.1 : 1.5) * slowDevice
      * (firstLaunch ? 1.8 : 1) * (arm == "deferred-store" ? 0.85 : 1)
    let roll = random.unit()
    let outcome: LaunchOutcome =
      roll < 0.003 ? .failed : roll < 0.013 ? .routed : roll < 0.018 ? .cancelled : .succeeded
    var steps: [LaunchReport.Step] = []
    func line(
      _ id: String, _ priority: StepPriority, deferUntil: String? = nil, ready: Double?,
      start: Double?, end: Double?, state: StepState, error: String? = nil
    ) -> LaunchReport.Step {
      var step = LaunchReport.Step(
        id: id, plugin: "simulate", state: state, start: start.map(seconds),
        end: end.map(seconds), attempts: start == nil ? 0 : 1, usedFallback: false, error: error,
        ready: ready.map(seconds))
      step.priority = priority
      step.deferUntil = deferUntil
      return step
    }
    let storeEnd = random.logNormal(median: storeMedian, sigma: 0.35)
    let notificationsEnd = random.logNormal(median: 0.25 * slowDevice, sigma: 0.3)
    let storeFailed = outcome == .failed
    steps.append(
      line(
        "store", .critical, ready: 0, start: 0, end: storeEnd,
        state: storeFailed ? .failed : .succeeded, error: storeFailed ? "disk full" : nil))
    steps.append(
      line("notifications", .high, ready: 0, start: 0, end: notificationsEnd, state: .succeeded))
    let interactive = max(storeEnd, notificationsEnd)
    var milestones = [
      LaunchReport.Milestone(name: "firstFrame", time: seconds(storeEnd)),
      LaunchReport.Milestone(name: "interactive", time: seconds(interactive)),
    ]
    var end = interactive
    var degraded = false
    let deferred: [(String, StepPriority, Double, Bool)] = [
      ("queue", .background, 0.5, true), ("cleanupReviewed", .background, 0.5, true),
      ("cleanupOrphaned", .background, 0.5, false), ("sampleData", .low, 0.75, true),
    ]
    for (index, (id, priority, median, needsStore)) in deferred.enumerated() {
      switch outcome {
      case .failed where needsStore, .routed:
        let error = outcome == .routed ? "the launch ended first" : "dependency 'store' failed"
        steps.append(
          line(
            id, priority, deferUntil: "interactive", ready: nil, start: nil, end: nil,
            state: .skipped, error: error))
      case .cancelled:
        let start = interactive + Double(index) * 0.01
        let stop = start + random.logNormal(median: median / 3, sigma: 0.3)
        steps.append(
          line(
            id, priority, deferUntil: "interactive", ready: storeEnd, start: start, end: stop,
            state: .cancelled))
        end = max(end, stop)
      default:
        // Background work runs two at a time after `interactive`.
        let start =
          interactive + (index >= 2 ? 0.5 : 0) + random.logNormal(median: 0.002, sigma: 0.5)
        let stop = start + random.logNormal(median: median, sigma: 0.4)
        let failed = random.unit() < 0.02
        degraded = degraded || failed
        steps.append(
          line(
            id, priority, deferUntil: "interactive", ready: needsStore ? storeEnd : 0,
            start: start, end: stop, state: failed ? .failed : .succeeded,
            error: failed ? "the images folder is busy" : nil))
        end = max(end, stop)
      }
    }
    if outcome == .routed { milestones[1].time = nil }
    if outcome == .failed { milestones[1].time = nil }
    var report = LaunchReport(
      manifest: "booktrack.json", name: "BookTrack (orchestrated)",
      outcome: outcome == .succeeded && degraded ? .degraded : outcome,
      route: outcome == .routed ? LaunchRoute("maintenance") : nil, duration: seconds(end),
      milestones: milestones, criticalPath: ["store", "queue"], steps: steps)
    report.app = AppInfo(version: version, build: String(100 + number % 7))
    // Spread over the 30 days before 2026-11-23.
    report.startedAt = Date(timeIntervalSince1970: 1_795_392_000 - random.unit() * 30 * 86_400)
    report.labels = LaunchLabels(arm: arm, device: device)
    report.sinceProcessStart = seconds(random.logNormal(median: 0.18 * slowDevice, sigma: 0.3))
    var context = LaunchContext(
      reason: LaunchContext.Reason(rawValue: reason), isPrewarmed: random.unit() < 0.2)
    context.isFirstLaunch = firstLaunch
    context.launchNumber = firstLaunch ? 1 : 2 + Int(random.unit() * 200)
    report.context = context
    return report
  }
}

let arguments = Array(CommandLine.arguments.dropFirst())
func usage() -> Never {
  FileHandle.standardError.write(
    Data("usage: field-reports <folder | file.jsonl> [--count N] [--seed N]\n".utf8))
  exit(64)
}
guard let output = arguments.first, !output.hasPrefix("-") else { usage() }
var count = 3_000
var seed: UInt64 = 23
var rest = arguments.dropFirst()
while let option = rest.popFirst() {
  guard let value = rest.popFirst() else { usage() }
  switch option {
  case "--count": count = Int(value) ?? { usage() }()
  case "--seed": seed = UInt64(value) ?? { usage() }()
  default: usage()
  }
}
var generator = Generator(random: .init(state: seed))
if output.hasSuffix(".jsonl") {
  guard FileManager.default.createFile(atPath: output, contents: nil),
    let file = FileHandle(forWritingAtPath: output)
  else {
    FileHandle.standardError.write(Data("field-reports: cannot write '\(output)'\n".utf8))
    exit(73)
  }
  var batch = ""
  for number in 0..<count {
    batch += JSONWriter.compact(generator.report(number: number).json)
    batch += "\n"
    if batch.utf8.count > 8 << 20 {
      file.write(Data(batch.utf8))
      batch = ""
    }
  }
  file.write(Data(batch.utf8))
  try? file.close()
} else {
  let folder = URL(fileURLWithPath: output)
  try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  for number in 0..<count {
    let name = String(format: "report-%07d.json", number)
    try Data((JSONWriter.compact(generator.report(number: number).json) + "\n").utf8).write(
      to: folder.appendingPathComponent(name))
  }
}
print("field-reports: \(count) reports in '\(output)'")
