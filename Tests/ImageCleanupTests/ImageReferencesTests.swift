import Foundation
import ImageCleanupPlugin
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

/// Which images the store's scans name, however the paths are spelled, and a store that
/// knows no scans yet.
@Suite("images.cleanup reads references as paths", .timeLimit(.minutes(10)))
struct ImageReferencesTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self, ImageCleanupStep.self]
  private let manifest = """
    { "version": 1, "steps": [
      { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
      { "id": "clean", "plugin": "images.cleanup", "dependsOn": ["store"], "params": { "directory": "images" } }
    ] }
    """

  private func old(_ folder: ScratchFolder, _ path: String) throws -> URL {
    let url = try folder.write(path, path)
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-10 * 86_400)], ofItemAtPath: url.path)
    return url
  }

  private func storeWithScans(in folder: ScratchFolder, _ scans: [(String, Bool)]) async throws {
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    try folder.recordStoreCreated(daysAgo: 30)
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    for (index, (path, reviewed)) in scans.enumerated() {
      try connection.run(
        "INSERT INTO scans (id, image_path, reviewed, created_at) VALUES (?, ?, ?, 0)",
        [.integer(Int64(index + 1)), .text(path), .integer(reviewed ? 1 : 0)])
    }
  }

  @Test func keepsAnImageAnUnreviewedScanNamesHoweverThePathIsSpelled() async throws {
    let folder = try ScratchFolder()
    let images = ["a.jpg", "b.jpg", "c.jpg", "sub/d.jpg", "e.jpg", "orphan.jpg"]
    let urls = try images.map { try old(folder, "images/" + $0) }
    try await storeWithScans(
      in: folder,
      [
        (folder.file("images/a.jpg").path, false),  // absolute
        ("./b.jpg", false),  // relative to the images folder, with ./
        ("images/c.jpg", false),  // relative to the data folder
        ("sub/../sub/./d.jpg", false),  // with .. and .
        (folder.url.path + "//images/./e.jpg", false),  // absolute, doubled slashes
      ])
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    for (name, url) in zip(images, urls) {
      #expect(FileManager.default.fileExists(atPath: url.path) == (name != "orphan.jpg"), "\(name)")
    }
  }

  @Test func removesAReviewedImageHoweverItsPathIsSpelled() async throws {
    let folder = try ScratchFolder()
    let a = try old(folder, "images/a.jpg")
    let b = try old(folder, "images/b.jpg")
    try await storeWithScans(in: folder, [(a.path, true), ("images/b.jpg", true)])
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(!FileManager.default.fileExists(atPath: a.path))
    #expect(!FileManager.default.fileExists(atPath: b.path))
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readOnly)
    #expect(try connection.integer("SELECT count(*) FROM scans WHERE image_path IS NULL") == 2)
  }

  @Test func keepsAnImageAReviewedAndAnUnreviewedScanShare() async throws {
    let folder = try ScratchFolder()
    let shared = try old(folder, "images/shared.jpg")
    try await storeWithScans(in: folder, [("shared.jpg", true), ("./images/shared.jpg", false)])
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(FileManager.default.fileExists(atPath: shared.path))
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readOnly)
    #expect(try connection.integer("SELECT count(*) FROM scans WHERE image_path IS NULL") == 0)
    #expect(
      report.step("clean")?.notes.first
        == "kept 1 images of reviewed scans that scans not yet reviewed also name")
  }

  @Test func removesNothingAgainstAStoreCreatedInThisLaunch() async throws {
    let folder = try ScratchFolder()
    let image = try old(folder, "images/scan.jpg")
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(FileManager.default.fileExists(atPath: image.path))
    #expect(
      report.step("clean")?.notes == [
        "removed nothing: the store was created or given its tables in this launch (or a launch beside it), so it does not know what the app wrote before, so an image no scan names may still be the app's"
      ])
  }

  /// The app's store is from a newer build, so `store.init` refuses it and its fallback opens
  /// a spare store, a month old and knowing no scans: no image is judged an orphan against it.
  @Test func removesNothingWhenTheStoreCameFromAFallback() async throws {
    let folder = try ScratchFolder()
    let named = try old(folder, "images/named.jpg")
    let orphan = try old(folder, "images/orphan.jpg")
    try await storeWithScans(in: folder, [("named.jpg", false)])
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "spare", "plugin": "store.init", "params": { "path": "spare.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    try StoreHandle.recordCreation(
      of: folder.file("spare.sqlite"), at: Date().addingTimeInterval(-30 * 86_400))
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try connection.run("PRAGMA user_version = 99")
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" },
          "fallback": { "params": { "path": "spare.sqlite" } } },
        { "id": "clean", "plugin": "images.cleanup", "dependsOn": ["store"], "params": { "directory": "images" } }
      ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(report.step("store")?.usedFallback == true)
    #expect(report.step("clean")?.state == .succeeded)
    #expect(FileManager.default.fileExists(atPath: named.path))
    #expect(FileManager.default.fileExists(atPath: orphan.path))
    #expect(
      report.step("clean")?.notes == [
        "removed nothing: the store 'spare.sqlite' was opened by a fallback in this launch (the step's own store failed) and may not be the store the app's data belongs to, so an image no scan names may still be the app's"
      ])
  }

  /// A symbolic link at `path` in the folder to `target`, itself dated ten days back (a
  /// link's own time, not its target's).
  private func oldLink(_ folder: ScratchFolder, _ path: String, to target: String) throws {
    let url = folder.file(path)
    try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target)
    let tenDaysAgo = time(nil) - 10 * 86_400
    var times = [
      timespec(tv_sec: tenDaysAgo, tv_nsec: 0), timespec(tv_sec: tenDaysAgo, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, url.path, &times, AT_SYMLINK_NOFOLLOW) == 0)
  }

  @Test func keepsWhatAnUnreviewedScanReachesThroughALinkInTheFolderAndTheLink() async throws {
    let folder = try ScratchFolder()
    let real = try old(folder, "images/real/x.jpg")
    let target = try old(folder, "images/y.jpg")
    let absolute = try old(folder, "images/z.jpg")
    let outside = try old(folder, "outside.jpg")
    let orphan = try old(folder, "images/orphan.jpg")
    try FileManager.default.createDirectory(
      at: folder.file("images/deep"), withIntermediateDirectories: true)
    try oldLink(folder, "images/sub", to: "real")
    try oldLink(folder, "images/link.jpg", to: "y.jpg")
    try oldLink(folder, "images/deep/up.jpg", to: "../real/x.jpg")
    try oldLink(folder, "images/abs.jpg", to: absolute.path)
    try oldLink(folder, "images/out.jpg", to: "../outside.jpg")
    try await storeWithScans(
      in: folder,
      [
        ("sub/x.jpg", false),  // through a linked folder
        ("link.jpg", false),  // a link to an image
        ("y.jpg", true),  // reviewed, but an unreviewed scan reaches it through link.jpg
        ("deep/up.jpg", false),  // a link with ..
        ("abs.jpg", false),  // a link with an absolute target inside the folder
        ("out.jpg", false),  // a link out of the folder: the link stays, nothing is followed
      ])
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    for url in [real, target, absolute, outside] {
      #expect(FileManager.default.fileExists(atPath: url.path), "\(url.lastPathComponent)")
    }
    for link in ["sub", "link.jpg", "deep/up.jpg", "abs.jpg", "out.jpg"] {
      #expect(
        (try? FileManager.default.destinationOfSymbolicLink(
          atPath: folder.file("images/" + link).path))
          != nil, "\(link)")
    }
    #expect(!FileManager.default.fileExists(atPath: orphan.path))
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readOnly)
    #expect(try connection.integer("SELECT count(*) FROM scans WHERE image_path IS NULL") == 0)
  }
}
