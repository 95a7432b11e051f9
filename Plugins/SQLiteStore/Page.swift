import LaunchOrchestrator

/// One page of a library listing.
public struct Page<Item: Sendable & Equatable>: Sendable, Equatable {
  /// The items on the page.
  public var items: [Item]
  /// How many items come before the page.
  public var offset: Int
  /// The page size asked for.
  public var limit: Int
  /// Whether more items follow.
  public var hasMore: Bool

  /// Runs `sql` (which must end in `LIMIT ? OFFSET ?`) for one page, reading one row more
  /// than the page holds to learn whether more follow, and nothing else.
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
}

/// Which slice of a listing a paging step loads, checked when the manifest loads.
public struct PageWindow: Sendable, Equatable {
  /// Items per page.
  public let limit: Int
  /// Items before the page.
  public let offset: Int

  /// Checks `limit` (1 to `maximumLimit`, `defaultLimit` when absent) and `offset` (0 or more).
  public init(limit: Int?, offset: Int?, defaultLimit: Int, maximumLimit: Int)
    throws(ParameterError)
  {
    self.limit = limit ?? defaultLimit
    self.offset = offset ?? 0
    guard (1...maximumLimit).contains(self.limit) else {
      throw ParameterError("limit", "'limit' must be from 1 to \(maximumLimit), not \(self.limit).")
    }
    guard self.offset >= 0 else {
      throw ParameterError("offset", "'offset' cannot be negative (found \(self.offset)).")
    }
  }

  /// Reads a `sort` parameter naming one of `Order`'s cases.
  public static func order<Order: RawRepresentable & CaseIterable>(
    _ sort: String?, default fallback: Order
  ) throws(ParameterError) -> Order where Order.RawValue == String {
    guard let sort else { return fallback }
    if let order = Order(rawValue: sort) { return order }
    let names = Order.allCases.map(\.rawValue)
    throw ParameterError(
      "sort",
      "unknown sort '\(sort)'.\(Suggestions.didYouMean(sort, in: names)) Use one of: \(names.joined(separator: ", "))."
    )
  }
}
