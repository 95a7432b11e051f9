/// The regular expressions of the JSON Schema's durations: the strings ``DurationText`` reads
/// as a duration within its limits, each unit's number compared with its bounds digit by digit.
///
/// A pattern cannot compute, so each bound (in the unit's own terms: a century is
/// 53333333.333... minutes) is spelled out as the digit strings below it or above it. The
/// digits are compared exactly as written, while `DurationText` reads them into a `Double`
/// first: the two can differ only for a number of 16 digits or more within rounding of a limit.
enum DurationPattern {
  /// The units a duration string may end with, each with its length in seconds as a fraction:
  /// those `DurationText.read(bytes:)` knows (a test checks that they agree).
  static let units: [(name: String, seconds: Fraction)] = [
    ("us", Fraction(1, 1_000_000)), ("ms", Fraction(1, 1000)), ("s", Fraction(1, 1)),
    ("m", Fraction(60, 1)), ("h", Fraction(3600, 1)), ("d", Fraction(86_400, 1)),
  ]

  /// The shortest duration above zero, in seconds: half a nanosecond, which
  /// ``DurationText/seconds(_:)`` rounds (half away from zero) to one.
  static let smallestPositive = Fraction(1, 2_000_000_000)

  /// The pattern of the duration strings less than ``DurationText/maximumSeconds``; with
  /// `positive`, of those that are also at least ``smallestPositive``.
  static func pattern(positive: Bool) -> String {
    let maximum = Fraction(Int(DurationText.maximumSeconds), 1)
    let minimum = positive ? smallestPositive : Fraction(0, 1)
    let alternatives = units.map { unit in
      "(?:\(number(from: minimum / unit.seconds, below: maximum / unit.seconds))) *\(unit.name)"
    }
    return "^ *(?:\(alternatives.joined(separator: "|"))) *$"
  }

  /// A fraction of two whole numbers, for bounds in a unit's terms.
  struct Fraction {
    var numerator: Int
    var denominator: Int

    init(_ numerator: Int, _ denominator: Int) {
      self.numerator = numerator
      self.denominator = denominator
    }

    /// The nearest `Double`.
    var value: Double { Double(numerator) / Double(denominator) }

    static func / (lhs: Self, rhs: Self) -> Self {
      Self(lhs.numerator * rhs.denominator, lhs.denominator * rhs.numerator).reduced
    }

    private var reduced: Self {
      var (a, b) = (numerator, denominator)
      while b != 0 { (a, b) = (b, a % b) }
      return Self(numerator / a, denominator / a)
    }

    /// The whole part, and the digits after the point: those before the repeating ones, and
    /// those that repeat (none when the expansion ends).
    var expansion: (whole: Int, digits: [Int], repeating: [Int]) {
      var digits: [Int] = []
      var seen: [Int] = []
      var remainder = numerator % denominator
      while remainder != 0 {
        if let start = seen.firstIndex(of: remainder) {
          return (numerator / denominator, Array(digits[..<start]), Array(digits[start...]))
        }
        seen.append(remainder)
        digits.append(remainder * 10 / denominator)
        remainder = remainder * 10 % denominator
      }
      return (numerator / denominator, digits, [])
    }
  }

  /// The decimal numbers as durations write them (digits with at most one point, at least one
  /// digit) from `lower` up to `upper`, not included; `lower` is below 1 and `upper` above it.
  private static func number(from lower: Fraction, below upper: Fraction) -> String {
    let low = lower.expansion
    let high = upper.expansion
    precondition(low.whole == 0 && high.whole >= 1, "a duration's bounds are below and above 1")
    let anyFraction = "(?:\\.[0-9]*)?"
    var alternatives: [String] = []
    // A whole part of zero: written `0`, `0.`, `0.5`, `.5`, zeros before the point allowed.
    if low.digits.isEmpty, low.repeating.isEmpty {
      alternatives += ["0+\(anyFraction)", "0*\\.[0-9]+"]
    } else {
      alternatives.append("0*\\.\(fraction(atLeast: low.digits, low.repeating))")
    }
    // Any fraction after a whole part between.
    if high.whole > 1 {
      alternatives.append("0*\(wholeNumbers(from: 1, to: high.whole - 1))\(anyFraction)")
    }
    // The whole part of the bound, then a fraction below the bound's.
    if !high.digits.isEmpty || !high.repeating.isEmpty {
      alternatives.append(
        "0*\(high.whole)(?:\\.\(fraction(below: high.digits, high.repeating)))?")
    }
    return alternatives.joined(separator: "|")
  }

  /// The digit strings after a point, none included, whose value is below the fraction with
  /// `digits` then `repeating` ones for ever (not zero).
  private static func fraction(below digits: [Int], _ repeating: [Int]) -> String {
    // Equal up to a digit, then ending there (the bound goes on to more than zero) or with a
    // smaller digit.
    func endings(after prefix: [Int], at digit: Int) -> String {
      text(prefix) + (digit > 0 ? "(?:\(digitClass(0, digit - 1))[0-9]*)?" : "")
    }
    var alternatives = digits.indices.map { endings(after: Array(digits[..<$0]), at: digits[$0]) }
    if !repeating.isEmpty {
      let cycle = repeating.indices.map {
        endings(after: Array(repeating[..<$0]), at: repeating[$0])
      }
      alternatives.append(text(digits) + repeatedForEver(repeating) + group(cycle))
    }
    return group(alternatives)
  }

  /// The digit strings after a point whose value is at least the fraction with `digits` then
  /// `repeating` ones for ever (not zero): some digit greater with those before it equal, or,
  /// for a bound that ends, all its digits.
  private static func fraction(atLeast digits: [Int], _ repeating: [Int]) -> String {
    func greater(after prefix: [Int], than digit: Int) -> String? {
      digit < 9 ? text(prefix) + digitClass(digit + 1, 9) : nil
    }
    // Zeros first, as in half a nanosecond in seconds: a digit above zero after fewer of them.
    let zeros = digits.prefix { $0 == 0 }.count
    var alternatives = zeros > 0 ? [(zeros > 1 ? "0" + bounds(0, zeros - 1) : "") + "[1-9]"] : []
    alternatives += digits.indices.dropFirst(zeros).compactMap {
      greater(after: Array(digits[..<$0]), than: digits[$0])
    }
    if repeating.isEmpty {
      alternatives.append(text(digits))
    } else {
      let cycle = repeating.indices.compactMap {
        greater(after: Array(repeating[..<$0]), than: repeating[$0])
      }
      alternatives.append(text(digits) + repeatedForEver(repeating) + group(cycle))
    }
    return group(alternatives) + "[0-9]*"
  }

  /// The whole numbers from `lower` (1 or more) to `upper`, written without leading zeros.
  private static func wholeNumbers(from lower: Int, to upper: Int) -> String {
    var alternatives: [String] = []
    var next = lower
    while next <= upper {
      let length = String(next).count
      let first = power(length - 1)
      // Every number of this length on: the lengths in a row that `upper` covers, at once.
      if next == first, power(length) - 1 <= upper {
        var last = length
        while last < 18, power(last + 1) - 1 <= upper { last += 1 }
        alternatives.append("[1-9]" + repeated(length - 1, last - 1))
        next = power(last)
        continue
      }
      let top = min(upper, power(length) - 1)
      alternatives += sameLength(digitsOf(next), digitsOf(top))
      next = top + 1
    }
    return group(alternatives)
  }

  /// The digit strings of one length from `low` to `high`.
  private static func sameLength(_ low: [Int], _ high: [Int]) -> [String] {
    guard let lowFirst = low.first, let highFirst = high.first else { return [""] }
    let lowRest = Array(low.dropFirst())
    let highRest = Array(high.dropFirst())
    let rest = low.count - 1
    if lowFirst == highFirst {
      return sameLength(lowRest, highRest).map { "\(lowFirst)" + $0 }
    }
    var alternatives: [String] = []
    var from = lowFirst
    if lowRest.contains(where: { $0 != 0 }) {
      alternatives += sameLength(lowRest, Array(repeating: 9, count: rest)).map {
        "\(lowFirst)" + $0
      }
      from += 1
    }
    var to = highFirst
    var last: [String] = []
    if highRest.contains(where: { $0 != 9 }) {
      last = sameLength(Array(repeating: 0, count: rest), highRest).map { "\(highFirst)" + $0 }
      to -= 1
    }
    if from <= to { alternatives.append(digitClass(from, to) + repeated(rest, rest)) }
    return alternatives + last
  }

  /// `alternatives` as one: in a group, unless there is one.
  private static func group(_ alternatives: [String]) -> String {
    alternatives.count == 1 ? alternatives[0] : "(?:\(alternatives.joined(separator: "|")))"
  }

  /// `digits` any number of times.
  private static func repeatedForEver(_ digits: [Int]) -> String {
    digits.count == 1 ? "\(digits[0])*" : "(?:\(text(digits)))*"
  }

  /// A quantifier of `least` to `most` times.
  private static func bounds(_ least: Int, _ most: Int) -> String {
    least == most ? (least == 1 ? "" : "{\(least)}") : "{\(least),\(most)}"
  }

  private static func digitClass(_ low: Int, _ high: Int) -> String {
    low == high ? "\(low)" : "[\(low)-\(high)]"
  }

  /// Between `least` and `most` digits.
  private static func repeated(_ least: Int, _ most: Int) -> String {
    most == 0 ? "" : "[0-9]" + bounds(least, most)
  }

  private static func text(_ digits: [Int]) -> String {
    digits.map(String.init).joined()
  }

  private static func digitsOf(_ number: Int) -> [Int] {
    String(number).map { Int(String($0))! }
  }

  private static func power(_ exponent: Int) -> Int {
    (0..<exponent).reduce(1) { result, _ in result * 10 }
  }
}
