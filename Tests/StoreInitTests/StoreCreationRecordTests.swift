import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

/// `store.init` records beside a store when it created it, for that very file: every later
/// launch knows the store holds nothing the app wrote before then.
@Suite("store.init records when a store is new", .timeLimit(.minutes(10)))
struct StoreCreationRecordTests {
  private let store = storeManifest(#"{ "path": "library.sqlite" }"#)

  private func openedStore(in folder: ScratchFolder) async throws -> StoreHandle {
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    return try #require(report.output(of: "store", as: StoreHandle.self), "\(report)")
  }

  @Test func aCreatedStoreKeepsItsRecordedTimeInLaterLaunches() async throws {
    let folder = try ScratchFolder()
    let before = Date()
    let created = try #require(try await openedStore(in: folder).recordedCreation())
    #expect(created >= before && created <= Date())
    let later = try await openedStore(in: folder)
    #expect(!later.isNew)
    #expect(later.recordedCreation() == created)
  }

  @Test func aRecoveredStoreIsRecordedAnewAndAReplacedOneIsNotTheRecordedOne() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    let first = try #require(try await openedStore(in: folder).recordedCreation())

    // Another file put at the path (a copy the app restored): the record is not about it.
    try FileManager.default.copyItem(at: url, to: folder.file("copy.sqlite"))
    try FileManager.default.removeItem(at: url)
    try FileManager.default.moveItem(at: folder.file("copy.sqlite"), to: url)
    let replaced = try await openedStore(in: folder)
    #expect(!replaced.isNew)
    #expect(replaced.recordedCreation() == nil)

    try replaced.recordDamage("a query found the store malformed")
    try damageLastPage(of: url)
    let before = Date()
    let recovered = try await openedStore(in: folder)
    #expect(recovered.movedAside != nil)
    let again = try #require(recovered.recordedCreation())
    #expect(again >= before && again > first)
  }

  @Test func aStoreLeftAtVersion0IsRecordedWhenItGetsItsTables() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    // An empty database, as a launch stopped before its first migration leaves it.
    try SQLiteConnection(url: url, mode: .create).execute("PRAGMA user_version = 0")
    #expect(!FileManager.default.fileExists(atPath: StoreHandle.creationRecord(for: url).path))
    let before = Date()
    let opened = try await openedStore(in: folder)
    #expect(opened.isNew)
    #expect(try #require(opened.recordedCreation()) >= before)
  }

  @Test func aLinkWhereTheRecordGoesIsNotFollowed() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    let precious = try folder.write("precious.txt", "the user's own words")
    try FileManager.default.createSymbolicLink(
      at: StoreHandle.creationRecord(for: url), withDestinationURL: precious)
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    #expect(
      storeError(report)?.hasPrefix("cannot record that the store '\(url.path)' is new (") == true)
    #expect(try String(contentsOf: precious, encoding: .utf8) == "the user's own words")
  }

  @Test func aStoreWhoseCreationCannotBeRecordedIsNotMigratedAndSaysWhy() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    try FileManager.default.createDirectory(
      at: StoreHandle.creationRecord(for: url), withIntermediateDirectories: false)
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    let error = try #require(storeError(report))
    #expect(error.hasPrefix("cannot record that the store '\(url.path)' is new ("), "\(error)")
    #expect(
      error.hasSuffix(
        "), which keeps the app's older data from being judged against it; the store was left at version 0, and the next launch tries again"
      ), "\(error)")
    #expect(try SQLiteConnection(url: url, mode: .readOnly).userVersion() == 0)

    try FileManager.default.removeItem(at: StoreHandle.creationRecord(for: url))
    let opened = try await openedStore(in: folder)
    #expect(opened.isNew)
    #expect(opened.version == StoreSchema.books.latestVersion)
    #expect(opened.recordedCreation() != nil)
  }
}
