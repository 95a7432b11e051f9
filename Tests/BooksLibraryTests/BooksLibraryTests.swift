import BooksLibraryPlugin
import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SampleDataPlugin
import StoreInitPlugin
import Testing

@Suite("books.page", .timeLimit(.minutes(1)))
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

  @Test func rejectsAnUnknownSort() {
    #expect(
      loadProblems(
        #"{ "version": 1, "steps": [ { "id": "p", "plugin": "books.page", "params": { "sort": "title" } } ] }"#,
        plugins: [BooksPageStep.self]
      ).contains(
        "steps[0].params.sort: unknown sort 'title'. Use one of: recentlyAdded, alphabetical."))
  }
}
