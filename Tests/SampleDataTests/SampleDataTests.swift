import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import SampleDataPlugin
import StoreInitPlugin
import Testing

@Suite("sample.data", .timeLimit(.minutes(1)))
struct SampleDataTests {
  private func manifest(schema: String) -> String {
    """
    { "version": 1, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "schema": "\(schema)" } },
      { "id": "sample", "plugin": "sample.data", "dependsOn": ["store"] }
    ] }
    """
  }

  private func count(_ table: String, in folder: ScratchFolder) throws -> Int64? {
    try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readOnly).integer(
      "SELECT count(*) FROM \(table)")
  }

  @Test(arguments: [("books", "works", 7), ("music", "songs", 15)])
  func seedsAnEmptyLibraryOnceAndNeverTwice(schema: String, table: String, expected: Int64)
    async throws
  {
    let folder = try ScratchFolder()
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self, SampleDataStep.self]
    let first = try await launch(manifest(schema: schema), in: folder, plugins: plugins).report
    #expect(first.outcome == .succeeded)
    #expect(first.step("sample")?.notes == ["added \(expected) sample items"])
    #expect(try count(table, in: folder) == expected)
    let second = try await launch(manifest(schema: schema), in: folder, plugins: plugins).report
    #expect(second.step("sample")?.notes == ["the library already has items; no sample data added"])
    #expect(try count(table, in: folder) == expected)
  }

  @Test func leavesALibraryWithItsOwnBooksAlone() async throws {
    let folder = try ScratchFolder()
    let plugins: [any StepPlugin.Type] = [StoreInitStep.self]
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: plugins)
    try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite).run(
      "INSERT INTO works (title) VALUES ('My Own Book')")
    let report = try await launch(
      manifest(schema: "books"), in: folder, plugins: [StoreInitStep.self, SampleDataStep.self]
    ).report
    #expect(report.outcome == .succeeded)
    #expect(try count("works", in: folder) == 1)
  }

  @Test func needsAStoreFromADependency() {
    #expect(
      loadProblems(
        #"{ "version": 1, "steps": [ { "id": "sample", "plugin": "sample.data" } ] }"#,
        plugins: [StoreInitStep.self, SampleDataStep.self])
        == [
          "steps[0].dependsOn: step 'sample' ('sample.data') needs a StoreHandle from a dependency, and none of its 'dependsOn' steps provides one; add a step of kind 'store.init' to its 'dependsOn'."
        ])
  }
}
