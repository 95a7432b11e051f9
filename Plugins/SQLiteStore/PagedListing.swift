import LaunchOrchestrator

/// The orders a paging step lists its items in: the values of its `sort` parameter.
public protocol PageOrder: ParameterValue, CaseIterable, RawRepresentable<String> {
  /// The order a manifest gets when it gives no `sort`.
  static var defaultOrder: Self { get }
  /// What the items are called in summaries and messages: `songs`.
  static var itemsName: String { get }
}

/// The page sizes a paging step takes, for its `limit` and for the cursors its pages hand out.
private let pageSizes = 1...1000

/// What a manifest gives a paging step (`books.page`, `music.page`): declared once for every
/// listing, so that their parameters, their schema and the cursors they accept agree.
///
/// Parameters when `Order` is a ``PageOrder``: as a requirement of the type, `PageOrder` would be
/// checked at run time, a search through every conformance the process has loaded, when a
/// launch first works out a paging step's parameter type, before its first step.
public struct ListingParameters<Order: Sendable>: Sendable {
  /// Items per page, from 1 to 1,000.
  @Parameter public var limit: Int
  /// Items before the page.
  @Parameter public var offset: Int
  /// The order of the items.
  @Parameter public var sort: Order
}

extension ListingParameters: StepParameters where Order: PageOrder {
  /// The first page of 50 items in the default order.
  public init() {
    _limit = Parameter(wrappedValue: 50, "\(Order.itemsTitle) per page.", in: pageSizes)
    _offset = Parameter(wrappedValue: 0, "\(Order.itemsTitle) before the page.", in: 0...)
    _sort = Parameter(wrappedValue: Order.defaultOrder, "The order of the \(Order.itemsName).")
  }
}

extension PageOrder {
  /// What the items are called, at the start of a sentence: `Songs`.
  fileprivate static var itemsTitle: String {
    // Strings joined as strings: `+` with a `Substring` is generic code that looks up its
    // conformances at run time, on a launch's cold path (every step's parameters say this).
    guard let first = itemsName.first else { return itemsName }
    return String(first).uppercased() + String(itemsName.dropFirst())
  }
}

/// An order a library is listed in: its key (with the index that serves it) and the tables a
/// page reads, driven from that index's table.
public protocol ListingOrder: PageOrder, Sendable {
  /// The sort key and id the pages walk.
  var keyset: KeysetOrder { get }
  /// The `FROM` clause of a page in this order.
  var tables: String { get }
}

/// A library listed one page at a time, each page found through its order's index: what a
/// paging step (`books.page`, `music.page`) needs to say, so that its parameters, the paging
/// itself, the store check and the cursor handling are written once.
public protocol PagedListing {
  associatedtype Item: Sendable & Equatable
  associatedtype Order: ListingOrder
  /// The step kind, for messages.
  static var kind: String { get }
  /// The store schema the listing reads.
  static var schema: StoreSchema { get }
  /// The selected columns, which ``item(_:)`` maps.
  static var columns: String { get }
  /// One item from a row of ``columns``.
  static func item(_ row: SQLiteStatement) -> Item
}

extension PagedListing {
  /// The page `parameters` ask for, from the store of the step's nearest dependency; noted
  /// in the step's log.
  /// - Throws: ``StepFailure`` for a store of another schema; the store's failure when it
  ///   cannot be read.
  public static func page(_ parameters: ListingParameters<Order>, in context: StepContext)
    throws -> Page<Item>
  {
    let page = try page(
      parameters.sort, window: PageWindow(limit: parameters.limit, offset: parameters.offset),
      in: try context.input(StoreHandle.self))
    context.log(
      "loaded \(page.items.count) \(Order.itemsName) by \(parameters.sort.rawValue) from offset \(page.offset) (hasMore: \(page.hasMore))"
    )
    return page
  }

  /// The page at `window` (or after `cursor`) in `order` from `store`.
  /// - Throws: ``StepFailure`` for a store of another schema; the store's failure for an
  ///   ``SQLiteError`` (damage is recorded for the next launch).
  public static func page(
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
  /// - Throws: ``StepFailure`` for a cursor of another listing, or with a size or offset the
  ///   listing's parameters do not allow; for a store of another schema; the store's failure
  ///   when it cannot be read.
  public static func listingPage(after cursor: PageCursor, in store: StoreHandle) throws
    -> Page<Item>
  {
    guard let order = Order(rawValue: cursor.order) else {
      throw StepFailure(
        "the cursor is for the order '\(cursor.order)', which \(Order.itemsName) are not listed in; use a cursor from a \(kind) page"
      )
    }
    // A cursor comes from the app, which may have kept it from an older build: it is held to
    // the declaration of the step's parameters, which made it.
    guard pageSizes.contains(cursor.limit) else {
      throw StepFailure(
        "the cursor asks for pages of \(cursor.limit) \(Order.itemsName), and \(kind) pages hold from \(pageSizes.lowerBound) to \(pageSizes.upperBound); use a cursor from a \(kind) page"
      )
    }
    guard cursor.offset >= 0 else {
      throw StepFailure(
        "the cursor's offset is \(cursor.offset), and a listing has no \(Order.itemsName) before its first; use a cursor from a \(kind) page"
      )
    }
    return try page(
      order, window: PageWindow(limit: cursor.limit, offset: cursor.offset), after: cursor,
      in: store)
  }
}
