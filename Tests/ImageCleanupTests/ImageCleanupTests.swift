import Foundation
import ImageCleanupPlugin
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

@Suite("images.cleanup", .timeLimit(.minutes(1)))
struct ImageCleanupTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self, ImageCleanupStep.self]

  private func cleanup(_ params: String, withStore: Bool = false) -> String {
    let store =
      #"{ "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },"#
    return """
      { "version": 1, "steps": [ \(withStore ? store : "")
        { "id": "clean", "plugin": "images.cleanup", \(withStore ? #""dependsOn": ["store"],"# : "") "params": \(params) }
      ] }
      """
  }

  private func age(_ url: URL, days: Double) throws {
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-days * 86_400)], ofItemAtPath: url.path)
  }

  private func exists(_ url: URL) -> Bool {
    (try? FileManager.default.attributesOfItem(atPath: url.path)) != nil
  }

  @Test func removesOrphansOlderThanMaxAgeAndKeepsYoungerOnes() async throws {
    let folder = try ScratchFolder()
    let old = try folder.write("images/old.jpg", "old")
    let nested = try folder.write("images/2025/older.jpg", "older")
    let young = try folder.write("images/new.jpg", "new")
    try age(old, days: 2)
    try age(nested, days: 3)
    let report = try await launch(
      cleanup(#"{ "directory": "images", "maxAge": "24h" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(!exists(old))
    #expect(!exists(nested))
    #expect(exists(young))
    #expect(
      report.step("clean")?.notes == [
        "removed 2 files (8 bytes): 0 reviewed scan images, 2 orphaned files"
      ])
  }

  @Test func neverFollowsASymlinkOutOfItsDirectory() async throws {
    let folder = try ScratchFolder()
    let outsideFile = try folder.write("precious/photo.jpg", "do not delete")
    try folder.write("precious/album/a.jpg", "nor this")
    try FileManager.default.createDirectory(
      at: folder.file("images"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      at: folder.file("images/link.jpg"), withDestinationURL: outsideFile)
    try FileManager.default.createSymbolicLink(
      at: folder.file("images/album"), withDestinationURL: folder.file("precious/album"))
    let report = try await launch(
      cleanup(#"{ "directory": "images", "maxAge": 0 }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    // The links themselves may go; what they point to stays, byte for byte.
    #expect(!exists(folder.file("images/link.jpg")))
    #expect(!exists(folder.file("images/album")))
    #expect(try String(contentsOf: outsideFile, encoding: .utf8) == "do not delete")
    #expect(
      try String(contentsOf: folder.file("precious/album/a.jpg"), encoding: .utf8) == "nor this")
  }

  @Test func refusesADirectoryThatIsItselfALink() async throws {
    let folder = try ScratchFolder()
    try folder.write("real/a.jpg", "a")
    try FileManager.default.createSymbolicLink(
      at: folder.file("images"), withDestinationURL: folder.file("real"))
    let report = try await launch(
      cleanup(#"{ "directory": "images", "maxAge": 0 }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .failed)
    #expect(exists(folder.file("real/a.jpg")))
  }

  @Test func removesReviewedScanImagesAndKeepsReferencedOnes() async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: plugins)
    let reviewed = try folder.write("images/reviewed.jpg", "r")
    let pending = try folder.write("images/pending.jpg", "p")
    let orphan = try folder.write("images/orphan.jpg", "o")
    try age(pending, days: 10)
    try age(orphan, days: 10)
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try connection.run(
      """
      INSERT INTO scans (id, image_path, reviewed, created_at) VALUES
        (1, 'reviewed.jpg', 1, 0), (2, 'pending.jpg', 0, 0), (3, '../library.sqlite', 1, 0)
      """)
    let report = try await launch(
      cleanup(#"{ "directory": "images" }"#, withStore: true), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(!exists(reviewed))
    #expect(exists(pending))
    #expect(!exists(orphan))
    #expect(exists(folder.file("library.sqlite")))
    #expect(
      try connection.integer("SELECT count(*) FROM scans WHERE id = 1 AND image_path IS NULL") == 1)
    #expect(
      report.step("clean")?.notes == [
        "removed 2 files (2 bytes): 1 reviewed scan images, 1 orphaned files"
      ])
  }

  @Test func removesNothingInADryRun() async throws {
    let folder = try ScratchFolder()
    let old = try folder.write("images/old.jpg", "old")
    try age(old, days: 5)
    let report = try await launch(
      cleanup(#"{ "directory": "images", "dryRun": true }"#), in: folder, plugins: plugins
    ).report
    #expect(exists(old))
    #expect(
      report.step("clean")?.notes == [
        "dry run: would remove 1 files (3 bytes): 0 reviewed scan images, 1 orphaned files"
      ])
  }

  @Test func treatsAMissingDirectoryAsNothingToDo() async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      cleanup(#"{ "directory": "nowhere" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(report.step("clean")?.notes.first?.hasPrefix("no directory at ") == true)
  }

  @Test func namesAMissingDirectoryParameterWhenTheManifestLoads() {
    #expect(
      loadProblems(cleanup(#"{ "maxAge": "1h" }"#), plugins: plugins) == [
        "steps[0].params: 'images.cleanup' needs the parameter 'directory'."
      ])
  }
}
