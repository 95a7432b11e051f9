import Foundation
import SQLiteStore
import Synchronization
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What `queue.validate` and `images.cleanup` promise about the user's files, through the
/// real binary the way a user runs it (docs/reliability.md names these tests).
@Suite("User data safety", .timeLimit(.minutes(10)))
struct UserDataSafetyTests {
  /// A store with works 1 and 2^53 + 1, created by the binary itself.
  private func store(in folder: TemporaryFolder) async throws {
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest, "--quiet"])
    try #require(result.status == 0, "\(result.stderr)")
    let connection = try SQLiteConnection(
      url: folder.url.appendingPathComponent("library.sqlite"), mode: .readWrite)
    try connection.run(
      "INSERT INTO works (id, title) VALUES (1, 'Kindred'), (9007199254740993, 'Jazz')")
  }

  private func manifest(_ folder: TemporaryFolder, step: String) throws -> String {
    try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        \(step)
      ] }
      """)
  }

  private func queueManifest(_ folder: TemporaryFolder) throws -> String {
    try manifest(
      folder,
      step:
        #"{ "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } }"#
    )
  }

  private func age(_ path: String, days: Double) throws {
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-days * 86_400)], ofItemAtPath: path)
  }

  @Test func queueValidateRewritesALinkedPrivateQueueKeepingEveryByteItKeeps() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("shared"), withIntermediateDirectories: true)
    let real = try folder.write(
      "shared/queue.json",
      """
      [
        {"workId": 1, "score": 1e-7, "big": 12345678901234567890},
        {"workId": 9007199254740992},
        {"workId": 9007199254740993, "ratio": 0.1000000000000000055511151231257827}
      ]

      """)
    try #require(chmod(real, 0o600) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("queue.json"), withDestinationPath: "shared/queue.json")

    let result = try await Orchestrate.run(["run", try queueManifest(folder), "--quiet"])

    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      try String(contentsOfFile: real, encoding: .utf8) == """
        [
          {"workId": 1, "score": 1e-7, "big": 12345678901234567890},
          {"workId": 9007199254740993, "ratio": 0.1000000000000000055511151231257827}
        ]

        """)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.path("queue.json"))
        == "shared/queue.json")
    #expect(
      try FileManager.default.attributesOfItem(atPath: real)[.posixPermissions] as? Int == 0o600)
    // Nothing but the queue and its write lock (see SharedFile), which a writer may hold.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path("shared")).sorted() == [
        ".queue.json.lock", "queue.json",
      ])
  }

  @Test func queueValidateFailsOnARepeatedKeyAndLeavesTheFileAlone() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    let text = "[\n  {\"workId\": 5, \"workId\": 1}\n]\n"
    let queue = try folder.write("queue.json", text)

    let result = try await Orchestrate.run(["run", try queueManifest(folder), "--quiet"])

    #expect(result.status == 1)
    #expect(
      result.stderr
        == "Error: the launch failed: 'queue' failed: the queue '\(queue)' has the key 'workId' twice in one entry at line 2, column 17; which one counts is ambiguous, so the queue was left as it was; remove the repeated key and run again.\n"
    )
    #expect(try String(contentsOfFile: queue, encoding: .utf8) == text)
  }

  @Test func theNextRewriteRemovesTheTemporaryFileOfAWriterKilledMidWrite() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    try folder.write("queue.json", #"[{"workId": 1}, {"workId": 7}]"#)
    // A writer in another process holds its temporary file in the first slot, as a write in
    // flight does; the second slot has what a write killed earlier left.
    let inFlight = try folder.write(".queue.json.writing-0", "[{\"workId\": 1}, {\"wo")
    let leftover = try folder.write(".queue.json.writing-1", "[{\"workId\": 7}")
    var runs: [CommandResult] = []
    // Then the writer dies by kill -9 mid-write: the kernel lets go of its lock.
    try await Orchestrate.whileHelperHolds(["hold-file", inFlight, "3600"]) {
      runs.append(try await Orchestrate.run(["run", try queueManifest(folder), "--quiet"]))
    }
    #expect(runs.first?.status == 0, "\(runs.first?.stderr ?? "")")
    #expect(!FileManager.default.fileExists(atPath: leftover))
    #expect(try String(contentsOfFile: inFlight, encoding: .utf8) == "[{\"workId\": 1}, {\"wo")
    #expect(
      try String(contentsOfFile: folder.path("queue.json"), encoding: .utf8) == #"[{"workId": 1}]"#)

    // The next rewrite removes what the killed writer left.
    try folder.write("queue.json", #"[{"workId": 1}, {"workId": 8}]"#)
    let next = try await Orchestrate.run(["run", try queueManifest(folder), "--quiet"])
    #expect(next.status == 0, "\(next.stderr)")
    #expect(!FileManager.default.fileExists(atPath: inFlight))
    #expect(
      try String(contentsOfFile: folder.path("queue.json"), encoding: .utf8) == #"[{"workId": 1}]"#)
  }

  @Test func imagesCleanupRefusesTheManifestsFolderAndDeletesNothing() async throws {
    let folder = try TemporaryFolder()
    let data = try TemporaryFolder()
    let photo = try folder.write("old.jpg", "old")
    try age(photo, days: 3)
    // No step's path and no file of the launch's lies in the folder, so only the plugin
    // itself can tell that it holds the manifest.
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "images", "plugin": "images.cleanup", "params": { "directory": "\(folder.url.path)", "maxAge": "1h" } }
      ] }
      """)
    let before = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()

    let result = try await Orchestrate.run([
      "run", manifest, "--data-dir", data.url.path, "--quiet",
    ])

    #expect(result.status == 1)
    #expect(
      result.stderr
        == "Error: the launch failed: 'images' failed: images.cleanup will not clean '\(folder.url.path)': it is the manifest's folder '\(folder.url.path)', and it deletes files in the folder it is given; name the images folder itself (a folder that holds only images).\n"
    )
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == before)
  }

  @Test func imagesCleanupNeverDeletesAStoreItDoesNotDependOn() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("app"), withIntermediateDirectories: true)
    let storeManifest = try folder.write(
      "app/store.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "\(folder.path("shared/library.sqlite"))", "createFolders": true } }
      ] }
      """)
    let created = try await Orchestrate.run(["run", storeManifest, "--quiet"])
    try #require(created.status == 0, "\(created.stderr)")
    // Another manifest's store: this one names no path in the folder.
    let manifest = try folder.write(
      "app/app.json",
      """
      { "version": 1, "steps": [
        { "id": "images", "plugin": "images.cleanup", "params": { "directory": "\(folder.path("shared"))", "maxAge": "0s" } }
      ] }
      """)

    let result = try await Orchestrate.run(["run", manifest, "--quiet"])

    #expect(result.status == 1)
    #expect(
      result.stderr
        == "Error: the launch failed: 'images' failed: images.cleanup will not clean '\(folder.path("shared"))': it holds the SQLite database 'library.sqlite' (a store), and it deletes files in the folder it is given; name the images folder itself (a folder that holds only images).\n"
    )
    #expect(FileManager.default.fileExists(atPath: folder.path("shared/library.sqlite")))
  }

  @Test func imagesCleanupGivenAFolderWhereAnotherStepKeepsAFileIsRefusedBeforeTheLaunch()
    async throws
  {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("images"), withIntermediateDirectories: true)
    let state = try folder.write("images/state.json", #"{ "tab": "library" }"#)
    try age(state, days: 3)
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "images", "plugin": "images.cleanup", "params": { "directory": "images", "maxAge": "1h" } },
        { "id": "restore", "plugin": "state.restore", "after": ["images"], "params": { "file": "images/state.json" } }
      ] }
      """)

    for command in ["validate", "run"] {
      let result = try await Orchestrate.run([command, manifest])
      #expect(result.status == 65)
      let output = command == "run" ? result.stderr : result.stdout
      #expect(
        output.contains(
          "\(manifest):2:74: error: step 'images' (steps[0].params.directory): images.cleanup removes files in 'images', where the launch keeps 'images/state.json' (the 'file' of step 'restore'); give it a folder that holds only what it may remove.\n"
        ), "\(output)")
    }
    #expect(try String(contentsOfFile: state, encoding: .utf8) == #"{ "tab": "library" }"#)
  }

  /// A step that rewrites a file, or moves it aside when it cannot read it as its own, given
  /// the manifest, another step's file, or a file in another step's folder, is refused before
  /// anything runs: `queue.validate` moved the manifest itself aside as "unreadable", and
  /// `state.restore` a shipped migration. Steps given one file in the same role share it.
  @Test func aStepThatRewritesAFileIsRefusedAnotherStepsFileBeforeTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let metadata = try folder.write("meta.json", #"{ "isUnderMaintenance": false }"#)
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("migrations/app"), withIntermediateDirectories: true)
    let migration = try folder.write("migrations/app/001_create.sql", "CREATE TABLE t (a);\n")
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "app.sqlite", "migrations": "migrations/app" } },
        { "id": "gate", "plugin": "gate.maintenance", "params": { "metadata": "meta.json" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "app.json" } },
        { "id": "pending", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "meta.json" } },
        { "id": "again", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "meta.json" } },
        { "id": "restore", "plugin": "state.restore", "params": { "file": "migrations/app/001_create.sql" } }
      ] }
      """)
    let original = try String(contentsOfFile: manifest, encoding: .utf8)

    for command in ["validate", "run"] {
      let result = try await Orchestrate.run([command, manifest])
      #expect(result.status == 65)
      let output = command == "run" ? result.stderr : result.stdout
      for line in [
        "\(manifest):4:92: error: step 'queue' (steps[2].params.path): queue.validate rewrites 'app.json', or moves it aside when it cannot read it, but it is the manifest itself; give it a file of its own.",
        // Named once for the two steps sharing it as a queue, which are not refused each other.
        "\(manifest):5:94: error: step 'pending' (steps[3].params.path): queue.validate rewrites 'meta.json', or moves it aside when it cannot read it, but it is also 'meta.json' (the 'metadata' of step 'gate'); give it a file of its own.",
        "\(manifest):6:92: error: step 'again' (steps[4].params.path): queue.validate rewrites 'meta.json', or moves it aside when it cannot read it, but it is also 'meta.json' (the 'metadata' of step 'gate'); give it a file of its own.",
        "\(manifest):7:69: error: step 'restore' (steps[5].params.file): state.restore rewrites 'migrations/app/001_create.sql', or moves it aside when it cannot read it, but it is in 'migrations/app' (the 'migrations' of step 'store'); give it a file of its own.",
      ] {
        #expect(output.contains(line + "\n"), "\(command): \(output)")
      }
      #expect(output.contains("4 errors"), "\(command): \(output)")
    }
    #expect(try String(contentsOfFile: manifest, encoding: .utf8) == original)
    #expect(
      try String(contentsOfFile: metadata, encoding: .utf8) == #"{ "isUnderMaintenance": false }"#)
    #expect(try String(contentsOfFile: migration, encoding: .utf8) == "CREATE TABLE t (a);\n")
    #expect(!FileManager.default.fileExists(atPath: folder.path("app.sqlite")))
  }

  /// A store's WAL, shared memory, rollback journal and creation record are the store's:
  /// a step that rewrites a file, or moves it aside when it cannot read it, given one of them
  /// is refused before anything runs, and so is a store whose own are another step's path.
  /// `queue.validate` moved the WAL of a store that had not opened yet aside as unreadable,
  /// and the store opened without the transactions committed in it.
  @Test func aStepThatRewritesAFileIsRefusedTheFilesAStoreKeepsBesideIt() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    // What an app stopped with its store open leaves: rows committed only in the WAL.
    let library = folder.url.appendingPathComponent("library.sqlite")
    do {
      let app = try SQLiteConnection(url: library, mode: .readWrite)
      try app.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA wal_autocheckpoint = 0;")
      try app.run("INSERT INTO works (id, title) VALUES (3, 'Beloved')")
      // Copied while the connection is open: closing it would checkpoint the WAL away.
      for suffix in ["", "-wal", "-shm", ".created"] {
        try FileManager.default.copyItem(
          atPath: library.path + suffix, toPath: folder.path("app.sqlite") + suffix)
      }
    }
    let wal = try Data(contentsOf: URL(fileURLWithPath: folder.path("app.sqlite-wal")))
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "other", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["other"], "params": { "path": "app.sqlite-wal" } },
        { "id": "restore", "plugin": "state.restore", "params": { "file": "app.sqlite-shm" } },
        { "id": "store", "plugin": "store.init", "after": ["queue", "restore"], "params": { "path": "app.sqlite" } },
        { "id": "copy", "plugin": "store.init", "after": ["store"], "params": { "path": "app.sqlite.created" } }
      ] }
      """)

    for command in ["validate", "run"] {
      let result = try await Orchestrate.run([command, manifest])
      #expect(result.status == 65, "\(command): \(result.stdout)\(result.stderr)")
      let output = command == "run" ? result.stderr : result.stdout
      for line in [
        "\(manifest):3:92: error: step 'queue' (steps[1].params.path): queue.validate rewrites 'app.sqlite-wal', or moves it aside when it cannot read it, but it is also 'app.sqlite-wal' (kept beside 'app.sqlite', the 'path' of step 'store'); give it a file of its own.",
        "\(manifest):4:69: error: step 'restore' (steps[2].params.file): state.restore rewrites 'app.sqlite-shm', or moves it aside when it cannot read it, but it is also 'app.sqlite-shm' (kept beside 'app.sqlite', the 'path' of step 'store'); give it a file of its own.",
        // The store rewrites what it keeps beside its file, and the second store's is one.
        "\(manifest):5:95: error: step 'store' (steps[3].params.path): store.init rewrites 'app.sqlite' and the files it keeps beside it, or moves them aside when it cannot read it, but 'app.sqlite-wal' is also 'app.sqlite-wal' (the 'path' of step 'queue'), and 'app.sqlite-shm' is also 'app.sqlite-shm' (the 'file' of step 'restore'), and 'app.sqlite.created' is also 'app.sqlite.created' (the 'path' of step 'copy'); give it a file of its own.",
        "\(manifest):6:83: error: step 'copy' (steps[4].params.path): store.init rewrites 'app.sqlite.created', or moves it aside when it cannot read it, but it is also 'app.sqlite.created' (kept beside 'app.sqlite', the 'path' of step 'store'); give it a file of its own.",
      ] {
        #expect(output.contains(line + "\n"), "\(command): \(output)")
      }
      #expect(output.contains("4 errors"), "\(command): \(output)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("app.sqlite-wal"))) == wal)
    let store = try SQLiteConnection(
      url: folder.url.appendingPathComponent("app.sqlite"), mode: .readWrite)
    #expect(try store.integer("SELECT count(*) FROM works WHERE title = 'Beloved'") == 1)
  }

  /// The lock beside a file a step rewrites, which the app and the launch take to write it,
  /// is the step's: `queue.validate` given the lock of the saved state moved it aside as an
  /// unreadable queue, and the app's next save and the launch then locked different files.
  @Test func aStepThatRewritesAFileIsRefusedTheLockOfAnotherStepsFile() async throws {
    let folder = try TemporaryFolder()
    let state = try folder.write("state.json", #"{ "tab": "library" }"#)
    // The lock the app's saves take: it holds nothing.
    let lock = try folder.write(".state.json.lock", "")
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "app.sqlite" } },
        { "id": "restore", "plugin": "state.restore", "params": { "file": "state.json" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": ".state.json.lock" } },
        { "id": "again", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } },
        { "id": "more", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } }
      ] }
      """)

    for command in ["validate", "run"] {
      let result = try await Orchestrate.run([command, manifest])
      #expect(result.status == 65, "\(command): \(result.stdout)\(result.stderr)")
      let output = command == "run" ? result.stderr : result.stdout
      #expect(
        output.contains(
          "\(manifest):4:92: error: step 'queue' (steps[2].params.path): queue.validate rewrites '.state.json.lock', or moves it aside when it cannot read it, but it is also '.state.json.lock' (the lock of 'state.json', the 'file' of step 'restore'); give it a file of its own.\n"
        ), "\(command): \(output)")
      // Two steps of one queue share its lock, as they share the queue.
      #expect(output.components(separatedBy: ": error: ").count == 2, "\(command): \(output)")
    }
    #expect(FileManager.default.fileExists(atPath: lock))
    #expect(try String(contentsOfFile: state, encoding: .utf8) == #"{ "tab": "library" }"#)
    #expect(!FileManager.default.fileExists(atPath: folder.path("app.sqlite")))
  }

  /// The root as a file to rewrite holds every other path; it is named as such, and the walk
  /// up a path's folders ends at the root.
  @Test func theRootAsAFileToRewriteIsRefusedNamingWhatItHolds() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "app.sqlite" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "/" } }
      ] }
      """)
    let result = try await Orchestrate.run(["validate", manifest])
    #expect(result.status == 65)
    #expect(
      result.stdout.contains(
        "queue.validate rewrites '/', or moves it aside when it cannot read it, but it is a folder holding 'app.sqlite' (the 'path' of step 'store'); give it a file of its own."
      ), "\(result.stdout)")
  }

  @Test func imagesCleanupNeverFollowsALinkInItsDirectorysPath() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("elsewhere/images"), withIntermediateDirectories: true)
    let precious = try folder.write("elsewhere/images/precious.jpg", "keep")
    try age(precious, days: 3)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("data"), withDestinationPath: "elsewhere")
    let manifest = try manifest(
      folder,
      step:
        #"{ "id": "images", "plugin": "images.cleanup", "dependsOn": ["store"], "params": { "directory": "data/images", "maxAge": "1h" } }"#
    )

    let result = try await Orchestrate.run(["run", manifest, "--quiet"])

    #expect(result.status == 1)
    #expect(result.stderr.contains("passes through the symbolic link '\(folder.path("data"))'"))
    #expect(try String(contentsOfFile: precious, encoding: .utf8) == "keep")
  }

  /// Flips `album` between the real folder and a link to `target` until told to stop.
  private final class Swapper: Sendable {
    let stop = Atomic<Bool>(false)
    let finished = Atomic<Bool>(false)
    let swaps = Atomic<Int>(0)

    func start(album: String, moved: String, target: String) {
      Thread { [self] in
        // Each round ends with the real folder back in place.
        while !stop.load(ordering: .relaxed) {
          rename(album, moved)
          symlink(target, album)
          usleep(1000)
          unlink(album)
          rename(moved, album)
          swaps.add(1, ordering: .relaxed)
          usleep(1000)
        }
        finished.store(true, ordering: .relaxed)
      }.start()
    }
  }

  @Test func imagesCleanupNeverDeletesOutsideWhileASubfolderIsSwappedForALink() async throws {
    let folder = try TemporaryFolder()
    try await store(in: folder)
    let album = folder.url.appendingPathComponent("images/album")
    let precious = folder.url.appendingPathComponent("precious")
    try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: precious, withIntermediateDirectories: true)
    // The same names inside and outside: a removal that went through the link would hit one.
    for index in 0..<1000 {
      for (folder, text) in [(album, "in"), (precious, "keep")] {
        let file = folder.appendingPathComponent("\(index).jpg")
        try Data(text.utf8).write(to: file)
        try age(file.path, days: 3)
      }
    }
    let manifest = try manifest(
      folder,
      step:
        #"{ "id": "images", "plugin": "images.cleanup", "dependsOn": ["store"], "params": { "directory": "images", "maxAge": "1h" } }"#
    )
    let swapper = Swapper()
    swapper.start(
      album: album.path, moved: folder.path("images/moved"), target: precious.path)
    // Stops it also when the run throws, so it never outlives the test.
    defer { swapper.stop.store(true, ordering: .relaxed) }

    let result = try await Orchestrate.run(["run", manifest, "--quiet"])
    swapper.stop.store(true, ordering: .relaxed)
    while !swapper.finished.load(ordering: .relaxed) {
      try await Task.sleep(for: .milliseconds(1))
    }

    #expect(result.status == 0, "\(result.stderr)")
    #expect(swapper.swaps.load(ordering: .relaxed) > 0)
    let kept = try FileManager.default.contentsOfDirectory(atPath: precious.path)
    #expect(kept.count == 1000)
    for name in kept {
      #expect(
        try String(contentsOfFile: precious.appendingPathComponent(name).path, encoding: .utf8)
          == "keep")
    }
  }
}
