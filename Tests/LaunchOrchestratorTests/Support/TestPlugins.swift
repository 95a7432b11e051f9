import Foundation

@testable import LaunchOrchestrator

/// A value handed from one step to another in tests.
struct Token: Sendable, Equatable {
  var value: String
}

/// Does nothing; the kind scheduler tests use, since they decide outcomes themselves.
struct NoopStep: StepPlugin {
  static let kind = "noop"
  static let summary = "Does nothing."
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws {}
}

/// Sleeps on the launch clock for `duration`, then succeeds.
struct WaitStep: StepPlugin {
  static let kind = "wait"
  struct Parameters: StepParameters {
    @Parameter("How long to sleep.") var duration: Duration
  }
  let duration: Duration
  init(parameters: Parameters) { duration = parameters.duration }
  func run(_ context: StepContext) async throws {
    try await context.sleep(until: context.attemptStart + duration)
  }
}

/// Outputs a ``Token`` carrying its `value` parameter.
struct MakeTokenStep: StepPlugin {
  static let kind = "token.make"
  struct Parameters: StepParameters {
    @Parameter("The token's value.") var value: String
    @Parameter("Checked by the plugin, not the declaration.") var count: Int?
  }
  let value: String
  init(parameters: Parameters) throws {
    if let count = parameters.count, count < 0 {
      throw ParameterError("count", "'count' must be 0 or more, not \(count).")
    }
    value = parameters.value
  }
  func run(_ context: StepContext) async throws -> Token { Token(value: value) }
}

/// Needs a ``Token`` from a dependency and outputs it with a suffix.
struct UseTokenStep: StepPlugin {
  static let kind = "token.use"
  static let inputs: [StepInput] = [.required(Token.self)]
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> Token {
    Token(value: try context.input(Token.self).value + "+used")
  }
}

/// Outputs a number, to test a fallback of another output type.
struct MakeNumberStep: StepPlugin {
  static let kind = "number.make"
  init(parameters: NoParameters) {}
  func run(_ context: StepContext) async throws -> Int { 42 }
}

/// How many times each `count` step ran, by its `key`: tests share the process, so each
/// test uses keys of its own.
let stepRuns = Locked<[String: Int]>([:])

/// The output of a `count` step: which run made it.
struct Tally: Sendable, Equatable {
  var value: String
}

/// Counts its runs under `key`, fails the first `failRuns` of them, and outputs a ``Tally``
/// with the run's number.
struct CountStep: StepPlugin {
  static let kind = "count"
  struct Parameters: StepParameters {
    @Parameter("Where its runs are counted.") var key: String
    @Parameter("How many of its first runs fail.") var failRuns: Int?
    @Parameter("How long each run sleeps on the launch clock first.") var duration: Duration?
  }
  let key: String
  let failRuns: Int
  let duration: Duration?
  init(parameters: Parameters) {
    key = parameters.key
    failRuns = parameters.failRuns ?? 0
    duration = parameters.duration
  }
  func run(_ context: StepContext) async throws -> Tally {
    if let duration { try await context.sleep(until: context.attemptStart + duration) }
    let run = stepRuns.withLock { runs in
      runs[key, default: 0] += 1
      return runs[key]!
    }
    if run <= failRuns { throw StepFailure("run \(run) fails") }
    return Tally(value: "\(key)#\(run)")
  }
}

extension PluginRegistry {
  /// The kinds the core's tests use.
  static var testKinds: PluginRegistry {
    var registry = PluginRegistry()
    registry.register([
      NoopStep.self, WaitStep.self, MakeTokenStep.self, UseTokenStep.self, MakeNumberStep.self,
      CountStep.self,
    ])
    return registry
  }
}

/// Loads a manifest from JSON text, as if it were the file `test.json` in the temp folder.
func loadPlan(_ json: String, registry: PluginRegistry = .testKinds) throws(ManifestError)
  -> LaunchPlan
{
  try ManifestLoader(registry: registry).load(
    bytes: Array(json.utf8), file: "test.json", directory: FileManager.default.temporaryDirectory)
}

/// The diagnostics, one `line:column: severity: path: message` string each, for a manifest
/// that must fail to load.
func diagnostics(of json: String, registry: PluginRegistry = .testKinds) -> [String] {
  do {
    _ = try loadPlan(json, registry: registry)
    return []
  } catch {
    return error.diagnostics.map { $0.description.replacingOccurrences(of: "test.json:", with: "") }
  }
}
