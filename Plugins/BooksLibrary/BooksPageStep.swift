import LaunchOrchestrator
import SQLiteStore

/// A book on the user's shelf.
public struct LibraryBook: Sendable, Equatable, Codable {
  /// The library entry's id.
  public var id: Int64
  /// The work's title.
  public var title: String
  /// The author, if known.
  public var author: String?
  /// `toRead`, `reading` or `read`.
  public var status: String
}

/// `books.page`: loads one page of the user's books library without loading the rest of it.
public struct BooksPageStep: StepPlugin, PagedListing {
  /// The kind name.
  public static let kind = "books.page"
  /// What the step does.
  public static let summary =
    "Loads one page of the books library, newest or alphabetical; reports hasMore."
  /// It needs a books store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]

  /// The orders books are listed in.
  public enum Order: String, CaseIterable, ParameterValue, ListingOrder {
    /// Newest on the shelf first.
    case recentlyAdded
    /// By title, ignoring case.
    case alphabetical

    /// Newest first.
    public static let defaultOrder = recentlyAdded
    /// Books.
    public static let itemsName = "books"

    /// The joins, driven from the table whose index gives the order, so that SQLite walks
    /// that index and stops after the page (`CROSS JOIN` keeps the order of the tables).
    var from: String {
      switch self {
      case .recentlyAdded:
        """
        library_entries
        JOIN editions ON editions.id = library_entries.edition_id
        JOIN works ON works.id = editions.work_id
        """
      case .alphabetical:
        """
        works
        CROSS JOIN editions ON editions.work_id = works.id
        CROSS JOIN library_entries ON library_entries.edition_id = editions.id
        """
      }
    }

    /// The sort key and id of the order.
    public var keyset: KeysetOrder {
      switch self {
      case .recentlyAdded:
        KeysetOrder(
          name: rawValue, key: "library_entries.added_at", descending: true,
          id: "library_entries.id")
      case .alphabetical:
        KeysetOrder(
          name: rawValue, key: "works.title", descending: false, id: "library_entries.id",
          collation: "NOCASE")
      }
    }

    /// The tables of a page in this order.
    public var tables: String { "\(from) LEFT JOIN authors ON authors.id = works.author_id" }
  }

  /// A books store.
  public static let schema = StoreSchema.books
  /// The columns of a book.
  public static let columns =
    "library_entries.id, works.title, authors.name, library_entries.status"

  /// A book from a row of ``columns``.
  public static func item(_ row: SQLiteStatement) -> LibraryBook {
    LibraryBook(
      id: row.integer(0), title: row.text(1) ?? "", author: row.text(2),
      status: row.text(3) ?? "")
  }

  /// What a manifest gives the step: the page size, offset and order every listing takes.
  public typealias Parameters = ListingParameters<Order>

  private let parameters: Parameters

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) { self.parameters = parameters }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<LibraryBook> {
    try Self.page(parameters, in: context)
  }

  /// The page after `cursor` (a page's ``Page/next``) from the books `store`, in the
  /// cursor's order and size, found through the order's index.
  /// - Throws: ``StepFailure`` for a cursor of another listing or a store that is not a
  ///   books store; ``SQLiteError`` when the store cannot be read.
  public static func page(after cursor: PageCursor, in store: StoreHandle) throws
    -> Page<LibraryBook>
  {
    try listingPage(after: cursor, in: store)
  }
}
