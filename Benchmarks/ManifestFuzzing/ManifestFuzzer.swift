import Foundation
import LaunchJSON
import LaunchOrchestrator

/// Makes hostile manifests from valid ones, deterministically from a seed: byte flips,
/// truncation, type swaps, huge and negative numbers, deep nesting, very long strings,
/// unicode ids, duplicate keys, self-dependencies, cycles and 100,000-step chains.
public struct ManifestFuzzer {
  /// What one case did to the loader.
  public enum Outcome: Sendable, Equatable {
    /// It loaded into a plan.
    case loaded
    /// It was rejected with this many errors, each located and explained.
    case rejected(errors: Int)
  }

  /// Totals over a run.
  public struct Summary: Sendable {
    /// Cases run.
    public var cases = 0
    /// Cases that loaded.
    public var loaded = 0
    /// Cases rejected with diagnostics.
    public var rejected = 0
    /// Rejections whose diagnostics were empty or had no message: each one a bug.
    public var unexplained = 0
    /// The slowest case, in seconds.
    public var slowestSeconds = 0.0
  }

  private var generator: SeededGenerator
  private let seeds: [[UInt8]]
  private let registry: PluginRegistry

  /// A fuzzer mutating `seeds` (valid manifests for `registry`).
  public init(seed: UInt64, seeds: [String], registry: PluginRegistry) {
    generator = SeededGenerator(seed: seed)
    self.seeds = seeds.map { Array($0.utf8) }
    self.registry = registry
  }

  /// Runs `count` cases; a crash, hang or stack overflow shows as this process dying or never
  /// returning.
  public mutating func run(cases count: Int, chainEvery: Int = 1_000) -> Summary {
    var summary = Summary()
    let loader = ManifestLoader(registry: registry)
    let clock = ContinuousClock()
    for index in 0..<count {
      let input = index % chainEvery == chainEvery - 1 ? Self.chain(steps: 100_000) : nextCase()
      let start = clock.now
      switch Self.load(input, with: loader) {
      case .loaded: summary.loaded += 1
      case .rejected(let errors):
        summary.rejected += 1
        if errors == 0 { summary.unexplained += 1 }
      }
      let elapsed = clock.now - start
      summary.slowestSeconds = max(
        summary.slowestSeconds,
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
      summary.cases += 1
    }
    return summary
  }

  /// Loads one input and says what happened.
  public static func load(_ input: [UInt8], with loader: ManifestLoader) -> Outcome {
    do {
      _ = try loader.load(
        bytes: input, file: "fuzz.json", directory: FileManager.default.temporaryDirectory)
      return .loaded
    } catch {
      let explained = error.errors.filter { !$0.message.isEmpty }
      return .rejected(errors: explained.count == error.errors.count ? explained.count : 0)
    }
  }

  /// A chain of `steps` steps, each depending on the one before.
  public static func chain(steps: Int) -> [UInt8] {
    var text = #"{"version":1,"steps":[{"id":"c0","plugin":"noop"}"#
    for index in 1..<steps {
      text += #",{"id":"c\#(index)","plugin":"noop","dependsOn":["c\#(index - 1)"]}"#
    }
    return Array((text + "]}").utf8)
  }

  /// The next hostile manifest.
  public mutating func nextCase() -> [UInt8] {
    let seed = seeds[generator.below(seeds.count)]
    switch generator.below(10) {
    case 0: return flipBytes(seed)
    case 1: return Array(seed.prefix(generator.below(seed.count + 1)))
    case 2: return insertToken(seed)
    default: return mutateTree(seed)
    }
  }

  private mutating func flipBytes(_ input: [UInt8]) -> [UInt8] {
    var bytes = input
    for _ in 0...generator.below(8) where !bytes.isEmpty {
      bytes[generator.below(bytes.count)] = UInt8(truncatingIfNeeded: generator.next())
    }
    return bytes
  }

  private mutating func insertToken(_ input: [UInt8]) -> [UInt8] {
    let tokens = [
      "{", "}", "[", "]", ",", ":", "\"", "null", "-", "1e999", "\\u", "\u{FEFF}", "/*", "\0",
    ]
    var bytes = input
    bytes.insert(
      contentsOf: Array(tokens[generator.below(tokens.count)].utf8),
      at: generator.below(bytes.count + 1))
    return bytes
  }

  private mutating func mutateTree(_ input: [UInt8]) -> [UInt8] {
    guard var root = try? JSONParser.parse(input).root else { return input }
    for _ in 0...generator.below(4) {
      root = mutate(root)
    }
    var text = JSONWriter.compact(root)
    if generator.below(8) == 0, let brace = text.firstIndex(of: "{") {
      // A duplicate key, which the writer alone never produces.
      text.insert(contentsOf: #""version": 2, "#, at: text.index(after: brace))
    }
    return Array(text.utf8)
  }

  private mutating func mutate(_ root: JSONValue) -> JSONValue {
    let paths = Self.paths(in: root)
    let path = paths[generator.below(paths.count)]
    let ids = root["steps"]?.elements?.compactMap { $0["id"]?.stringValue } ?? []
    let replacement: JSONValue
    switch generator.below(9) {
    case 0: replacement = [nil, true, 0, "", [], [:]][generator.below(6)]
    case 1:
      replacement = JSONValue(.number([1e308, -1, -1e9, 1e16, 0.5, -0.0][generator.below(6)]))
    case 2: replacement = JSONValue(.string(String(repeating: "x", count: 100_000)))
    case 3:
      replacement = JSONValue(
        .string(["🚀", "e\u{301}", "\u{202E}abc", "a\u{0}b", "步骤", ""][generator.below(6)]))
    case 4: replacement = Self.deep(generator.below(400))
    case 5 where !ids.isEmpty:
      replacement = JSONValue(.array([JSONValue(.string(ids[generator.below(ids.count)]))]))
    case 6:
      replacement = JSONValue(
        .string(["1ms", "-2s", "1.5.5m", "999999999h", "0", "24 h"][generator.below(6)]))
    default:
      replacement = JSONValue(
        .string(["critical", "abort", "main", "interactive", "simulate"][generator.below(5)]))
    }
    return Self.replacing(path, in: root, with: replacement)
  }

  private static func deep(_ depth: Int) -> JSONValue {
    var value: JSONValue = 1
    for _ in 0..<depth { value = JSONValue(.array([value])) }
    return value
  }

  /// Every path in the tree, found without recursion.
  private static func paths(in root: JSONValue) -> [JSONPath] {
    var paths: [JSONPath] = []
    var pending: [(JSONPath, JSONValue)] = [(.root, root)]
    while let (path, value) = pending.popLast() {
      paths.append(path)
      if let members = value.members {
        pending += members.map { (path.appending($0.key), $0.value) }
      } else if let elements = value.elements {
        pending += elements.enumerated().map { (path.appending($0.offset), $0.element) }
      }
    }
    return paths
  }

  private static func replacing(_ path: JSONPath, in value: JSONValue, with replacement: JSONValue)
    -> JSONValue
  {
    guard let first = path.components.first else { return replacement }
    let rest = JSONPath(components: Array(path.components.dropFirst()))
    switch (first, value.kind) {
    case (.key(let key), .object(var members)):
      if let index = members.firstIndex(where: { $0.key == key }) {
        members[index].value = replacing(rest, in: members[index].value, with: replacement)
      }
      return JSONValue(.object(members))
    case (.index(let index), .array(var elements)) where elements.indices.contains(index):
      elements[index] = replacing(rest, in: elements[index], with: replacement)
      return JSONValue(.array(elements))
    default:
      return value
    }
  }
}

/// Splitmix64: a small seeded generator, so that fuzzing and benchmarks repeat exactly.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator starting from `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476C_E484_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number from 0 up to, not including, `bound` (0 when `bound` is 0 or 1).
  public mutating func below(_ bound: Int) -> Int {
    bound <= 1 ? 0 : Int(next() % UInt64(bound))
  }
}
