import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

@testable import ImageCleanupPlugin

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("images.cleanup", .timeLimit(.minutes(10)))
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

  @Test func aStoreWithoutScansFailsTheStepNamingItsSchemaAndRemovesNothing() async throws {
    let folder = try ScratchFolder()
    let music =
      #"{ "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "schema": "music" } },"#
    _ = try await launch(
      #"{ "version": 1, "steps": [ \#(music.dropLast()) ] }"#, in: folder, plugins: plugins)
    try folder.recordStoreCreated(daysAgo: 30)
    let orphan = try folder.write("images/orphan.jpg", "o")
    try age(orphan, days: 10)
    let report = try await launch(
      """
      { "version": 1, "steps": [ \(music)
        { "id": "clean", "plugin": "images.cleanup", "dependsOn": ["store"],
          "params": { "directory": "images", "maxAge": "1d" } } ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("clean")?.error
        == "the music store '\(folder.file("library.sqlite").path)' has no scans (no such table: scans); images.cleanup judges images against a store with a 'scans' table, such as the screensort schema's: depend on that store's step, or on none; nothing was removed"
    )
    #expect(exists(orphan))
  }

  @Test func removesReviewedScanImagesAndKeepsReferencedOnes() async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: plugins)
    try folder.recordStoreCreated(daysAgo: 30)
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

  #if os(Linux)
    /// Writes `text` at `path` in `folder` through the system's own call, the name's bytes as
    /// Swift holds them (Foundation may normalize a name it is given).
    private func writeAsBytes(_ path: String, in folder: ScratchFolder, _ text: String) throws {
      let descriptor = open(folder.file("").path + "/" + path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
      try #require(descriptor >= 0, "cannot create \(path): \(errno)")
      defer { close(descriptor) }
      try #require(write(descriptor, text, text.utf8.count) == text.utf8.count)
    }

    /// On a file system that keeps names as bytes (Linux's), `café` composed and decomposed
    /// are two files, and two folders: a reviewed scan names one of them, never the other,
    /// however equal Swift's `==` finds their names.
    @Test func aReviewedScanRemovesOnlyTheFileWithItsNamesBytes() async throws {
      let composed = "caf\u{E9}"
      let decomposed = "cafe\u{301}"
      let folder = try ScratchFolder()
      _ = try await launch(
        #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
        in: folder, plugins: plugins)
      try folder.recordStoreCreated(daysAgo: 30)
      for name in ["images", "images/\(composed)", "images/\(decomposed)"] {
        try #require(mkdir(folder.file("").path + "/" + name, 0o755) == 0)
      }
      for name in [composed, decomposed] {
        try writeAsBytes("images/\(name).jpg", in: folder, name)
        try writeAsBytes("images/\(name)/x.jpg", in: folder, name)
      }
      let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
      try connection.run(
        """
        INSERT INTO scans (id, image_path, reviewed, created_at) VALUES
          (1, '\(composed).jpg', 1, 0), (2, '\(folder.file("").path)/images/\(decomposed)/x.jpg', 1, 0)
        """)
      let report = try await launch(
        cleanup(#"{ "directory": "images" }"#, withStore: true), in: folder, plugins: plugins
      ).report
      #expect(report.outcome == .succeeded)
      func names(_ path: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: folder.file(path).path)
          .map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
      }
      #expect(
        try names("images")
          == [composed, decomposed, "\(decomposed).jpg"].map { Array($0.utf8) }
          .sorted { $0.lexicographicallyPrecedes($1) })
      #expect(try names("images/\(composed)") == [Array("x.jpg".utf8)])
      #expect(try names("images/\(decomposed)").isEmpty)
      #expect(
        report.step("clean")?.notes == [
          "removed 2 files (11 bytes): 2 reviewed scan images, 0 orphaned files"
        ])
    }
  #endif

  @Test func keepsFilesOlderThanTheStoreInEveryLaunchAndRemovesOrphansWrittenSince()
    async throws
  {
    let folder = try ScratchFolder()
    // The app's images from before its store was created (or recovered): the store never
    // knew them, so its silence about them says nothing.
    let before = try folder.write("images/before.jpg", "before")
    try age(before, days: 2)
    let manifest = cleanup(#"{ "directory": "images", "maxAge": 0 }"#, withStore: true)
    let first = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(
      first.step("clean")?.notes.first?.hasPrefix("removed nothing: the store was created") == true)
    let after = try folder.write("images/after.jpg", "after")

    let second = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(second.outcome == .succeeded)
    #expect(exists(before))
    #expect(!exists(after))
    let notes = second.step("clean")?.notes ?? []
    #expect(notes.first == "removed 1 files (5 bytes): 0 reviewed scan images, 1 orphaned files")
    #expect(
      notes.dropFirst().first?.hasPrefix(
        "kept 1 files no scan names that are older than the store (new at ") == true,
      "\(notes)")
    #expect(notes.count == 2)
  }

  @Test func removesNothingWhenTheStoresRecordCannotBeRead() async throws {
    let folder = try ScratchFolder()
    let manifest = cleanup(#"{ "directory": "images", "maxAge": 0 }"#, withStore: true)
    _ = try await launch(manifest, in: folder, plugins: plugins)
    let image = try folder.write("images/a.jpg", "a")
    let record = try folder.write("library.sqlite.created", "garbage")
    let report = try await launch(manifest, in: folder, plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(exists(image))
    #expect(
      report.step("clean")?.notes == [
        "removed nothing: cannot tell when the store became new ('\(record.path)' is not a record store.init wrote), and so which files it knows"
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

  @Test func namesAMissingOrEmptyDirectoryParameterWhenTheManifestLoads() {
    #expect(
      loadProblems(cleanup(#"{ "maxAge": "1h" }"#), plugins: plugins) == [
        "steps[0].params: 'images.cleanup' needs the parameter 'directory'."
      ])
    // An empty path would name the data folder itself.
    #expect(
      loadProblems(cleanup(#"{ "directory": "" }"#), plugins: plugins) == [
        "steps[0].params.directory: 'directory' cannot be empty."
      ])
  }
}

/// An app's own step that reads a file, and one that removes files in a folder, written as a
/// third party writes them.
private struct AppStateStep: StepPlugin {
  static let kind = "app.state"
  static let summary = "Reads the app's state."
  struct Parameters: StepParameters {
    @Parameter("The state file.", isPath: true) var file: String
    @Parameter("Where thumbnails go.", isPath: true) var thumbnails = "thumbnails"
  }
  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

private struct AppTrimStep: StepPlugin {
  static let kind = "app.trim"
  static let summary = "Removes old downloads."
  struct Parameters: StepParameters {
    @Parameter("The downloads folder.", isPath: true, removesFiles: true) var folder: String
  }
  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

/// An app's own step that rewrites its file, or moves it aside when it cannot read it,
/// keeping the previous one beside it.
private struct AppSaveStep: StepPlugin {
  static let kind = "app.save"
  static let summary = "Rewrites the app's drafts."
  struct Parameters: StepParameters {
    @Parameter("The drafts file.", isPath: true, rewritesFile: true, companions: [".old"])
    var file: String
  }
  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

/// An app's own step that reads its database, which keeps files beside it.
private struct AppIndexStep: StepPlugin {
  static let kind = "app.index"
  static let summary = "Reads the app's search index."
  struct Parameters: StepParameters {
    @Parameter("The index database.", isPath: true, companions: ["-wal", ".attachments"])
    var file: String
  }
  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

@Suite("A folder a step removes files in")
struct RemovedFolderTests {
  private let plugins: [any StepPlugin.Type] = [
    StoreInitStep.self, ImageCleanupStep.self, AppStateStep.self, AppTrimStep.self,
    AppSaveStep.self, AppIndexStep.self,
  ]

  private func registry() -> PluginRegistry {
    var registry = PluginRegistry()
    registry.register(plugins)
    return registry
  }

  private func problems(_ steps: String, thorough: Bool = true) -> [String] {
    loadProblems(
      #"{ "version": 1, "name": "app", "steps": [ \#(steps) ] }"#, plugins: plugins,
      checksShippedFiles: thorough)
  }

  @Test func aFolderThatHoldsOrIsAnotherStepsPathIsRefusedNamingIt() {
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "images/./state.json" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "images" } },
        { "id": "trim", "plugin": "app.trim", "params": { "folder": "cache/../thumbnails" } }
        """) == [
          "steps[1].params.directory: images.cleanup removes files in 'images', where the launch keeps 'images/./state.json' (the 'file' of step 'state'); give it a folder that holds only what it may remove.",
          "steps[2].params.folder: app.trim removes files in 'cache/../thumbnails', where the launch keeps 'thumbnails' (the 'thumbnails' of step 'state'); give it a folder that holds only what it may remove.",
        ])
  }

  @Test func aFallbacksPathsAndTheLaunchsOwnFilesCountToo() {
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "a.json" },
          "fallback": { "params": { "file": "downloads/b.json" } } },
        { "id": "trim", "plugin": "app.trim", "params": { "folder": "downloads" } },
        { "id": "records", "plugin": "app.trim", "params": { "folder": ".orchestrate-launches" } }
        """) == [
          "steps[1].params.folder: app.trim removes files in 'downloads', where the launch keeps 'downloads/b.json' (the 'file' of the fallback of step 'state'); give it a folder that holds only what it may remove.",
          "steps[2].params.folder: app.trim removes files in '.orchestrate-launches', where the launch keeps the launch records; give it a folder that holds only what it may remove.",
        ])
  }

  /// What an app's tests get from `ManifestLoader(checksShippedFiles: true)` for its own
  /// plugin's `rewritesFile` path: another step's file in another role is refused, steps in
  /// the same role share one, a fallback inheriting its step's path is no clash, and a launch
  /// (without the check) loads it.
  @Test func anAppsFileToRewriteIsRefusedAnotherStepsFileInItsTests() {
    let steps = """
      { "id": "state", "plugin": "app.state", "params": { "file": "drafts.json" } },
      { "id": "save", "plugin": "app.save", "params": { "file": "drafts.json" },
        "fallback": { "params": {} } },
      { "id": "again", "plugin": "app.save", "params": { "file": "drafts.json" } }
      """
    #expect(
      problems(steps) == [
        "steps[1].params.file: app.save rewrites 'drafts.json', or moves it aside when it cannot read it, but it is also 'drafts.json' (the 'file' of step 'state'); give it a file of its own.",
        "steps[2].params.file: app.save rewrites 'drafts.json', or moves it aside when it cannot read it, but it is also 'drafts.json' (the 'file' of step 'state'); give it a file of its own.",
      ])
    #expect(problems(steps, thorough: false).isEmpty)
  }

  /// The files an app's own plugin declares it keeps beside its path (`companions`) are the
  /// step's in `ManifestLoader(checksShippedFiles: true)` too: another step may not rewrite
  /// one, or a file in one, and a step that rewrites its file rewrites them too; steps in
  /// the same role share them.
  @Test func theFilesAnAppsPluginKeepsBesideItsPathAreTheSteps() {
    let steps = """
      { "id": "index", "plugin": "app.index", "params": { "file": "index.db" } },
      { "id": "save", "plugin": "app.save", "params": { "file": "index.db-wal" } },
      { "id": "notes", "plugin": "app.save", "params": { "file": "index.db.attachments/n.json" } },
      { "id": "drafts", "plugin": "app.save", "params": { "file": "drafts.json" } },
      { "id": "again", "plugin": "app.save", "params": { "file": "drafts.json" } },
      { "id": "state", "plugin": "app.state", "params": { "file": "drafts.json.old/state.json" } }
      """
    let drafts =
      "app.save rewrites 'drafts.json' and the files it keeps beside it, or moves them aside when it cannot read it, but 'drafts.json.old' is a folder holding 'drafts.json.old/state.json' (the 'file' of step 'state'); give it a file of its own."
    #expect(
      problems(steps) == [
        "steps[1].params.file: app.save rewrites 'index.db-wal', or moves it aside when it cannot read it, but it is also 'index.db-wal' (kept beside 'index.db', the 'file' of step 'index'); give it a file of its own.",
        "steps[2].params.file: app.save rewrites 'index.db.attachments/n.json', or moves it aside when it cannot read it, but it is in 'index.db.attachments' (kept beside 'index.db', the 'file' of step 'index'); give it a file of its own.",
        "steps[3].params.file: \(drafts)",
        "steps[4].params.file: \(drafts)",
      ])
    #expect(problems(steps, thorough: false).isEmpty)
  }

  @Test func foldersBesideEachOtherAndTwoStepsRemovingInOneFolderAreFine() {
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "images2/state.json", "thumbnails": "thumbs" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "images" } },
        { "id": "trim", "plugin": "app.trim", "params": { "folder": "images" } }
        """
      ).isEmpty)
  }

  @Test func aPathIsResolvedAgainstTheFolderItsPluginReadsItFrom() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(
      "removed-\(UUID().uuidString)")
    let manifestFolder = root.appendingPathComponent("m")
    let data = root.appendingPathComponent("data")
    try FileManager.default.createDirectory(at: manifestFolder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    func problems(_ steps: String) -> [String] {
      do {
        _ = try ManifestLoader(registry: registry(), checksShippedFiles: true).load(
          bytes: Array(#"{ "version": 1, "steps": [ \#(steps) ] }"#.utf8), file: "m.json",
          directory: manifestFolder, dataDirectory: data)
        return []
      } catch {
        return error.errors.map { "\($0.path): \($0.message)" }
      }
    }
    // The state file is in the data folder, not beside the manifest.
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "imgs/state.json" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "\(manifestFolder.path)/imgs" } }
        """
      ).isEmpty)
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "imgs/state.json" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "\(data.path)/imgs" } }
        """) == [
          "steps[1].params.directory: images.cleanup removes files in '\(data.path)/imgs', where the launch keeps 'imgs/state.json' (the 'file' of step 'state'); give it a folder that holds only what it may remove."
        ])
  }

  @Test func aFallbacksOwnFolderIsCheckedOnceAndTheRootHoldsEverything() {
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "a.json" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "/" },
          "fallback": { "params": { "maxAge": "1h" } } }
        """) == [
          "steps[1].params.directory: images.cleanup removes files in '/', where the launch keeps 'a.json' (the 'file' of step 'state'), 'thumbnails' (the 'thumbnails' of step 'state'), the launch's cache and the launch records; give it a folder that holds only what it may remove."
        ])
  }

  @Test func pastFiveFilesTheRestAreCounted() {
    let states = (1...7).map {
      #"{ "id": "s\#($0)", "plugin": "app.state", "params": { "file": "d/\#($0).json", "thumbnails": "t" } }"#
    }
    #expect(
      problems(
        states.joined(separator: ",\n")
          + #", { "id": "trim", "plugin": "app.trim", "params": { "folder": "d" } }"#) == [
          "steps[7].params.folder: app.trim removes files in 'd', where the launch keeps 'd/1.json' (the 'file' of step 's1'), 'd/2.json' (the 'file' of step 's2'), 'd/3.json' (the 'file' of step 's3'), 'd/4.json' (the 'file' of step 's4'), 'd/5.json' (the 'file' of step 's5') and 2 more; give it a folder that holds only what it may remove."
        ])
  }

  @Test func aLaunchLeavesTheCheckToValidationAndToThePluginItself() {
    // What a launch reads it reads only when needed: every kind's parameters, described, are
    // not; images.cleanup still refuses at run time what it must not clean.
    #expect(
      problems(
        """
        { "id": "state", "plugin": "app.state", "params": { "file": "images/state.json" } },
        { "id": "clean", "plugin": "images.cleanup", "params": { "directory": "images" } }
        """, thorough: false
      ).isEmpty)
  }
}

@Suite("images.cleanup stays in its folder", .timeLimit(.minutes(10)))
struct ImageCleanupSafetyTests {
  private let plugins: [any StepPlugin.Type] = [StoreInitStep.self, ImageCleanupStep.self]

  private func cleanup(_ params: String, store: String? = nil) -> String {
    let storeStep = store.map {
      #"{ "id": "store", "plugin": "store.init", "params": \#($0) },"#
    }
    return """
      { "version": 1, "steps": [ \(storeStep ?? "")
        { "id": "clean", "plugin": "images.cleanup", \(store == nil ? "" : #""dependsOn": ["store"],"#) "params": \(params) }
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

  /// Refused before anything is listed; dry runs with an age no file has, so that even code
  /// that would not refuse removes nothing.
  @Test(arguments: [
    ("/", "it is the root folder"), ("/etc", "it is the system folder '/etc'"),
    ("/usr/share", "it is inside the system folder '/usr'"),
    (NSHomeDirectory(), "it is the home folder"),
  ])
  func refusesTheRootTheHomeAndSystemFolders(directory: String, reason: String) async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      cleanup(#"{ "directory": "\#(directory)", "maxAge": "36500d", "dryRun": true }"#),
      in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("clean")?.error
        == "images.cleanup will not clean '\(directory)': \(reason), and it deletes files in the folder it is given; name the images folder itself (a folder that holds only images)"
    )
  }

  @Test func refusesTheManifestsFolderAndKeepsTheManifest() async throws {
    let folder = try ScratchFolder()
    let photo = try folder.write("old.jpg", "old")
    try age(photo, days: 3)
    let report = try await launch(
      cleanup(#"{ "directory": ".", "maxAge": "1h" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("clean")?.error
        == "images.cleanup will not clean '\(folder.url.path)': it is the manifest's folder '\(folder.url.path)', and it deletes files in the folder it is given; name the images folder itself (a folder that holds only images)"
    )
    #expect(exists(photo))
    #expect(exists(folder.file("launch.json")))
  }

  @Test func refusesAFolderThatHoldsTheManifestWhateverItIsCalled() async throws {
    let folder = try ScratchFolder()
    let photo = try folder.write("app/old.jpg", "old")
    try age(photo, days: 3)
    let manifest = try folder.write(
      "app/launch/launch.json",
      cleanup(#"{ "directory": "../../app/launch/..", "maxAge": "1h" }"#))
    var registry = PluginRegistry()
    registry.register(plugins)
    let plan = try ManifestLoader(registry: registry).load(path: manifest.path)
    let report = await LaunchEngine().run(plan)
    #expect(
      report.step("clean")?.error?.contains(
        "it holds the manifest's folder '\(folder.file("app/launch").path)'") == true)
    #expect(exists(photo))
  }

  @Test func refusesTheStoresFolderAndKeepsTheStore() async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      cleanup(
        #"{ "directory": "data", "maxAge": 0 }"#,
        store: #"{ "path": "data/library.sqlite", "createFolders": true }"#),
      in: folder, plugins: plugins
    ).report
    #expect(report.step("store")?.state == .succeeded)
    #expect(report.outcome == .failed)
    #expect(
      report.step("clean")?.error?.hasPrefix(
        "images.cleanup will not clean '\(folder.file("data").path)': it is the folder of the store '\(folder.file("data").path)'"
      ) == true)
    #expect(exists(folder.file("data/library.sqlite")))
  }

  @Test func refusesAFolderThatHoldsAStoreItDoesNotDependOn() async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      #"""
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "shared/library.sqlite", "createFolders": true } },
        { "id": "clean", "plugin": "images.cleanup", "after": ["store"], "params": { "directory": "shared", "maxAge": 0 } }
      ] }
      """#, in: folder, plugins: plugins
    ).report
    #expect(report.step("store")?.state == .succeeded)
    #expect(
      report.step("clean")?.error
        == "images.cleanup will not clean '\(folder.file("shared").path)': it holds the SQLite database 'library.sqlite' (a store), and it deletes files in the folder it is given; name the images folder itself (a folder that holds only images)"
    )
    #expect(exists(folder.file("shared/library.sqlite")))
  }

  @Test func keepsASQLiteDatabaseAndItsJournalsFoundInASubfolder() async throws {
    let folder = try ScratchFolder()
    let header = "SQLite format 3\u{0}" + String(repeating: "x", count: 100)
    let kept = [
      try folder.write("images/cache/thumbs.db", header),
      try folder.write("images/cache/thumbs.db-wal", "wal"),
      try folder.write("images/cache/thumbs.db-shm", "shm"),
    ]
    let removed = [
      try folder.write("images/old.jpg", "old"),
      try folder.write("images/cache/lonely-wal", "no database beside it"),
      try folder.write("images/cache/fake.db", "SQLite format 2"),
    ]
    for file in kept + removed { try age(file, days: 3) }
    let report = try await launch(
      cleanup(#"{ "directory": "images", "maxAge": "1h" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(kept.allSatisfy(exists))
    #expect(!removed.contains(where: exists))
    #expect(
      report.step("clean")?.notes == [
        "removed 3 files (39 bytes): 0 reviewed scan images, 3 orphaned files",
        "kept 3 SQLite database files found in subfolders: a store is never an image; move it out of the images folder",
      ])
  }

  @Test func neverFollowsALinkInTheMiddleOfItsDirectorysPath() async throws {
    let folder = try ScratchFolder()
    let elsewhere = try folder.write("elsewhere/images/old.jpg", "keep me")
    try age(elsewhere, days: 3)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("data").path, withDestinationPath: folder.file("elsewhere").path)
    let report = try await launch(
      cleanup(#"{ "directory": "data/images", "maxAge": "1h" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("clean")?.error
        == "'\(folder.file("data/images").path)' passes through the symbolic link '\(folder.file("data").path)', and images.cleanup never follows links (one swapped in could lead it to delete elsewhere); name the real folder"
    )
    #expect(exists(elsewhere))
  }

  @Test func skipsAndCountsNamesThatAreNotUTF8() async throws {
    let folder = try ScratchFolder()
    let old = try folder.write("images/old.jpg", "old")
    try age(old, days: 3)
    // 0xFF never appears in UTF-8; the file system takes any bytes but '/' and NUL.
    let name =
      folder.file("images").path.utf8.map { CChar(bitPattern: $0) } + [
        47, -1, -2, 46, 106, 112, 103, 0,
      ]
    let descriptor = open(name, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    try #require(descriptor >= 0)
    close(descriptor)
    var times = [timespec(tv_sec: 0, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: 0)]
    try #require(utimensat(AT_FDCWD, name, &times, 0) == 0)
    let report = try await launch(
      cleanup(#"{ "directory": "images", "maxAge": "1h" }"#), in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(!exists(old))
    var info = stat()
    #expect(lstat(name, &info) == 0)
    #expect(
      report.step("clean")?.notes == [
        "removed 1 files (3 bytes): 0 reviewed scan images, 1 orphaned files",
        "skipped 1 entries whose names are not UTF-8; rename them to clean them",
      ])
  }

  @Test func keepsReviewedImagesAReadOnlyStoreStillNames() async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: plugins)
    try folder.recordStoreCreated(daysAgo: 30)
    let reviewed = try folder.write("images/reviewed.jpg", "r")
    let orphan = try folder.write("images/orphan.jpg", "o")
    try age(orphan, days: 3)
    let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
    try connection.run(
      "INSERT INTO scans (id, image_path, reviewed, created_at) VALUES (1, 'reviewed.jpg', 1, 0)")
    let report = try await launch(
      cleanup(
        #"{ "directory": "images", "maxAge": "1h" }"#,
        store: #"{ "path": "library.sqlite", "readOnly": true }"#),
      in: folder, plugins: plugins
    ).report
    #expect(report.outcome == .succeeded)
    #expect(exists(reviewed))
    #expect(!exists(orphan))
    #expect(
      try connection.integer("SELECT count(*) FROM scans WHERE image_path = 'reviewed.jpg'") == 1)
    #expect(
      report.step("clean")?.notes == [
        "removed 1 files (1 byte): 0 reviewed scan images, 1 orphaned files",
        "kept 1 reviewed scan images: the store is read-only, so their scans would still name them",
      ])
  }

  /// A cleaner over `folder/images` that removes files older than an hour.
  private func cleaner(_ folder: ScratchFolder) throws -> (ImageCleaner, DirectoryHandle) {
    let handle = try DirectoryHandle.openFolder(atPath: folder.file("images").path).0
    let cleaner = ImageCleaner(
      cutoff: Date().timeIntervalSince1970 - 3600, dryRun: false, reviewed: [:], referenced: [],
      keepsReviewed: false, log: { _ in })
    return (cleaner, handle)
  }

  @Test func keepsAFileSavedAgainBetweenTheListingAndItsRemoval() throws {
    let folder = try ScratchFolder()
    let photo = try folder.write("images/photo.jpg", "old")
    try age(photo, days: 3)
    var (cleaner, handle) = try cleaner(folder)
    cleaner.willRemove = { _ in try? Data("saved again".utf8).write(to: photo) }
    try cleaner.clean(handle)
    #expect(try String(contentsOf: photo, encoding: .utf8) == "saved again")
    #expect(cleaner.removedOrphans == 0)
    #expect(cleaner.skippedChanged == 1)
  }

  @Test func keepsAFileReplacedBetweenTheListingAndItsRemovalEvenIfOld() throws {
    let folder = try ScratchFolder()
    let photo = try folder.write("images/photo.jpg", "old")
    try age(photo, days: 3)
    let replacement = try folder.write("replacement.jpg", "another file, just as old")
    try age(replacement, days: 3)
    var (cleaner, handle) = try cleaner(folder)
    cleaner.willRemove = { _ in rename(replacement.path, photo.path) }
    try cleaner.clean(handle)
    #expect(
      try String(contentsOf: photo, encoding: .utf8) == "another file, just as old")
    #expect(cleaner.skippedChanged == 1)
  }

  @Test func skipsAndCountsAFileThatVanishesWhileCleaning() throws {
    let folder = try ScratchFolder()
    let gone = try folder.write("images/a.jpg", "a")
    let other = try folder.write("images/b.jpg", "b")
    try age(gone, days: 3)
    try age(other, days: 3)
    var (cleaner, handle) = try cleaner(folder)
    cleaner.willRemove = { path in
      if path == "a.jpg" { unlink(gone.path) }
    }
    try cleaner.clean(handle)
    #expect(!exists(other))
    #expect(cleaner.removedOrphans == 1)
    #expect(cleaner.skippedChanged == 1)
  }

  @Test func aSubfolderSwappedForALinkWhileCleaningNeverLeadsOutside() throws {
    let folder = try ScratchFolder()
    var outside: [URL] = []
    for index in 0..<50 {
      let inside = try folder.write("images/album/\(index).jpg", "in")
      try age(inside, days: 3)
      let precious = try folder.write("precious/album/\(index).jpg", "keep")
      try age(precious, days: 3)
      outside.append(precious)
    }
    let album = folder.file("images/album")
    var (cleaner, handle) = try cleaner(folder)
    // Once the cleaner is inside the album, the album is moved away and a link to the
    // precious one takes its name: every later removal is still in the open album.
    cleaner.willRemove = { path in
      guard path == "album/0.jpg" else { return }
      rename(album.path, folder.file("images/moved").path)
      symlink(folder.file("precious/album").path, album.path)
    }
    try cleaner.clean(handle)
    for file in outside {
      #expect(try String(contentsOf: file, encoding: .utf8) == "keep")
    }
    #expect(cleaner.removedOrphans == 50)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.file("images/moved").path) == [])
  }
}

extension ScratchFolder {
  /// Records the store `library.sqlite` in the folder as created `days` ago: a store the app
  /// has had since, which knows what the app wrote after that.
  func recordStoreCreated(daysAgo days: Double) throws {
    try StoreHandle.recordCreation(
      of: file("library.sqlite"), at: Date().addingTimeInterval(-days * 86_400))
  }
}
