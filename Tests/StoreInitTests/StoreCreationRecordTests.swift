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
    #expect(try later.recordedCreation() == created)
  }

  @Test func theRecordIsBesideTheDatabaseALinkLeadsTo() async throws {
    let folder = try ScratchFolder()
    try FileManager.default.createDirectory(
      at: folder.file("shared"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("library.sqlite").path, withDestinationPath: "shared/library.sqlite")
    let opened = try await openedStore(in: folder)
    #expect(
      FileManager.default.fileExists(atPath: folder.file("shared/library.sqlite.created").path))
    #expect(!FileManager.default.fileExists(atPath: folder.file("library.sqlite.created").path))
    // A launch that names the database itself (an extension sharing it) reads the same record.
    let (report, _) = try await launch(
      storeManifest(#"{ "path": "shared/library.sqlite" }"#), in: folder,
      plugins: [StoreInitStep.self])
    let direct = try #require(report.output(of: "store", as: StoreHandle.self))
    #expect(try direct.recordedCreation() == opened.recordedCreation())
  }

  @Test func aCopiedFolderKeepsItsRecordAndARecoveredStoreIsRecordedAnew() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    let first = try #require(try await openedStore(in: folder).recordedCreation())

    // The folder copied or restored elsewhere: the record goes with the store.
    let copy = try ScratchFolder()
    for name in ["library.sqlite", "library.sqlite.created"] {
      try FileManager.default.copyItem(at: folder.file(name), to: copy.file(name))
    }
    #expect(try await openedStore(in: copy).recordedCreation() == first)

    let opened = try await openedStore(in: folder)
    try opened.recordDamage("a query found the store malformed")
    try damageLastPage(of: url)
    let before = Date()
    let recovered = try await openedStore(in: folder)
    #expect(recovered.movedAside != nil)
    let again = try #require(try recovered.recordedCreation())
    #expect(again >= before && again > first)
  }

  @Test func aRecordThatCannotBeReadJudgesNothingAndIsNeverReplaced() async throws {
    let folder = try ScratchFolder()
    let url = folder.file("library.sqlite")
    _ = try await openedStore(in: folder)
    let opened = try await openedStore(in: folder)
    let record = StoreHandle.creationRecord(for: url)
    for text in ["my own notes", "created nan\n", "created 1e400\n", "created 5"] {
      try folder.write("library.sqlite.created", text)
      #expect(throws: StoreHandle.UnreadableRecord.self) { try opened.recordedCreation() }
      let reason = try #require(opened.reasonToKeep("the queue", modifiedAt: .distantPast))
      #expect(
        reason
          == "cannot tell when the store became new ('\(record.path)' is not a record store.init wrote), and so what it knows"
      )
    }
    // A store.init that would record a new store leaves a file that is no record alone.
    try folder.write("library.sqlite.created", "my own notes")
    try FileManager.default.removeItem(at: url)
    let (report, _) = try await launch(store, in: folder, plugins: [StoreInitStep.self])
    #expect(report.outcome == .failed)
    #expect(
      storeError(report)
        == "cannot record that the store '\(url.path)' is new ('\(record.path)' is not a record store.init wrote, so it was left alone; move it away), which keeps the app's older data from being judged against it; the store was left at version 0 until a launch can record it"
    )
    #expect(try String(contentsOf: record, encoding: .utf8) == "my own notes")
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
    #expect(try #require(try opened.recordedCreation()) >= before)
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
        " is a folder, not a regular file, so it was left alone; move it away), which keeps the app's older data from being judged against it; the store was left at version 0 until a launch can record it"
      ), "\(error)")
    #expect(try SQLiteConnection(url: url, mode: .readOnly).userVersion() == 0)

    try FileManager.default.removeItem(at: StoreHandle.creationRecord(for: url))
    let opened = try await openedStore(in: folder)
    #expect(opened.isNew)
    #expect(opened.version == StoreSchema.books.latestVersion)
    #expect(try opened.recordedCreation() != nil)
  }
}
