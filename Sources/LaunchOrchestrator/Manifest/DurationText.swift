import LaunchJSON

/// Parses and prints durations the way manifests write them: `"250ms"`, `"2s"`, `"1.5m"`,
/// `"24h"`, or a plain number of seconds.
package enum DurationText {
  /// What a duration's text says.
  enum Reading: Equatable {
    /// The duration it writes.
    case duration(Duration)
    /// It is written as a duration, but one of ``maximumSeconds`` or more.
    case tooLong
    /// It is no duration with a unit.
    case invalid
  }

  /// The longest a duration may be, in seconds, not included: about 101 years, short of the
  /// 2^63 nanoseconds (292 years) a duration is kept in, whatever rounding makes of it.
  package static let maximumSeconds = 3.2e9

  /// The duration a string denotes, or `nil` when it is not a non-negative duration with a unit.
  package static func parse(_ text: String) -> Duration? {
    if case .duration(let duration) = read(text) { return duration }
    return nil
  }

  /// What `text` says: a duration, one too long, or none; a manifest's error tells the two
  /// last apart, since "5000000000000s" is written as a duration and only its size is wrong.
  static func read(_ text: String) -> Reading {
    // One pass over the bytes in place: manifests hold thousands of durations, and a view of
    // slices of the string's UTF-8 costs more than the reading.
    var text = text
    return text.withUTF8(read(bytes:))
  }

  /// ``read(_:)`` of the UTF-8 `bytes`: spaces around the text and between the number and
  /// its unit are allowed; the unit is the trailing run of lowercase letters.
  private static func read(bytes: UnsafeBufferPointer<UInt8>) -> Reading {
    let space = UInt8(ascii: " ")
    var start = 0
    var end = bytes.count
    while start < end, bytes[start] == space { start += 1 }
    while end > start, bytes[end - 1] == space { end -= 1 }
    var unitStart = end
    while unitStart > start, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[unitStart - 1])
    {
      unitStart -= 1
    }
    // No unit, or nothing but one.
    guard unitStart > start, unitStart != end else { return .invalid }
    var numberEnd = unitStart
    while numberEnd > start, bytes[numberEnd - 1] == space { numberEnd -= 1 }
    guard numberEnd > start else { return .invalid }
    let number = UnsafeBufferPointer(rebasing: bytes[start..<numberEnd])
    guard
      number.allSatisfy({
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".")
      }),
      let value = exactDecimal(number) ?? Double(String(decoding: number, as: UTF8.self))
    else { return .invalid }
    let scale: Double
    let unit = (end - unitStart, bytes[unitStart], end - unitStart > 1 ? bytes[unitStart + 1] : 0)
    switch unit {
    case (2, UInt8(ascii: "u"), UInt8(ascii: "s")): scale = 0.000_001
    case (2, UInt8(ascii: "m"), UInt8(ascii: "s")): scale = 0.001
    case (1, UInt8(ascii: "s"), _): scale = 1
    case (1, UInt8(ascii: "m"), _): scale = 60
    case (1, UInt8(ascii: "h"), _): scale = 3600
    case (1, UInt8(ascii: "d"), _): scale = 86_400
    default: return .invalid
    }
    return seconds(value * scale).map(Reading.duration) ?? .tooLong
  }

  /// `digits` (decimal digits, at most one of them a point) read as `Double(_:)` reads them,
  /// when one division gives that exactly: with 15 digits or fewer, the digits and the power
  /// of ten are both exact, and the quotient is rounded once (Clinger's fast path). `nil`
  /// otherwise, for `Double(_:)` to read; a manifest's durations rarely need it.
  private static func exactDecimal(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
    var mantissa = 0
    var count = 0
    // Digits after the point, once there is one.
    var fractionDigits: Int?
    for byte in digits {
      if byte == UInt8(ascii: ".") {
        guard fractionDigits == nil else { return nil }
        fractionDigits = 0
        continue
      }
      mantissa = mantissa * 10 + Int(byte - UInt8(ascii: "0"))
      count += 1
      guard count <= 15 else { return nil }
      fractionDigits? += 1
    }
    guard count > 0 else { return nil }
    var scale = 1.0
    for _ in 0..<(fractionDigits ?? 0) { scale *= 10 }
    return Double(mantissa) / scale
  }

  /// The duration for a number of seconds, or `nil` when it is negative, not finite, or
  /// ``maximumSeconds`` or more.
  package static func seconds(_ value: Double) -> Duration? {
    guard value.isFinite, value >= 0, value < maximumSeconds else { return nil }
    return .nanoseconds(Int64((value * 1e9).rounded()))
  }

  /// The duration written compactly with the largest unit that keeps it short: `1.5s`, `250ms`.
  package static func format(_ duration: Duration) -> String {
    let seconds = duration.seconds
    if seconds == 0 { return "0s" }
    if seconds < 1 {
      let millis = seconds * 1000
      return millis >= 1 ? "\(trim(millis))ms" : "\(trim(seconds * 1_000_000))us"
    }
    // Days from two on: ages of cache entries read `8d`, while a day stays `24h` as written.
    if seconds >= 172_800, seconds.truncatingRemainder(dividingBy: 8640) == 0 {
      return "\(trim(seconds / 86_400))d"
    }
    if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 360) == 0 {
      return "\(trim(seconds / 3600))h"
    }
    if seconds >= 60, seconds.truncatingRemainder(dividingBy: 6) == 0 {
      return "\(trim(seconds / 60))m"
    }
    return "\(trim(seconds))s"
  }

  private static func trim(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    if rounded == rounded.rounded() { return String(Int64(rounded)) }
    return "\(rounded)"
  }
}

extension Duration {
  /// The duration as a manifest writes it, with the largest unit that keeps it short
  /// (`250ms`, `1.5s`, `2m`, `24h`): for messages that quote a duration parameter back.
  public var manifestText: String { DurationText.format(self) }

  /// The duration in seconds, as a floating-point number.
  package var seconds: Double {
    let parts = components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
  }
}

extension DurationText {
  /// What a manifest may write for a duration, for a message refusing a value of another type.
  static let forms = "a duration like \"2s\" or a number of seconds"

  /// Why `text`, which ``parse(_:)`` refused, is no duration: written as one but too long
  /// (then the limit is what helps), or not written as one (then `examples` of the forms).
  static func problem(with text: String, examples: String) -> String {
    read(text) == .tooLong
      ? "'\(text)' is too long: \(limit)" : "'\(text)' is not a duration; write it like \(examples)"
  }

  /// Why `number` seconds, as `written` in the manifest, is no duration: negative or too long.
  static func problem(withSeconds number: Double, written: String) -> String {
    number < 0 ? "a duration cannot be negative, found \(written)" : "\(limit), found \(written)"
  }

  /// The longest a duration may be, in a sentence that refuses a longer one.
  private static var limit: String {
    "a duration must be less than \(Int(maximumSeconds)) seconds (about a century)"
  }

  /// A duration parameter of a step plugin, read from `"250ms"`, `"2s"`, `"1.5m"`, `"24h"` or
  /// a number of seconds; `codingPath` locates what is wrong with any other value.
  static func parameter(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey])
    throws -> Duration
  {
    // Text first: it is how durations are usually written.
    if case .string(let text) = value.kind {
      guard let duration = parse(text) else {
        throw DecodingError.dataCorrupted(
          .init(
            codingPath: codingPath(),
            debugDescription: problem(
              with: text, examples: "\"250ms\", \"2s\", \"1.5m\" or \"24h\"")))
      }
      return duration
    }
    // A value of another type is told the forms a duration takes: "expected a number" would
    // hide the string form, the usual one.
    guard case .number(let number) = value.kind else {
      throw JSONValueDecoder.mismatch(Duration.self, value, expected: forms, at: codingPath())
    }
    guard let duration = seconds(number) else {
      // The number as the manifest wrote it: `-1`, not the `-1.0` a Double prints.
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: codingPath(),
          debugDescription: problem(withSeconds: number, written: value.numberText ?? "\(number)")
        ))
    }
    return duration
  }

  /// Durations as manifests write them (`["1s", "250ms"]`), each read as ``parameter(_:at:)``
  /// reads one: not Swift's own `Codable` form of a duration.
  static func parameters(_ value: JSONValue, at key: any CodingKey) throws -> [Duration] {
    guard let elements = value.elements else {
      throw JSONValueDecoder.mismatch(
        [Duration].self, value, expected: "an array of durations", at: [key])
    }
    return try elements.enumerated().map { index, element in
      try parameter(element, at: [key, DurationIndexKey(intValue: index)])
    }
  }
}

/// The place of a duration in an array parameter, for its error.
private struct DurationIndexKey: CodingKey {
  var stringValue: String { "Index \(intValue ?? 0)" }
  var intValue: Int?
  init(intValue: Int) { self.intValue = intValue }
  init?(stringValue: String) { nil }
}
