/// The text of a source file, able to turn byte offsets into line and column numbers.
public struct SourceText: Sendable {
  /// The file's bytes.
  public let bytes: [UInt8]
  private let lineStarts: [Int]

  /// Wraps the bytes of a file.
  public init(bytes: [UInt8]) {
    self.bytes = bytes
    var starts = [0]
    for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
      starts.append(index + 1)
    }
    lineStarts = starts
  }

  /// The 1-based line and column (counted in characters) of a byte offset.
  public func position(of offset: Int) -> SourcePosition {
    let clamped = min(max(offset, 0), bytes.count)
    var low = 0
    var high = lineStarts.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if lineStarts[middle] <= clamped { low = middle } else { high = middle - 1 }
    }
    let lineStart = lineStarts[low]
    let prefix = bytes[lineStart..<clamped]
    let column = String(decoding: prefix, as: UTF8.self).count + 1
    return SourcePosition(line: low + 1, column: column)
  }
}

/// A 1-based line and column in a source file.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
  /// The line, from 1.
  public var line: Int
  /// The column in characters, from 1.
  public var column: Int

  /// Creates a position.
  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }

  /// `line:column`.
  public var description: String { "\(line):\(column)" }
}
