import LaunchOrchestrator

/// An order a library is listed in: its key (with the index that serves it) and the tables a
/// page reads, driven from that index's table.
package protocol ListingOrder: RawRepresentable<String>, Sendable {
  /// The sort key and id the pages walk.
  var keyset: KeysetOrder { get }
  /// The `FROM` clause of a page in this order.
  var tables: String { get }
}

/// A library listed one page at a time, each page found through its order's index: what a
/// paging step (`books.page`, `music.page`) needs to say, so that the paging itself, the
/// store check and the cursor handling are written once.
package protocol PagedListing {
  associatedtype Item: Sendable & Equatable
  associatedtype Order: ListingOrder
  /// The step kind, for messages.
  static var kind: String { get }
  /// The store schema the listing reads.
  static var schema: StoreSchema { get }
  /// What the items are called in messages: `songs`.
  static var itemsName: String { get }
  /// The selected columns, which ``item(_:)`` maps.
  static var columns: String { get }
  /// One item from a row of ``columns``.
  static func item(_ row: SQLiteStatement) -> Item
}

extension PagedListing {
  /// The page at `window` (or after `cursor`) in `order` from `store`.
  /// - Throws: ``StepFailure`` for a store of another schema; the store's failure for an
  ///   ``SQLiteError`` (damage is recorded for the next launch).
  package static func page(
    _ order: Order, window: PageWindow, after cursor: PageCursor? = nil, in store: StoreHandle
  ) throws -> Page<Item> {
    guard store.schema == schema else {
      throw StepFailure(
        "'\(kind)' needs a \(schema.name) store, and its store holds a \(store.schema.name) library; give store.init \"schema\": \"\(schema.name)\""
      )
    }
    do {
      return try Page.load(
        try store.connect(), select: columns, from: order.tables, order: order.keyset,
        window: window, after: cursor, row: item)
    } catch let error as SQLiteError {
      throw store.failure(error)
    }
  }

  /// The page after `cursor` (a page's ``Page/next``) from `store`, in the cursor's order
  /// and size: found through the order's index, so page 1,000 costs what page 2 does.
  /// - Throws: ``StepFailure`` for a cursor of another listing or a store of another schema;
  ///   the store's failure when it cannot be read.
  package static func listingPage(after cursor: PageCursor, in store: StoreHandle) throws
    -> Page<Item>
  {
    guard let order = Order(rawValue: cursor.order) else {
      throw StepFailure(
        "the cursor is for the order '\(cursor.order)', which \(itemsName) are not listed in; use a cursor from a \(kind) page"
      )
    }
    let window = try PageWindow(
      limit: cursor.limit, offset: cursor.offset, defaultLimit: 50, maximumLimit: 1000)
    return try page(order, window: window, after: cursor, in: store)
  }

  /// The step's note for a page it loaded.
  package static func note(for page: Page<Item>, in order: Order) -> String {
    "loaded \(page.items.count) \(itemsName) by \(order.rawValue) from offset \(page.offset) (hasMore: \(page.hasMore))"
  }
}
