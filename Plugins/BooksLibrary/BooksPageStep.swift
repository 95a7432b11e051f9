import LaunchOrchestrator
import SQLiteStore

/// A book on the user's shelf.
public struct LibraryBook: Sendable, Equatable {
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
public struct BooksPageStep: StepPlugin {
  /// The kind name.
  public static let kind = "books.page"
  /// What the step does.
  public static let summary =
    "Loads one page of the books library, newest or alphabetical; reports hasMore."
  /// It needs a books store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("limit", .integer(minimum: 1, maximum: 1000), default: "50", "Books per page."),
    .init("offset", .integer(minimum: 0), default: "0", "Books before the page."),
    .init(
      "sort", .oneOf(Order.allCases.map(\.rawValue)), default: "recentlyAdded",
      "The order of the books."),
  ]

  enum Order: String, CaseIterable {
    case recentlyAdded, alphabetical

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

    var orderBy: String {
      switch self {
      case .recentlyAdded: "library_entries.added_at DESC, library_entries.id"
      case .alphabetical: "works.title COLLATE NOCASE, library_entries.id"
      }
    }
  }

  /// The page query for `order`, ending in `LIMIT ? OFFSET ?`.
  static func query(_ order: Order) -> String {
    """
    SELECT library_entries.id, works.title, authors.name, library_entries.status
    FROM \(order.from)
    LEFT JOIN authors ON authors.id = works.author_id
    ORDER BY \(order.orderBy) LIMIT ? OFFSET ?
    """
  }

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var limit: Int?
    var offset: Int?
    var sort: String?
  }

  private let window: PageWindow
  private let order: Order

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    window = try PageWindow(
      limit: parameters.limit, offset: parameters.offset, defaultLimit: 50, maximumLimit: 1000)
    order = try PageWindow.order(parameters.sort, default: .recentlyAdded)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Loads the page.
  public func run(_ context: StepContext) async throws -> Page<LibraryBook> {
    let store = try context.input(StoreHandle.self)
    guard store.schema == .books else {
      throw StepFailure(
        "'books.page' needs a books store, and its store holds a \(store.schema.name) library; give store.init \"schema\": \"books\""
      )
    }
    let page: Page<LibraryBook>
    do {
      page = try Page.load(try store.connect(), sql: Self.query(order), window: window) { row in
        LibraryBook(
          id: row.integer(0), title: row.text(1) ?? "", author: row.text(2),
          status: row.text(3) ?? "")
      }
    } catch let error as SQLiteError {
      throw store.failure(error)
    }
    context.log(
      "loaded \(page.items.count) books by \(order.rawValue) from offset \(window.offset) (hasMore: \(page.hasMore))"
    )
    return page
  }
}
