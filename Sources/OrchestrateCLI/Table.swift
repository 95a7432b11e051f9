/// Columns of text, left-aligned unless told otherwise, two spaces apart.
enum Table {
  /// The table's lines, with no trailing spaces.
  static func render(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
    var lines: [String] = []
    lines.reserveCapacity(rows.count)
    draw(rows, rightAligned: rightAligned, indent: "") {
      lines.append(String(decoding: $0, as: UTF8.self))
    }
    return lines
  }

  /// Adds the table's lines to `text`, each after `indent`.
  static func write(
    _ rows: [[String]], rightAligned: Set<Int> = [], indent: String, to text: inout ConsoleText
  ) {
    draw(rows, rightAligned: rightAligned, indent: indent) { text.add(line: $0) }
  }

  /// Makes each line as UTF-8 in one reused buffer and hands it to `emit`: a `String` a line
  /// cost more than the table itself at 10,000 rows.
  private static func draw(
    _ rows: [[String]], rightAligned: Set<Int>, indent: String,
    emit: (UnsafeBufferPointer<UInt8>) -> Void
  ) {
    // A loop, not `rows.map(\.count)`: the key path is applied through the run time, a call a
    // row.
    var columns = 0
    for index in rows.indices { columns = max(columns, rows[index].count) }
    // One list of every cell's width, row after row: a list per row is an allocation each,
    // and a cell is measured once, not once for the widths and again for its padding.
    var counts: [Int] = []
    counts.reserveCapacity(rows.count * columns)
    var firstCell: [Int] = []
    firstCell.reserveCapacity(rows.count)
    var widths = [Int](repeating: 0, count: columns)
    // Rows and cells are read in place: iterating would retain each row and each cell.
    for index in rows.indices {
      firstCell.append(counts.count)
      for column in rows[index].indices {
        // In the terminal's columns, as the cell is printed.
        let count = TerminalText.columns(of: rows[index][column])
        counts.append(count)
        widths[column] = max(widths[column], count)
      }
    }
    let isRightAligned = (0..<columns).map { rightAligned.contains($0) }
    var line: [UInt8] = []
    line.reserveCapacity(indent.utf8.count + widths.reduce(2 * max(0, columns - 1), +))
    for index in rows.indices {
      line.removeAll(keepingCapacity: true)
      line.append(contentsOf: indent.utf8)
      let start = line.count
      // Spaces are written only when something follows them: the padding after a row's
      // last cell (and after cells that are empty up to the end) would only be trimmed.
      var spaces = 0
      func write(_ cell: String) {
        if spaces > 0 { line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces)) }
        spaces = 0
        line.append(contentsOf: cell.utf8)
      }
      for column in rows[index].indices {
        if column > 0 { spaces += 2 }
        let padding = widths[column] - counts[firstCell[index] + column]
        let isEmpty = counts[firstCell[index] + column] == 0
        if isRightAligned[column] {
          spaces += padding
          if !isEmpty { write(rows[index][column]) }
        } else {
          if !isEmpty { write(rows[index][column]) }
          spaces += padding
        }
      }
      // A cell's own trailing spaces go too.
      while line.count > start, line.last == UInt8(ascii: " ") { line.removeLast() }
      line.withUnsafeBufferPointer(emit)
    }
  }
}
