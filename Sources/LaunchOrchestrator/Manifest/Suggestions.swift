/// "Did you mean" suggestions for misspelled names.
package enum Suggestions {
  /// The candidate closest to `input` by edit distance, if it is close enough to be a typo.
  package static func closest(to input: String, in candidates: some Sequence<String>) -> String? {
    // Names are short; a long input is no typo, and edit distance grows with its length. An
    // empty one is no typo either, though it is one insertion from any one-letter name: a
    // "did you mean 'a'?" would hide that the name is missing.
    guard !input.isEmpty, input.utf8.count <= 64 else { return nil }
    let lowered = Array(input.lowercased())
    var best: (candidate: String, distance: Int)?
    for candidate in candidates where candidate.utf8.count <= 64 {
      let distance = editDistance(lowered, Array(candidate.lowercased()))
      if distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    guard let best else { return nil }
    let allowed = max(1, min(3, max(input.count, best.candidate.count) / 3))
    return best.distance <= allowed ? best.candidate : nil
  }

  /// `" Did you mean 'x'?"` or the empty string.
  package static func didYouMean(_ input: String, in candidates: some Sequence<String>) -> String {
    didYouMean(input, suggesting: closest(to: input, in: candidates))
  }

  /// `" Did you mean 'x'?"` for `suggestion`, or the empty string for none. Names are matched
  /// byte for byte, so a suggestion can look the same as the input (a "K" written as U+212A
  /// KELVIN SIGN): then the characters that differ are named, which the eye cannot tell.
  package static func didYouMean(_ input: String, suggesting suggestion: String?) -> String {
    guard let suggestion else { return "" }
    guard suggestion == input, !suggestion.utf8.elementsEqual(input.utf8) else {
      return " Did you mean '\(suggestion)'?"
    }
    // The characters the suggestion does not have that are not ASCII: an `e` of a decomposed
    // `é` is no look-alike, its combining accent is.
    let others = input.unicodeScalars.filter {
      !$0.isASCII && !suggestion.unicodeScalars.contains($0)
    }
    let named = others.map { scalar in
      let hex = String(scalar.value, radix: 16, uppercase: true)
      return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
    return " It looks like '\(suggestion)' but is written with other characters ("
      + named.joined(separator: ", ") + "); type it again."
  }

  /// Edits needed to turn one name into the other: insertions, deletions, substitutions and
  /// swaps of two neighbours ("cuont" is one edit from "count"), the typos people make.
  private static func editDistance(_ lhs: [Character], _ rhs: [Character]) -> Int {
    if lhs.isEmpty { return rhs.count }
    if rhs.isEmpty { return lhs.count }
    var beforePrevious = [Int](repeating: 0, count: rhs.count + 1)
    var previous = Array(0...rhs.count)
    var current = [Int](repeating: 0, count: rhs.count + 1)
    for i in 1...lhs.count {
      current[0] = i
      for j in 1...rhs.count {
        let substitution = previous[j - 1] + (lhs[i - 1] == rhs[j - 1] ? 0 : 1)
        current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
          current[j] = min(current[j], beforePrevious[j - 2] + 1)
        }
      }
      (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[rhs.count]
  }
}
