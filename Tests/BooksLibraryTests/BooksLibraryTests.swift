import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import SampleDataPlugin
import StoreInitPlugin
import Testing

@testable import BooksLibraryPlugin

@Suite("books.page", .timeLimit(.minutes(10)))
struct BooksLibraryTests {
  private func page(_ params: String) async throws -> LaunchReport {
    let folder = try ScratchFolder()
    return try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"] },
        { "id": "page", "plugin": "books.page", "dependsOn": ["store"], "after": ["sample"], "params": \(params) }
      ] }
      """, in: folder, plugins: [StoreInitStep.self, SampleDataStep.self, BooksPageStep.self]
    ).report
  }

  @Test func pagesTheSampleLibrary() async throws {
    let first = try await page(#"{ "limit": 5, "sort": "alphabetical" }"#)
    #expect(first.outcome == .succeeded)
    #expect(
      first.step("page")?.notes == ["loaded 5 books by alphabetical from offset 0 (hasMore: true)"])
    let last = try await page(#"{ "limit": 5, "offset": 5 }"#)
    #expect(
      last.step("page")?.notes == ["loaded 2 books by recentlyAdded from offset 5 (hasMore: false)"]
    )
  }

  @Test(arguments: BooksPageStep.Order.allCases)
  func walksAnIndexForEveryOrderWithoutScanningATable(order: BooksPageStep.Order) async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    let store = StoreHandle(
      url: folder.file("library.sqlite"), schema: .books, version: 4, isReadOnly: true,
      busyTimeout: .seconds(1))
    let connection = try store.connect()
    let query = order.keyset.query(
      select: BooksPageStep.columns, from: order.tables, after: nil)
    let plan = try connection.query("EXPLAIN QUERY PLAN " + query, [51, 0]) { $0.text(3) ?? "" }
    // The first table is walked through the index of the order and the walk stops after the
    // page; every other table is reached by a key. Nothing is read whole or sorted whole.
    #expect(
      plan.first?.hasPrefix("SCAN ") == true && plan.first?.contains(" USING ") == true, "\(plan)")
    #expect(
      plan.dropFirst().allSatisfy {
        $0.hasPrefix("SEARCH ") || $0.contains("RIGHT PART OF ORDER BY")
      }, "\(plan)")
    #expect(!plan.contains { $0.contains("AUTOMATIC") }, "\(plan)")

    let cursor = PageCursor(order: order.rawValue, key: "Kindred", id: 3, offset: 50, limit: 50)
    let later = try connection.query(
      "EXPLAIN QUERY PLAN "
        + order.keyset.query(select: BooksPageStep.columns, from: order.tables, after: cursor),
      ["Kindred", 3, 51]
    ) { $0.text(3) ?? "" }
    // Every table is reached through an index, from the cursor's key on.
    let reads = later.filter { $0.hasPrefix("SCAN ") || $0.hasPrefix("SEARCH ") }
    #expect(
      reads.allSatisfy { $0.hasPrefix("SEARCH ") || $0.hasPrefix("SCAN (subquery") }, "\(later)")
    #expect(!later.contains { $0.contains("AUTOMATIC") }, "\(later)")
  }

  @Test(arguments: BooksPageStep.Order.allCases)
  func pagesByCursorAsOneListing(order: BooksPageStep.Order) async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"] },
        { "id": "page", "plugin": "books.page", "dependsOn": ["store"], "after": ["sample"],
          "params": { "limit": 50, "sort": "\(order.rawValue)" } }
      ] }
      """, in: folder, plugins: [StoreInitStep.self, SampleDataStep.self, BooksPageStep.self]
    ).report
    #expect(report.outcome == .succeeded)
    let store = StoreHandle(
      url: folder.file("library.sqlite"), schema: .books, version: 4, isReadOnly: true,
      busyTimeout: .seconds(1))
    let context = StepContext(stepID: "page", manifestDirectory: folder.url, outputs: { [store] })
    let whole = try await BooksPageStep(
      parameters: .init(limit: 50, sort: order)
    ).run(context).items
    var page = try await BooksPageStep(
      parameters: .init(limit: 2, sort: order)
    ).run(context)
    var books = page.items
    while let next = page.next {
      page = try BooksPageStep.page(after: next, in: store)
      books += page.items
    }
    #expect(whole.count == 7)
    #expect(books == whole)
  }

  @Test func rejectsAnUnknownSort() {
    #expect(
      loadProblems(
        #"{ "version": 1, "steps": [ { "id": "p", "plugin": "books.page", "params": { "sort": "title" } } ] }"#,
        plugins: [BooksPageStep.self]
      ).contains(
        "steps[0].params.sort: unknown sort 'title'. Use one of: recentlyAdded, alphabetical."))
  }
}

extension BooksPageStep.Parameters {
  /// Parameters made in code, as a manifest would give them.
  fileprivate init(limit: Int, sort: BooksPageStep.Order) {
    self.init()
    self.limit = limit
    self.sort = sort
  }
}
