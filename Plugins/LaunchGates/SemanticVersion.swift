import Foundation

/// A version like `1.10.0` or `2.0.0-beta.2`, compared part by part as numbers, so that
/// `1.10.0 > 1.9.2`; a pre-release sorts before its release.
public struct SemanticVersion: Sendable, Comparable, CustomStringConvertible {
  /// The numeric parts: major, minor, patch and any more.
  public let numbers: [Int]
  /// The part after `-`, if any.
  public let preRelease: String?
  /// The text it was read from.
  public let description: String

  /// Reads a version; `nil` if it is not one.
  public init?(_ text: String) {
    let trimmed = text.hasPrefix("v") ? String(text.dropFirst()) : text
    let parts = trimmed.split(separator: "-", maxSplits: 1)
    guard let core = parts.first, !core.isEmpty else { return nil }
    var numbers: [Int] = []
    for piece in core.split(separator: ".", omittingEmptySubsequences: false) {
      guard !piece.isEmpty, piece.allSatisfy(\.isASCII), let number = Int(piece), number >= 0 else {
        return nil
      }
      numbers.append(number)
    }
    self.numbers = numbers
    preRelease = parts.count > 1 ? String(parts[1]) : nil
    description = text
  }

  /// Orders by numbers (missing parts count as 0), then a pre-release before its release.
  public static func < (lhs: Self, rhs: Self) -> Bool {
    for index in 0..<max(lhs.numbers.count, rhs.numbers.count) {
      let left = index < lhs.numbers.count ? lhs.numbers[index] : 0
      let right = index < rhs.numbers.count ? rhs.numbers[index] : 0
      if left != right { return left < right }
    }
    switch (lhs.preRelease, rhs.preRelease) {
    case (nil, _): return false
    case (_?, nil): return true
    case (let left?, let right?): return left.compare(right, options: .numeric) == .orderedAscending
    }
  }

  /// Equal when neither is less than the other: `1.2` equals `1.2.0`.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    !(lhs < rhs) && !(rhs < lhs)
  }
}
