/// App versions compared as people read them, not as text: by their dot-separated parts,
/// numbers as numbers (`1.10` is after `1.9`), missing parts as zero (`1.0` is `1.0.0`), and a
/// part that is not a number (`0-beta`) by its text after any number.
package enum VersionOrder {
  /// How `left` compares with `right`: negative when it is older, 0 when they are the same
  /// version, positive when it is newer.
  package static func compare(_ left: String, _ right: String) -> Int {
    let a = parts(left)
    let b = parts(right)
    for index in 0..<max(a.count, b.count) {
      let x = index < a.count ? a[index] : "0"
      let y = index < b.count ? b[index] : "0"
      let order = compare(part: x, y)
      if order != 0 { return order }
    }
    return 0
  }

  /// Whether `left` and `right` are the same version (`1.0` and `1.0.0`).
  package static func same(_ left: String, _ right: String) -> Bool {
    compare(left, right) == 0
  }

  private static func parts(_ text: String) -> [Substring] {
    text.split(separator: ".", omittingEmptySubsequences: false)
  }

  /// Numbers of any length, without converting them (no overflow): leading zeros dropped,
  /// then the longer is larger, then digit by digit.
  private static func compare(part x: Substring, _ y: Substring) -> Int {
    let xDigits = x.prefix { ("0"..."9").contains($0) }
    let yDigits = y.prefix { ("0"..."9").contains($0) }
    let xNumber = xDigits.drop { $0 == "0" }
    let yNumber = yDigits.drop { $0 == "0" }
    if xNumber.count != yNumber.count { return xNumber.count < yNumber.count ? -1 : 1 }
    if xNumber != yNumber { return xNumber < yNumber ? -1 : 1 }
    let xRest = x.dropFirst(xDigits.count)
    let yRest = y.dropFirst(yDigits.count)
    if xRest == yRest { return 0 }
    // `1.0` is after `1.0-beta`: a part with nothing after its number is the release.
    if xRest.isEmpty { return 1 }
    if yRest.isEmpty { return -1 }
    return xRest < yRest ? -1 : 1
  }
}
