import Foundation

/// The percentiles of one series of times (a milestone's, a step's durations) in bounded
/// memory: exact while the series holds at most ``exactLimit`` values, then estimated with a
/// log-bucketed sketch (as DDSketch does) whose every percentile is within
/// ``relativeAccuracy`` of the true one.
///
/// Percentiles are nearest-rank: the p-th of n sorted values is the one at rank
/// `ceil(p / 100 × n)`. The sketch returns, for that rank, the middle of its bucket (in
/// relative terms), so the value is off by at most 0.5% of itself; `max` stays exact. Merging
/// two sketches gives the same counts as adding every value to one, so the result does not
/// depend on how the input was split between threads.
struct QuantileSketch: Sendable {
  /// The most values kept exactly; a longer series is estimated.
  static let exactLimit = 16_384
  /// How far an estimated percentile may be from the true one, relative to it.
  static let relativeAccuracy = 0.005
  /// The bucket growth: each bucket's upper bound is `gamma` times its lower one.
  private static let gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy)
  private static let logGamma = log(gamma)
  /// Values under a microsecond (reports have six decimals) count as zero.
  private static let smallest = 1e-6
  /// The buckets cover a microsecond to a million seconds; larger values go in the last.
  private static let lowestIndex = Int((log(smallest) / logGamma).rounded(.up))
  private static let bucketCount = Int((log(1e6) / logGamma).rounded(.up)) - lowestIndex + 1

  /// The values while the series is exact.
  private var values: [Double] = []
  /// Bucket counts once it is not; empty while it is.
  private var buckets: [Int] = []
  private var zeros = 0
  /// How many values were added.
  private(set) var count = 0
  /// The largest value added.
  private(set) var max = 0.0

  /// Whether the percentiles are exact.
  var isExact: Bool { buckets.isEmpty }

  /// Adds `value` (seconds; negative counts as zero).
  mutating func add(_ value: Double) {
    count += 1
    if value > max { max = value }
    if buckets.isEmpty {
      values.append(value)
      if values.count > Self.exactLimit { foldValues() }
    } else {
      addToBuckets(value)
    }
  }

  /// Adds every value of `other`.
  mutating func merge(_ other: QuantileSketch) {
    guard other.count > 0 else { return }
    if count == 0 {
      self = other
      return
    }
    count += other.count
    max = Swift.max(max, other.max)
    if buckets.isEmpty, other.buckets.isEmpty, values.count + other.values.count <= Self.exactLimit
    {
      values += other.values
      return
    }
    if buckets.isEmpty { foldValues() }
    for value in other.values { addToBuckets(value) }
    if !other.buckets.isEmpty {
      zeros += other.zeros
      for index in buckets.indices { buckets[index] += other.buckets[index] }
    }
  }

  /// The nearest-rank `percentile` (0 to 100); `nil` for an empty series.
  func value(atPercentile percentile: Double) -> Double? {
    guard count > 0 else { return nil }
    let rank = Swift.min(count, Swift.max(1, Int((percentile / 100 * Double(count)).rounded(.up))))
    // The last rank is the maximum, kept exactly: a bucket's middle is not.
    if rank == count { return max }
    if buckets.isEmpty {
      return values.sorted()[rank - 1]
    }
    var seen = zeros
    if seen >= rank { return 0 }
    for index in buckets.indices {
      seen += buckets[index]
      if seen >= rank {
        let power = Double(index + Self.lowestIndex)
        let middle = 2 * pow(Self.gamma, power) / (Self.gamma + 1)
        return Swift.min(middle, max)
      }
    }
    return max
  }

  /// Several percentiles at once, sorting an exact series once.
  func values(atPercentiles percentiles: [Double]) -> [Double?] {
    guard count > 0, buckets.isEmpty else { return percentiles.map { value(atPercentile: $0) } }
    let sorted = values.sorted()
    return percentiles.map { percentile in
      let rank = Swift.min(
        count, Swift.max(1, Int((percentile / 100 * Double(count)).rounded(.up))))
      return sorted[rank - 1]
    }
  }

  private mutating func foldValues() {
    buckets = Array(repeating: 0, count: Self.bucketCount)
    for value in values { addToBuckets(value) }
    values = []
  }

  private mutating func addToBuckets(_ value: Double) {
    guard value >= Self.smallest else {
      zeros += 1
      return
    }
    let index = Int((log(value) / Self.logGamma).rounded(.up)) - Self.lowestIndex
    buckets[Swift.min(Swift.max(index, 0), Self.bucketCount - 1)] += 1
  }
}
