import LaunchOrchestrator

/// One page of a library listing.
///
/// Equatable when its items are: as a requirement of the type, `Equatable` would be checked
/// at run time, a search through every conformance the process has loaded, when a launch
/// first works out a paging step's output type, before its first step.
public struct Page<Item: Sendable>: Sendable {
  /// The items on the page.
  public var items: [Item]
  /// How many items come before the page.
  public var offset: Int
  /// The page size asked for.
  public var limit: Int
  /// Whether more items follow.
  public var hasMore: Bool
  /// Where the next page starts, when more items follow: give it to the paging step's
  /// `page(after:in:)` for the next page, found by key however deep it is.
  public var next: PageCursor?

  /// Describes a page.
  public init(items: [Item], offset: Int, limit: Int, hasMore: Bool, next: PageCursor? = nil) {
    self.items = items
    self.offset = offset
    self.limit = limit
    self.hasMore = hasMore
    self.next = next
  }

  /// Runs `sql` (which must end in `LIMIT ? OFFSET ?`) for one page, reading one row more
  /// than the page holds to learn whether more follow, and nothing else; for listings that
  /// have no key order, such as search results by rank.
  public static func load(
    _ connection: SQLiteConnection, sql: String, values: [SQLiteValue] = [], window: PageWindow,
    row: (SQLiteStatement) throws -> Item
  ) throws -> Page {
    let bounds: [SQLiteValue] = [.integer(Int64(window.limit + 1)), .integer(Int64(window.offset))]
    var items = try connection.query(sql, values + bounds, row: row)
    let hasMore = items.count > window.limit
    if hasMore { items.removeLast() }
    return Page(items: items, offset: window.offset, limit: window.limit, hasMore: hasMore)
  }

  /// Loads one page of `columns` from `from` in `order`: the first page at `window.offset`,
  /// or the page after `cursor`. Reads one row more than the page holds to learn whether more
  /// follow, and nothing else: the order's index is walked from the cursor's key, so a page
  /// deep in the listing costs what the first one does (no `OFFSET` to skip over).
  ///
  /// `row` maps the selected `columns`, which come first in each row.
  public static func load(
    _ connection: SQLiteConnection, select columns: String, from: String, order: KeysetOrder,
    window: PageWindow, after cursor: PageCursor? = nil,
    row: (SQLiteStatement) throws -> Item
  ) throws -> Page {
    let fetch = Int64(window.limit + 1)
    let statement = try connection.prepare(order.query(select: columns, from: from, after: cursor))
    try statement.bind(
      cursor.map { [$0.key, .integer($0.id), .integer(fetch)] }
        ?? [.integer(fetch), .integer(Int64(window.offset))])
    var items: [Item] = []
    var last: (key: SQLiteValue, id: Int64)?
    while try statement.step() {
      if items.count == window.limit {
        let offset = (cursor?.offset ?? window.offset) + window.limit
        let next = last.map {
          PageCursor(order: order.name, key: $0.key, id: $0.id, offset: offset, limit: window.limit)
        }
        return Page(
          items: items, offset: offset - window.limit, limit: window.limit, hasMore: true,
          next: next)
      }
      items.append(try row(statement))
      let keyColumn = statement.columnCount - 2
      last = (statement.value(keyColumn), statement.integer(keyColumn + 1))
    }
    return Page(
      items: items, offset: cursor?.offset ?? window.offset, limit: window.limit, hasMore: false)
  }
}

/// A page of `Codable` items is `Codable`, so a step that outputs one can have a `cache`.
extension Page: Equatable where Item: Equatable {}

extension Page: Codable where Item: Codable {}

/// Where the page after a page starts: the order, and the sort key and id of that page's
/// last item.
public struct PageCursor: Sendable, Equatable, Codable {
  /// The order's name, such as `mostPlayed`.
  public var order: String
  /// The last item's sort key.
  public var key: SQLiteValue
  /// The last item's id.
  public var id: Int64
  /// How many items come before the next page.
  public var offset: Int
  /// The page size.
  public var limit: Int

  /// Describes a position in a listing.
  public init(order: String, key: SQLiteValue, id: Int64, offset: Int, limit: Int) {
    self.order = order
    self.key = key
    self.id = id
    self.offset = offset
    self.limit = limit
  }
}

/// An order a listing is paged in: a sort key, then the id, served by an index on both.
public struct KeysetOrder: Sendable, Equatable {
  /// The order's name in params, such as `mostPlayed`.
  public var name: String
  /// The sort key as SQL, such as `songs.play_count` or `songs.title COLLATE NOCASE`.
  public var key: String
  /// Whether larger keys come first.
  public var isDescending: Bool
  /// Whether the key may be NULL (SQLite sorts NULL below every value).
  public var isNullable: Bool
  /// The id as SQL, such as `songs.id`: ascending within equal keys.
  public var id: String
  /// The collation of the key, such as `NOCASE`, when it has one.
  public var collation: String?

  /// Describes an order.
  public init(
    name: String, key: String, descending: Bool, nullable: Bool = false, id: String,
    collation: String? = nil
  ) {
    self.name = name
    self.key = collation.map { "\(key) COLLATE \($0)" } ?? key
    self.isDescending = descending
    self.isNullable = nullable
    self.id = id
    self.collation = collation
  }

  /// `ORDER BY` of the listing.
  public var orderBy: String { "\(key)\(isDescending ? " DESC" : ""), \(id)" }

  /// The query of a page of `columns` from `from`, which adds the key and id as the last two
  /// columns: without `cursor`, the first page (`?1` rows after skipping `?2`); with it, the
  /// rows after the cursor (`?1` its key, `?2` its id, `?3` how many).
  ///
  /// After a cursor it is the union of ranges that each walk the index from a starting key
  /// (the rest of the cursor's key, then the keys beyond it, then the NULL keys when they
  /// sort last), each stopping after `?3` rows: a single `(key, id) > (?, ?)` cannot serve an
  /// order whose key descends while the id ascends.
  public func query(select columns: String, from: String, after cursor: PageCursor?) -> String {
    let select = "SELECT \(columns), \(key) AS page_key, \(id) AS page_id FROM \(from)"
    guard let cursor else { return "\(select) ORDER BY \(orderBy) LIMIT ?1 OFFSET ?2" }
    func range(_ condition: String, orderBy: String) -> String {
      "SELECT * FROM (\(select) WHERE \(condition) ORDER BY \(orderBy) LIMIT ?3)"
    }
    var ranges: [String]
    if cursor.key == .null {
      ranges = [range("\(key) IS NULL AND \(id) > ?2", orderBy: id)]
      if !isDescending { ranges.append(range("\(key) IS NOT NULL", orderBy: orderBy)) }
    } else {
      ranges = [
        range("\(key) = ?1 AND \(id) > ?2", orderBy: id),
        range("\(key) \(isDescending ? "<" : ">") ?1", orderBy: orderBy),
      ]
      if isNullable && isDescending { ranges.append(range("\(key) IS NULL", orderBy: id)) }
    }
    let pageKey = collation.map { "page_key COLLATE \($0)" } ?? "page_key"
    return ranges.joined(separator: " UNION ALL ")
      + " ORDER BY \(pageKey)\(isDescending ? " DESC" : ""), page_id LIMIT ?3"
  }
}

/// Which slice of a listing a paging step loads: the values its parameters declare and
/// checked when the manifest loaded.
public struct PageWindow: Sendable, Equatable {
  /// Items per page.
  public let limit: Int
  /// Items before the page.
  public let offset: Int

  /// The `limit` items after the first `offset`.
  public init(limit: Int, offset: Int = 0) {
    // Not bounds (the declarations hold those) but what any page is: a negative limit would
    // read the whole listing.
    precondition(limit >= 1 && offset >= 0, "a page holds 1 item or more, after 0 or more")
    self.limit = limit
    self.offset = offset
  }
}
