/// Writes ``JSONValue`` trees as text, pretty-printed with two-space indentation.
public enum JSONWriter {
  /// The text of `value`, pretty-printed, ending in a newline.
  public static func prettyPrinted(_ value: JSONValue) -> String {
    var output = ""
    write(value, indent: 0, into: &output)
    output += "\n"
    return output
  }

  /// The text of `value` on one line.
  public static func compact(_ value: JSONValue) -> String {
    var output = ""
    write(value, indent: nil, into: &output)
    return output
  }

  private static func write(_ value: JSONValue, indent: Int?, into output: inout String) {
    switch value.kind {
    case .null: output += "null"
    case .bool(let bool): output += bool ? "true" : "false"
    // A parsed number as written: its Double may have lost digits (beyond 2^53, or below the
    // microseconds the writer's own numbers are rounded to).
    case .number(let number): output += value.numberText ?? format(number)
    case .string(let string): writeString(string, into: &output)
    case .array(let elements):
      writeContainer(open: "[", close: "]", count: elements.count, indent: indent, into: &output) {
        index, inner, output in
        write(elements[index], indent: inner, into: &output)
      }
    case .object(let members):
      writeContainer(open: "{", close: "}", count: members.count, indent: indent, into: &output) {
        index, inner, output in
        writeString(members[index].key, into: &output)
        output += ": "
        write(members[index].value, indent: inner, into: &output)
      }
    }
  }

  private static func writeContainer(
    open: String, close: String, count: Int, indent: Int?, into output: inout String,
    element: (Int, Int?, inout String) -> Void
  ) {
    output += open
    guard count > 0 else {
      output += close
      return
    }
    let inner = indent.map { $0 + 2 }
    for index in 0..<count {
      if index > 0 { output += indent == nil ? ", " : "," }
      if let inner { output += "\n" + String(repeating: " ", count: inner) }
      element(index, inner, &output)
    }
    if let indent { output += "\n" + String(repeating: " ", count: indent) }
    output += close
  }

  /// Integers print without a fraction; other numbers with at most six decimals.
  private static func format(_ number: Double) -> String {
    if number == number.rounded(), abs(number) < 1e15 {
      return String(Int64(number))
    }
    let micros = (number * 1_000_000).rounded() / 1_000_000
    var text = "\(micros)"
    if text.contains("e") {
      text = "\(number)"
    }
    return text
  }

  private static func writeString(_ string: String, into output: inout String) {
    output += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }
}
