import LaunchOrchestrator

/// A `stats --fail-if` limit: `interactive.p90>2s`, `store.wait.p90>100ms`,
/// `failureRate>0.1%`, `backgroundCompletion<95%`.
package struct StatsLimit: Sendable, Equatable {
  /// A percentile (or the maximum) of a milestone's times or a step's.
  package enum Statistic: String, CaseIterable, Sendable {
    case p50, p90, p99, max

    var percentile: Double {
      switch self {
      case .p50: 50
      case .p90: 90
      case .p99: 99
      case .max: 100
      }
    }
  }

  /// A share of the launches.
  package enum Rate: String, CaseIterable, Sendable {
    case failureRate, routedShare, cancelledShare, degradedShare, backgroundCompletion
  }

  /// What the limit is on.
  package enum Subject: Sendable, Equatable {
    /// A milestone's times, else a step's durations (or its waits).
    case time(name: String, statistic: Statistic, wait: Bool)
    case rate(Rate)
  }

  /// The limit as the user wrote it.
  package var text: String
  package var subject: Subject
  /// Whether the value breaks the limit above it (`>`) or below it (`<`).
  package var breaksAbove: Bool
  /// Seconds, or a share from 0 to 1.
  package var limit: Double

  /// Whether `value` breaks the limit.
  func isBroken(by value: Double) -> Bool {
    breaksAbove ? value > limit : value < limit
  }

  /// The name of a milestone or step the limit is on.
  var name: String? {
    if case .time(let name, _, _) = subject { return name }
    return nil
  }

  /// The value the limit is on in `group`; `nil` when the group has none (a milestone it
  /// never reached, no deferred step started).
  func value(in group: StatsGroup) -> (value: Double, estimated: Bool)? {
    switch subject {
    case .rate(let rate):
      let value: Double? =
        switch rate {
        case .failureRate: group.share(.failed)
        case .routedShare: group.share(.routed)
        case .cancelledShare: group.share(.cancelled)
        case .degradedShare: group.share(.degraded)
        case .backgroundCompletion: group.backgroundCompletion
        }
      return value.map { ($0, false) }
    case .time(let name, let statistic, let wait):
      let series =
        wait
        ? group.steps[name]?.waits
        : group.milestones[name]?.times ?? group.steps[name]?.durations
      guard let series, let value = series.value(atPercentile: statistic.percentile) else {
        return nil
      }
      return (value, statistic != .max && !series.isExact)
    }
  }

  /// `interactive p90`, `failure rate`.
  var subjectText: String {
    switch subject {
    case .rate(let rate): rate.rawValue
    case .time(let name, let statistic, let wait):
      "'\(name)' \(wait ? "wait " : "")\(statistic.rawValue)"
    }
  }

  /// The value as the limit's kind is written: `2.345s`, `0.25%`.
  func format(_ value: Double) -> String {
    switch subject {
    case .rate: StatsText.percent(value)
    case .time: TimeText.seconds(.seconds(value))
    }
  }
}

extension ValueParser where Value == StatsLimit {
  /// `NAME.STAT>DURATION`, `NAME.wait.STAT>DURATION` or `RATE>SHARE` (`<` for a floor).
  package static var statsLimit: Self {
    Self { text, option throws(CLIError) in
      let example =
        "write it like 'interactive.p90>2s', 'store.wait.p90>100ms', 'failureRate>0.1%' or 'backgroundCompletion<95%'"
      guard let operatorIndex = text.firstIndex(where: { $0 == ">" || $0 == "<" }) else {
        throw .invalidValue(
          "The limit '\(text)' for '\(option.name)' has no '>' or '<'; \(example).")
      }
      let left = String(text[..<operatorIndex])
      let right = String(text[text.index(after: operatorIndex)...])
      // Only `>` and `<`: at six decimals a figure is never exactly its limit, so `>=` would
      // add nothing but a second way to write the same limit.
      if right.hasPrefix("=") {
        throw .invalidValue(
          "The limit '\(text)' for '\(option.name)' uses '\(text[operatorIndex])=': only '>' (broken above the value) and '<' (broken below it) are supported; write '\(left)\(text[operatorIndex])\(right.dropFirst())'."
        )
      }
      let breaksAbove = text[operatorIndex] == ">"
      if let rate = StatsLimit.Rate(rawValue: left) {
        guard let share = shareValue(right) else {
          throw .invalidValue(
            "The share '\(right)' in '\(option.name) \(text)' is not one from 0 to 100%; write it like '0.1%' or '0.001'."
          )
        }
        return StatsLimit(text: text, subject: .rate(rate), breaksAbove: breaksAbove, limit: share)
      }
      var parts = left.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      guard parts.count >= 2, let statistic = StatsLimit.Statistic(rawValue: parts.removeLast())
      else {
        let rates = StatsLimit.Rate.allCases.map(\.rawValue)
        let hint = Suggestions.didYouMean(left, in: rates)
        throw .invalidValue(
          "The limit '\(text)' for '\(option.name)' names neither a rate (\(rates.joined(separator: ", "))) nor NAME.p50|p90|p99|max.\(hint) Then \(example)."
        )
      }
      let wait = parts.count >= 2 && parts.last == "wait"
      if wait { parts.removeLast() }
      let name = parts.joined(separator: ".")
      guard !name.isEmpty else {
        throw .invalidValue(
          "The limit '\(text)' for '\(option.name)' names no milestone or step; \(example).")
      }
      let number = Double(right).flatMap { $0 >= 0 ? $0 : nil }
      guard let seconds = DurationText.parse(right).map(\.seconds) ?? number else {
        throw .invalidValue(
          "The time '\(right)' in '\(option.name) \(text)' is not a duration; write it like '250ms' or '2s'."
        )
      }
      return StatsLimit(
        text: text, subject: .time(name: name, statistic: statistic, wait: wait),
        breaksAbove: breaksAbove, limit: seconds)
    }
  }

  /// `0.1%` or `0.001`.
  private static func shareValue(_ text: String) -> Double? {
    if text.hasSuffix("%") {
      return Double(text.dropLast()).flatMap { $0 >= 0 && $0 <= 100 ? $0 / 100 : nil }
    }
    return Double(text).flatMap { $0 >= 0 && $0 <= 1 ? $0 : nil }
  }
}
