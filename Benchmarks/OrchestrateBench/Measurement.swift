import Foundation
import ManifestFuzzing

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

/// Runs every contender `repetitions` times, interleaved, so that a noisy machine slows them
/// alike and their ratios hold. Each repetition runs them in a new order (a seeded shuffle,
/// the same every run of the bench), after a short pause: a contender that leaves work
/// behind (OperationQueue's threads winding down, its freed operations) would otherwise
/// always slow the same next one.
func interleaved(
  repetitions: Int, _ contenders: [(name: String, run: () async throws -> Double)]
) async throws -> [String: Sample] {
  var samples: [String: Sample] = [:]
  var generator = SeededGenerator(seed: 7)
  for _ in 0..<repetitions {
    for contender in contenders.shuffled(using: &generator) {
      try await Task.sleep(for: .milliseconds(20))
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

/// Runs this benchmark's binary with `arguments` (a child's command) and returns the numbers
/// it prints, separated by spaces or lines.
func numbersFromChild(_ arguments: String...) throws -> [Double] {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  process.arguments = arguments
  let output = Pipe()
  process.standardOutput = output
  try process.run()
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
  guard process.terminationStatus == 0, !numbers.isEmpty else {
    throw BenchmarkError("\(arguments.joined(separator: " ")) printed '\(text)'")
  }
  return numbers
}
