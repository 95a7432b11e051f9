/// Columns of text, left-aligned unless told otherwise, two spaces apart.
enum Table {
  static func render(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
    // A string's count walks its characters: each cell is counted once, not once for the
    // widths and again for its padding.
    let columns = rows.map(\.count).max() ?? 0
    // One list of every cell's count, row after row: a list per row is an allocation each.
    var counts: [Int] = []
    counts.reserveCapacity(rows.count * columns)
    var firstCell: [Int] = []
    firstCell.reserveCapacity(rows.count)
    var widths = [Int](repeating: 0, count: columns)
    for row in rows {
      firstCell.append(counts.count)
      for (column, cell) in row.enumerated() {
        let count = cell.count
        counts.append(count)
        widths[column] = max(widths[column], count)
      }
    }
    let isRightAligned = (0..<columns).map { rightAligned.contains($0) }
    // A line's room is reserved once, and its padding taken from one run of spaces.
    let lineWidth = widths.reduce(2 * max(0, columns - 1), +)
    let blanks = String(repeating: " ", count: lineWidth)
    return rows.indices.map { index in
      var line = ""
      line.reserveCapacity(lineWidth)
      // Spaces are written only when something follows them: the padding after a row's
      // last cell (and after cells that are empty up to the end) would only be trimmed.
      var spaces = 0
      func write(_ cell: String) {
        if spaces > 0 { line += blanks.prefix(spaces) }
        spaces = 0
        line += cell
      }
      for (column, cell) in rows[index].enumerated() {
        if column > 0 { spaces += 2 }
        let padding = widths[column] - counts[firstCell[index] + column]
        if isRightAligned[column] {
          spaces += padding
          if !cell.isEmpty { write(cell) }
        } else {
          if !cell.isEmpty { write(cell) }
          spaces += padding
        }
      }
      // A cell's own trailing spaces go too, from the end only: reversing the whole line
      // twice to drop them cost more than building it.
      while line.last == " " { line.removeLast() }
      return line
    }
  }
}
