import Foundation
import LaunchOrchestrator
import LaunchPlugins

/// The cold start of a launch, each contender in a process of its own: what an app pays
/// before its first step, against what reading the same manifest with Foundation costs.
///
/// The bench starts itself again with a hidden argument (`cold-start ours|foundation FILE`);
/// the child times its own work, from the first line of `main` to done, and prints the
/// nanoseconds. Both contenders are the same binary, so loading it (the dynamic linker, the
/// Swift runtime, Foundation's libraries) is the same for both and left out: what is compared
/// is the first use of the library's code and data against the first use of Foundation's JSON.
enum ColdStart {
  /// The child's side: does one contender's work once and prints the nanoseconds it took.
  static func child(_ arguments: [String]) throws {
    let start = ContinuousClock.now
    guard arguments.count == 2 else { throw BenchmarkError("cold-start ours|foundation FILE") }
    let path = arguments[1]
    switch arguments[0] {
    case "ours":
      // What an app does first: the built-in kinds, then its manifest, validated and planned.
      let plan = try ManifestLoader(registry: .builtIn).load(path: path)
      guard !plan.steps.isEmpty else { throw BenchmarkError("no steps") }
    case "foundation":
      // What an app could do instead with Foundation alone: parse the file, then decode it.
      let data = try Data(contentsOf: URL(fileURLWithPath: path))
      let object = try JSONSerialization.jsonObject(with: data)
      let manifest = try JSONDecoder().decode(PlainManifest.self, from: data)
      guard object is [String: Any], !manifest.steps.isEmpty else {
        throw BenchmarkError("no steps")
      }
    default:
      throw BenchmarkError("cold-start ours|foundation FILE")
    }
    let elapsed = ContinuousClock.now - start
    print(
      Int64(elapsed.components.seconds) * 1_000_000_000 + elapsed.components.attoseconds
        / 1_000_000_000)
  }

  /// A manifest as an app would declare it for `JSONDecoder`: the fields of
  /// `manifests/app.json`, with plain types.
  struct PlainManifest: Codable {
    struct Defaults: Codable {
      var timeout: String?
      var priority: String?
      var onFailure: String?
    }

    struct Retry: Codable {
      var attempts: Int
      var backoff: String?
    }

    struct Params: Codable {
      var path: String?
      var schema: String?
      var createFolders: Bool?
      var limit: Int?
      var sort: String?
      var directory: String?
      var maxAge: String?
    }

    struct Step: Codable {
      var id: String
      var plugin: String
      var priority: String?
      var description: String?
      var params: Params?
      var retry: Retry?
      var expectedDuration: String?
      var dependsOn: [String]?
      var after: [String]?
      var deferUntil: String?
      var onFailure: String?
      var timeout: String?
    }

    var version: Int
    var name: String
    var defaults: Defaults?
    var milestones: [String: [String]]?
    var steps: [Step]
  }
}

extension Benchmarks {
  /// `manifests/app.json` loaded by a fresh process with the built-in registry, against a
  /// fresh process parsing and decoding it with Foundation: 20 pairs, alternating which goes
  /// first, medians of each side's own timing.
  func coldStart() async throws -> Result {
    var result = Result(name: "coldStart")
    let manifest = "manifests/app.json"
    let pairs = 20
    func run(_ contender: String) throws -> (work: Double, process: Double) {
      let clock = ContinuousClock()
      let start = clock.now
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      process.arguments = ["cold-start", contender, manifest]
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let data = output.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      let wall = (clock.now - start).secondsValue
      guard process.terminationStatus == 0,
        let nanoseconds = Double(
          String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
      else {
        throw BenchmarkError("the cold-start child for '\(contender)' failed")
      }
      return (nanoseconds / 1e9, wall)
    }
    var ours = Sample(values: [])
    var foundation = Sample(values: [])
    var oursProcess = Sample(values: [])
    var foundationProcess = Sample(values: [])
    for pair in 0..<pairs {
      try await Task.sleep(for: .milliseconds(20))
      // Alternating which goes first: the second of a pair finds the binary's pages cached.
      for contender in pair.isMultiple(of: 2) ? ["ours", "foundation"] : ["foundation", "ours"] {
        let (work, wall) = try run(contender)
        if contender == "ours" {
          ours.values.append(work)
          oursProcess.values.append(wall)
        } else {
          foundation.values.append(work)
          foundationProcess.values.append(wall)
        }
      }
    }
    result.field("pairs", pairs)
    result.field("oursMillis", ours.median * 1000)
    result.field("foundationMillis", foundation.median * 1000)
    result.field("ratio", ours.median / foundation.median)
    result.field("oursProcessMillis", oursProcess.median * 1000)
    result.field("foundationProcessMillis", foundationProcess.median * 1000)
    result.lines.append(
      "\(manifest), each in a fresh process, timed inside it (median [min-max] of \(pairs)):")
    result.lines.append(
      "  registry + load + plan          \(ours.text(scale: 1000, unit: "ms", digits: 3))")
    result.lines.append(
      "  JSONSerialization + JSONDecoder \(foundation.text(scale: 1000, unit: "ms", digits: 3))")
    result.lines.append(
      String(format: "  ratio %.2fx", ours.median / foundation.median)
        + "; whole process, spawn to exit: "
        + "\(oursProcess.text(scale: 1000, unit: "ms")) vs \(foundationProcess.text(scale: 1000, unit: "ms"))"
    )
    return result
  }
}
