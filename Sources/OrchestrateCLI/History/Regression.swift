import LaunchOrchestrator

/// A `--regression`: how much later than the history's median a milestone may be reached.
package struct Regression: Sendable, Equatable {
  /// The milestone that `--regression 10%` checks.
  package static let defaultMilestone = "interactive"

  /// The milestone checked.
  package var milestone: String
  /// The share of the median it may be later by: 0.1 for `10%`.
  package var share: Double

  /// A limit of `share` for `milestone`.
  package init(milestone: String, share: Double) {
    self.milestone = milestone
    self.share = share
  }

  /// The largest share `--regression` takes, in percent (a run 10,000 times slower).
  static let largestPercent = 1_000_000.0

  /// `10%`, as the user wrote it.
  package var shareText: String { Self.percent(share) }

  /// A share as a percentage, without a needless `.0`: `10%`, `2.5%`.
  static func percent(_ share: Double) -> String {
    let value = (share * 1000).rounded() / 10
    // `Int(exactly:)`: a share too large for an integer is printed as it is, never a crash.
    return Int(exactly: value).map { "\($0)%" } ?? "\(value)%"
  }
}

extension ValueParser where Value == Regression {
  /// `10%` (for `interactive`) or `searchReady=15%`.
  package static var regression: Self {
    Self { text, option throws(CLIError) in
      let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        .map(String.init)
      let milestone = parts.count == 2 ? parts[0] : Regression.defaultMilestone
      let shareText = parts.last ?? ""
      guard !milestone.isEmpty, shareText.hasSuffix("%"),
        let percent = Double(shareText.dropLast()), percent.isFinite
      else {
        throw .invalidValue(
          "The value '\(text)' for '\(option.name)' must look like '10%' (for '\(Regression.defaultMilestone)') or 'searchReady=15%'."
        )
      }
      guard percent > 0 else {
        throw .invalidValue(
          "The share '\(shareText)' for '\(option.name)' must be more than 0%; every run differs a little from the median."
        )
      }
      // Bounded where it is read: a run 10,000 times the median's time is as far as a
      // share means anything, and larger numbers overflow what prints them.
      guard percent <= Regression.largestPercent else {
        throw .invalidValue(
          "The share '\(shareText)' for '\(option.name)' must be at most \(Int(Regression.largestPercent))%; a larger one would never fail a run."
        )
      }
      return Regression(milestone: milestone, share: percent / 100)
    }
  }
}
