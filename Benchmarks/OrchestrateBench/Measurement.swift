import Foundation

/// Repeated timings of one contender: the median, and the spread around it.
struct Sample {
  var values: [Double]

  var median: Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2)
      ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
  }

  var minimum: Double { values.min() ?? .nan }
  var maximum: Double { values.max() ?? .nan }

  /// `median [min-max]` in the unit `scale` converts to.
  func text(scale: Double = 1, unit: String, digits: Int = 2) -> String {
    func format(_ value: Double) -> String { String(format: "%.\(digits)f", value * scale) }
    return "\(format(median))\(unit) [\(format(minimum))-\(format(maximum))]"
  }
}

/// Seconds taken by `body`.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
  let clock = ContinuousClock()
  let start = clock.now
  try await body()
  return (clock.now - start).secondsValue
}

/// Runs every contender `repetitions` times, interleaved (a, b, c, a, b, c, ...), so that a
/// noisy machine slows them alike and their ratios hold.
func interleaved(
  repetitions: Int, _ contenders: [(name: String, run: () async throws -> Double)]
) async throws -> [String: Sample] {
  var samples: [String: Sample] = [:]
  for _ in 0..<repetitions {
    for contender in contenders {
      samples[contender.name, default: Sample(values: [])].values.append(try await contender.run())
    }
  }
  return samples
}

extension Duration {
  var secondsValue: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}

/// Splitmix64: a small seeded generator, so every run builds the same graphs.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476C_E484_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
