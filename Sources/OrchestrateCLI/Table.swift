/// Columns of text, left-aligned unless told otherwise, two spaces apart.
enum Table {
  /// The table's lines, with no trailing spaces.
  static func render(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
    var lines: [String] = []
    lines.reserveCapacity(rows.count)
    draw(TableCells(rows), rightAligned: rightAligned, indent: "") { line, _ in
      lines.append(String(decoding: line, as: UTF8.self))
    }
    return lines
  }

  /// Adds the table's lines to `text`, each after `indent`.
  static func write(
    _ rows: [[String]], rightAligned: Set<Int> = [], indent: String, to text: inout ConsoleText
  ) {
    write(TableCells(rows), rightAligned: rightAligned, indent: indent, to: &text)
  }

  /// Adds the lines of a table whose cells are written as UTF-8 into `cells` to `text`, each
  /// after `indent`.
  static func write(
    _ cells: TableCells, rightAligned: Set<Int> = [], indent: String, to text: inout ConsoleText
  ) {
    draw(cells, rightAligned: rightAligned, indent: indent) { line, isPrintableASCII in
      text.add(line: line, isKnownSafe: isPrintableASCII)
    }
  }

  /// Makes each line as UTF-8 in one reused buffer and hands it to `emit`, with whether it
  /// is only printable ASCII: a `String` a line cost more than the table itself at 10,000
  /// rows.
  private static func draw(
    _ cells: TableCells, rightAligned: Set<Int>, indent: String,
    emit: (UnsafeBufferPointer<UInt8>, Bool) -> Void
  ) {
    var columns = 0
    for row in 0..<cells.rowCount { columns = max(columns, cells.cellCount(ofRow: row)) }
    // Every cell's width, row after row, in the order of `cells`: a cell is measured once,
    // not once for the widths and again for its padding.
    var counts: [Int] = []
    counts.reserveCapacity(cells.cellCount)
    var widths = [Int](repeating: 0, count: columns)
    var isPrintableASCII = TerminalText.measured(indent).isPrintableASCII
    for row in 0..<cells.rowCount {
      let first = cells.firstCell(ofRow: row)
      for column in 0..<cells.cellCount(ofRow: row) {
        // In the terminal's columns, as the cell is printed.
        let (count, isASCII) = cells.withCell(first + column) {
          TerminalText.measured(utf8: $0)
        }
        isPrintableASCII = isPrintableASCII && isASCII
        counts.append(count)
        widths[column] = max(widths[column], count)
      }
    }
    let isRightAligned = (0..<columns).map { rightAligned.contains($0) }
    var line: [UInt8] = []
    line.reserveCapacity(indent.utf8.count + widths.reduce(2 * max(0, columns - 1), +))
    // The cells' bytes read through one pointer, and no function nested in the loop: one that
    // changed `line` made it a captured variable, checked for exclusive access at each change.
    cells.withCells { bytes, ends in
      for row in 0..<cells.rowCount {
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: indent.utf8)
        let start = line.count
        let first = cells.firstCell(ofRow: row)
        // Spaces are written only when something follows them: the padding after a row's
        // last cell (and after cells that are empty up to the end) would only be trimmed.
        var spaces = 0
        for column in 0..<cells.cellCount(ofRow: row) {
          let cell = first + column
          if column > 0 { spaces += 2 }
          let padding = widths[column] - counts[cell]
          if isRightAligned[column] { spaces += padding }
          if counts[cell] != 0 {
            if spaces > 0 {
              line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: spaces))
            }
            spaces = 0
            let cellStart = cell == 0 ? 0 : ends[cell - 1]
            line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cellStart..<ends[cell]]))
          }
          if !isRightAligned[column] { spaces += padding }
        }
        // A cell's own trailing spaces go too.
        while line.count > start, line.last == UInt8(ascii: " ") { line.removeLast() }
        line.withUnsafeBufferPointer { emit($0, isPrintableASCII) }
      }
    }
  }
}

/// A table's cells as UTF-8 in one buffer, row after row: a `String` a cell and an array a
/// row cost more than drawing the table at 10,000 rows.
struct TableCells {
  /// Every cell's bytes, one after another.
  private(set) var bytes: [UInt8] = []
  /// Where each cell ends in ``bytes``.
  private var ends: [Int] = []
  /// The index of each row's first cell.
  private var rowStarts: [Int] = []

  init() {}

  /// A table of `rows`.
  init(_ rows: [[String]]) {
    rowStarts.reserveCapacity(rows.count)
    // Rows and cells are read in place: iterating would retain each row and each cell.
    for row in rows.indices {
      startRow()
      for column in rows[row].indices { add(rows[row][column]) }
    }
  }

  /// Makes room for `rows` rows of `cells` cells and `bytes` bytes in all.
  mutating func reserveCapacity(rows: Int, cells: Int, bytes: Int) {
    rowStarts.reserveCapacity(rows)
    ends.reserveCapacity(cells)
    self.bytes.reserveCapacity(bytes)
  }

  /// Starts a row: the cells added next are its own.
  mutating func startRow() {
    rowStarts.append(ends.count)
  }

  /// Adds `text` as the next cell of the row.
  mutating func add(_ text: String) {
    bytes.append(contentsOf: text.utf8)
    ends.append(bytes.count)
  }

  /// Adds the next cell of the row, whose UTF-8 text `write` appends to the bytes it is
  /// handed.
  mutating func addCell(_ write: (inout [UInt8]) -> Void) {
    write(&bytes)
    ends.append(bytes.count)
  }

  var rowCount: Int { rowStarts.count }

  var cellCount: Int { ends.count }

  func firstCell(ofRow row: Int) -> Int { rowStarts[row] }

  func cellCount(ofRow row: Int) -> Int {
    (row + 1 < rowStarts.count ? rowStarts[row + 1] : ends.count) - rowStarts[row]
  }

  /// Calls `body` with every cell's bytes and where each cell ends in them.
  func withCells<Result>(
    _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<Int>) -> Result
  ) -> Result {
    bytes.withUnsafeBufferPointer { bytes in ends.withUnsafeBufferPointer { body(bytes, $0) } }
  }

  /// Calls `body` with the bytes of cell `cell` (counted over all rows).
  func withCell<Result>(_ cell: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    let start = cell == 0 ? 0 : ends[cell - 1]
    return bytes.withUnsafeBufferPointer {
      body(UnsafeBufferPointer(rebasing: $0[start..<ends[cell]]))
    }
  }
}
