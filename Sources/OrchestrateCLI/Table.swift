/// Columns of text, left-aligned unless told otherwise, two spaces apart.
enum Table {
  static func render(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in
      rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
    }
    return rows.map { row in
      row.enumerated().map { column, cell in
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        if rightAligned.contains(column) { return padding + cell }
        return cell + padding
      }.joined(separator: "  ").trimmingTrailingSpaces
    }
  }
}

extension String {
  fileprivate var trimmingTrailingSpaces: String {
    String(reversed().drop { $0 == " " }.reversed())
  }
}
