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
        "removed nothing: the store was created in this launch, so it does not know what the app wrote before, so an image no scan names may still be the app's"
      ])
  }
}
