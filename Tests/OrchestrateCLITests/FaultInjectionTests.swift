import Foundation
import LaunchJSON
import LaunchOrchestrator
import SQLiteStore
import Testing

/// Misbehaving plugins, signals at the worst moments and unusable folders, through the real
/// binary: each ends with a clear error or a degraded launch, and nothing is lost.
@Suite("Fault injection", .timeLimit(.minutes(10)))
struct FaultInjectionTests {
  /// Runs sqlite statements on a file through the system's sqlite3 library, via Python.
  private func sqlite(_ database: String, _ script: String) async throws -> String {
    let (status, text) = try await runTool([
      "python3", "-c",
      "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); r = c.executescript(sys.argv[2]) if sys.argv[3] == 'x' else print(c.execute(sys.argv[2]).fetchall()); c.commit()",
      database, script,
      script.uppercased().hasPrefix("SELECT") || script.uppercased().hasPrefix("PRAGMA")
        ? "q" : "x",
    ])
    try #require(status == 0, "python3 failed on \(script)")
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test func fourStepsBlockingThreadsNeitherStallTheLaunchNorTheirTimeouts() async throws {
    let folder = try TemporaryFolder()
    let blockers = (1...4).map {
      #"{ "id": "block\#($0)", "plugin": "simulate", "timeout": "300ms", "params": { "duration": "3s", "blocking": true } }"#
    }
    let path = try folder.write(
      "blocking.json",
      #"{ "version": 1, "defaults": { "onFailure": "continue" }, "steps": [\#(blockers.joined(separator: ",")), { "id": "quick", "plugin": "simulate", "params": { "duration": "20ms" } }] }"#
    )
    let result = try await Orchestrate.run(["run", path, "--report", folder.path("r.json")])
    #expect(result.status == 0)
    let report = try readReport(folder.path("r.json"))
    #expect(report.outcome == .degraded)
    let quickEnd = try #require(report.step("quick")?.end)
    for id in (1...4).map({ "block\($0)" }) {
      let step = try #require(report.step(id))
      #expect(step.state == .timedOut)
      #expect(quickEnd < (try #require(step.end)))
    }
    // The launch ended at the timeouts, not when the blocked threads let go.
    #expect(report.duration < .seconds(3))
  }

  @Test func killingTheProcessDuringAQueueRewriteLeavesTheOldOrTheNewFile() async throws {
    // The kill is aimed at the rewrite itself: the test waits for the writer's temporary file
    // to appear, then kills. A kill that lands after the rename (the write was quicker than
    // the test) proves nothing about a torn write, so it tries again; one that never lands
    // mid-write in five tries fails the test instead of passing without testing anything.
    var landedMidWrite = false
    for _ in 0..<5 where !landedMidWrite {
      let folder = try TemporaryFolder()
      let manifest = try folder.write(
        "queue.json",
        """
        { "version": 1, "steps": [
          { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
          { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "enrichment.json" } }
        ] }
        """)
      _ = try await Orchestrate.run(["run", manifest, "--quiet"])
      _ = try await sqlite(
        folder.path("library.sqlite"), "INSERT INTO works (id, title) VALUES (1, 'kept');")
      let entries = (0..<200_000).map { #"{"workId": \#($0 % 2 == 0 ? 1 : 2), "n": \#($0)}"# }
      let original = "[" + entries.joined(separator: ",") + "]"
      try folder.write("enrichment.json", original)
      let folderPath = folder.url.path
      @Sendable func temporaryFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folderPath)) ?? [])
          .filter { $0.hasPrefix(".enrichment.json.writing-") }
      }
      let result = try await Orchestrate.run(["run", manifest]) { process, stdout in
        await when("start      queue", in: stdout) {}
        // Watched from a thread of its own, every 0.1 ms: a wait on the test's task would
        // hold one of the two cooperative threads the other tests need.
        let pid = process.processIdentifier
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
          Thread {
            let deadline = Date().addingTimeInterval(30)
            while temporaryFiles().isEmpty, Date() < deadline { usleep(100) }
            kill(pid, SIGKILL)
            done.resume()
          }.start()
        }
      }
      #expect(result.status == 137 || result.status == 9 || result.status == 0)
      let after = try String(contentsOfFile: folder.path("enrichment.json"), encoding: .utf8)
      if !temporaryFiles().isEmpty {
        // Killed with the new file half written: the queue is the original, byte for byte.
        landedMidWrite = true
        #expect(after == original)
        // The kernel let go of the killed writer's lock on its temporary file: the next run
        // removes it and rewrites the queue.
        let again = try await Orchestrate.run(["run", manifest, "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(temporaryFiles().isEmpty)
      } else if after != original {
        let root = try JSONParser.parse(Array(after.utf8)).root
        let kept = try #require(root.elements)
        #expect(kept.count == 100_000)
        #expect(kept.allSatisfy { $0["workId"] == 1 })
      }
    }
    #expect(landedMidWrite, "no kill landed during the rewrite in five tries")
  }

  @Test(arguments: [SIGINT, SIGKILL])
  func interruptingAStoreMigrationLeavesTheStoreIntact(signal: Int32) async throws {
    let folder = try TemporaryFolder()
    let database = folder.path("library.sqlite")
    // A store at version 2 with enough rows that creating version 3's indexes takes a while.
    let migrations = try StoreSchema.books.migrations.prefix(2).map { try $0.checkedSQL() }.joined(
      separator: "\n")
    _ = try await sqlite(database, migrations + "PRAGMA user_version = 2;")
    _ = try await sqlite(
      database,
      """
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)
      INSERT INTO library_entries (id, edition_id, added_at) SELECT i, i, i * 1.5 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)
      INSERT INTO works (id, title) SELECT i, 'Work ' || (600000 - i) FROM n;
      """)
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite", "integrityCheck": false } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest, "--report", folder.path("r.json")]) {
      process, stdout in
      let pid = process.processIdentifier
      await when("Migrating to version 3", in: stdout) { kill(pid, signal) }
    }
    if signal == SIGINT {
      // The signal may land after the migration has committed: then the launch succeeded.
      let report = try readReport(folder.path("r.json"))
      if result.status == 130 {
        #expect(report.outcome == .cancelled)
      } else {
        #expect(result.status == 0)
        #expect(report.outcome == .succeeded)
        #expect(
          try await sqlite(database, "PRAGMA user_version")
            == "[(\(StoreSchema.books.latestVersion),)]")
      }
    }
    // One transaction: the store is at version 2 or the latest, and reads as it is through a
    // read-only connection (an extension's, a read-only launch's), which could not roll back
    // a hot journal: what a migration killed in a rollback journal would leave.
    do {
      let left = try SQLiteConnection(url: URL(fileURLWithPath: database), mode: .readOnly)
      #expect([2, StoreSchema.books.latestVersion].contains(try left.userVersion()))
    }
    // The next launch opens it and finishes the migration.
    let next = try await Orchestrate.run(["run", manifest, "--quiet"])
    #expect(next.status == 0, "\(next.stderr)")
    #expect(
      try await sqlite(database, "PRAGMA user_version")
        == "[(\(StoreSchema.books.latestVersion),)]")
    #expect(try await sqlite(database, "PRAGMA integrity_check") == "[('ok',)]")
    #expect(try await sqlite(database, "SELECT count(*) FROM library_entries") == "[(600000,)]")
    #expect(try await sqlite(database, "SELECT count(*) FROM works") == "[(600000,)]")
  }

  /// A books store one migration behind with one work, and a queue naming that work and one
  /// the store does not have (validating the queue means rewriting it), in `folder`; their paths.
  private func storeAndQueue(in folder: URL) async throws -> (store: String, queue: String) {
    let database = folder.appendingPathComponent("library.sqlite").path
    let migrations = try StoreSchema.books.migrations.prefix(2).map { try $0.checkedSQL() }.joined(
      separator: "\n")
    _ = try await sqlite(
      database,
      migrations + "PRAGMA user_version = 2; INSERT INTO works (id, title) VALUES (1, 'Kept');")
    let queue = folder.appendingPathComponent("queue.json").path
    try #"[{ "workId": 1 }, { "workId": 2 }]"#.write(
      toFile: queue, atomically: true, encoding: .utf8)
    return (database, queue)
  }

  /// A manifest that opens the store at `store` and validates the queue at `queue` against it.
  private func storeAndQueueManifest(
    in folder: TemporaryFolder, _ name: String, store: String, queue: String
  ) throws -> String {
    try folder.write(
      name,
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "\(store)", "createFolders": true } },
        { "id": "queue", "plugin": "queue.validate", "params": { "path": "\(queue)" },
          "dependsOn": ["store"] }
      ] }
      """)
  }

  /// Creates the store `elsewhere/library.sqlite` in `folder` beforehand, before the queue is
  /// written: against a store created in the launch itself, or after the queue was last
  /// written, queue.validate drops nothing, so it would not rewrite.
  private func createStoreElsewhere(in folder: TemporaryFolder) async throws {
    let manifest = try folder.write(
      "elsewhere.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "elsewhere/library.sqlite", "createFolders": true } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest, "--quiet"])
    try #require(result.status == 0, "\(result.stderr)")
  }

  @Test(
    .enabled(
      if: ReadOnlyFolder.canBeMade,
      "this file system cannot make a folder read-only for the user running the tests"))
  func aReadOnlyDataFolderFailsClearlyAndLosesNothing() async throws {
    let folder = try TemporaryFolder()
    let data = folder.url.appendingPathComponent("data")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    try await createStoreElsewhere(in: folder)
    let (database, queue) = try await storeAndQueue(in: data)
    // Unreadable: validating it means moving it aside.
    let broken = data.appendingPathComponent("broken.json").path
    try "[{ ".write(toFile: broken, atomically: true, encoding: .utf8)
    let storeInData = try storeAndQueueManifest(
      in: folder, "app.json", store: "data/library.sqlite", queue: "data/queue.json")
    let storeElsewhere = try storeAndQueueManifest(
      in: folder, "queue.json", store: "elsewhere/library.sqlite", queue: "data/queue.json")
    let brokenQueue = try storeAndQueueManifest(
      in: folder, "broken.json", store: "elsewhere/library.sqlite", queue: "data/broken.json")
    let before = try FileManager.default.contentsOfDirectory(atPath: data.path).sorted()
    let storeBytes = try Data(contentsOf: URL(fileURLWithPath: database))
    let queueBytes = try Data(contentsOf: URL(fileURLWithPath: queue))
    let brokenBytes = try Data(contentsOf: URL(fileURLWithPath: broken))

    try ReadOnlyFolder.lock(data.path)
    let results: [CommandResult]
    do {
      results = [
        try await Orchestrate.run(["run", storeInData, "--quiet"]),
        try await Orchestrate.run(["run", storeElsewhere, "--quiet"]),
        try await Orchestrate.run(["run", brokenQueue, "--quiet"]),
      ]
      try ReadOnlyFolder.unlock(data.path)
    } catch {
      try? ReadOnlyFolder.unlock(data.path)
      throw error
    }

    #expect(results.map(\.status) == [1, 1, 1])
    #expect(
      results[0].stderr
        == "Error: the launch failed: 'store' failed: cannot open the store '\(database)': its folder '\(data.path)' is not writable, and SQLite writes its journal beside the store, even to read it (unable to open database file); make the folder writable.\n"
    )
    #expect(
      results[1].stderr
        == "Error: the launch failed: 'queue' failed: cannot rewrite '\(queue)': its folder '\(data.path)' is not writable, so the file was left as it was; make the folder writable.\n"
    )
    #expect(
      results[2].stderr
        == "Error: the launch failed: 'queue' failed: cannot move '\(broken)' aside: its folder '\(data.path)' is not writable, so the file was left as it was; make the folder writable.\n"
    )
    #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).sorted() == before)
    #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == storeBytes)
    #expect(try Data(contentsOf: URL(fileURLWithPath: queue)) == queueBytes)
    #expect(try Data(contentsOf: URL(fileURLWithPath: broken)) == brokenBytes)
  }

  @Test(.enabled(if: FullDisk.canBeMade, "only root can mount the small file system it fills"))
  func aFullDiskFailsClearlyAndLosesNothing() async throws {
    let folder = try TemporaryFolder()
    let disk = folder.url.appendingPathComponent("disk")
    try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
    try FullDisk.mount(at: disk.path)
    do {
      try await createStoreElsewhere(in: folder)
      let (database, queue) = try await storeAndQueue(in: disk)
      let storeOnDisk = try storeAndQueueManifest(
        in: folder, "app.json", store: "disk/library.sqlite", queue: "disk/queue.json")
      let storeElsewhere = try storeAndQueueManifest(
        in: folder, "queue.json", store: "elsewhere/library.sqlite", queue: "disk/queue.json")
      let storeBytes = try Data(contentsOf: URL(fileURLWithPath: database))
      let queueBytes = try Data(contentsOf: URL(fileURLWithPath: queue))
      try FullDisk.fill(disk.path)

      let results = [
        try await Orchestrate.run(["run", storeOnDisk, "--quiet"]),
        try await Orchestrate.run(["run", storeElsewhere, "--quiet"]),
      ]

      #expect(results.map(\.status) == [1, 1])
      let full = "the disk holding its folder '\(disk.path)' is full (0 KiB free)"
      // SQLite's own words in the parentheses depend on which write it could not make.
      #expect(
        results[0].stderr.hasPrefix(
          "Error: the launch failed: 'store' failed: cannot open the store '\(database)': \(full), and SQLite writes its journal beside the store, even to read it ("
        ))
      #expect(results[0].stderr.hasSuffix("); free some space on it.\n"))
      #expect(
        results[1].stderr
          == "Error: the launch failed: 'queue' failed: cannot rewrite '\(queue)': \(full), so the file was left as it was; free some space on it.\n"
      )
      #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == storeBytes)
      #expect(try Data(contentsOf: URL(fileURLWithPath: queue)) == queueBytes)
      try FullDisk.unmount(disk.path)
    } catch {
      try? FullDisk.unmount(disk.path)
      throw error
    }
  }

  @Test func aDataFolderThatCannotBeCreatedFailsClearlyAndTouchesNothing() async throws {
    let folder = try TemporaryFolder()
    // A file where the store's folder should be: creating the folder fails (also for root).
    try folder.write("data", "not a folder")
    let manifest = try folder.write(
      "store.json",
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "data/library.sqlite" } } ] }"#
    )
    let result = try await Orchestrate.run(["run", manifest])
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix("Error: the launch failed: 'store' failed: "))
    #expect(try String(contentsOfFile: folder.path("data"), encoding: .utf8) == "not a folder")
  }

  /// Where the file system has no lock service (NFS without its lock daemon), `flock` fails
  /// with ENOLCK: a rewrite cannot lock its temporary file, which another write could then
  /// take for a killed write's leftover, so it removes the file and fails, naming why; the
  /// queue is left as it was, and the next launch on working locks rewrites it.
  @Test(.enabled(if: FailingLocks.library != nil, "needs clang and LD_PRELOAD (Linux)"))
  func aRewriteThatCannotLockItsTemporaryFileFailsClearlyAndLeavesNothing() async throws {
    let folder = try TemporaryFolder()
    let (queue, manifest) = try await queueToRewrite(in: folder)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: queue))

    let failed = try await Orchestrate.run(
      ["run", manifest, "--quiet"], environment: FailingLocks.environment(errno: ENOLCK))

    #expect(failed.status == 1)
    #expect(
      failed.stderr
        == "Error: the launch failed: 'queue' failed: cannot rewrite '\(queue)': could not lock its temporary file '.queue.json.writing-0' (No locks available), so the file was left as it was.\n"
    )
    #expect(try Data(contentsOf: URL(fileURLWithPath: queue)) == bytes)
    #expect(try temporaryFiles(in: folder).isEmpty)

    let next = try await Orchestrate.run(["run", manifest, "--quiet"])
    #expect(next.status == 0, "\(next.stderr)")
    #expect(try String(contentsOfFile: queue, encoding: .utf8) == #"[{ "workId": 1 }]"#)
  }

  /// Where the file system cannot lock at all (EOPNOTSUPP), no write can lock a temporary
  /// file, so none can take another's over either: the rewrite goes on unlocked.
  @Test(.enabled(if: FailingLocks.library != nil, "needs clang and LD_PRELOAD (Linux)"))
  func aRewriteWhereFilesCannotBeLockedAtAllGoesOnUnlocked() async throws {
    let folder = try TemporaryFolder()
    let (queue, manifest) = try await queueToRewrite(in: folder)

    let result = try await Orchestrate.run(
      ["run", manifest, "--quiet"], environment: FailingLocks.environment(errno: EOPNOTSUPP))

    #expect(result.status == 0, "\(result.stderr)")
    #expect(try String(contentsOfFile: queue, encoding: .utf8) == #"[{ "workId": 1 }]"#)
    #expect(try temporaryFiles(in: folder).isEmpty)
  }

  /// A store and a queue in `folder` whose launch rewrites the queue; their manifest.
  private func queueToRewrite(in folder: TemporaryFolder) async throws
    -> (queue: String, manifest: String)
  {
    let (_, queue) = try await storeAndQueue(in: folder.url)
    let manifest = try storeAndQueueManifest(
      in: folder, "app.json", store: "library.sqlite", queue: "queue.json")
    return (queue, manifest)
  }

  private func temporaryFiles(in folder: TemporaryFolder) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
      $0.contains(".writing-")
    }
  }
}

/// `flock` failing with a chosen error on the temporary files of writes (`.writing-` in their
/// names), as on a file system without locks, through a library the tests build and preload
/// into the binary: the binary's own code meets the failure, with no hook in it.
private enum FailingLocks {
  private static let source = """
    #define _GNU_SOURCE
    #include <dlfcn.h>
    #include <errno.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>

    int flock(int descriptor, int operation) {
      static int (*real)(int, int);
      if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
      char link[64], path[4096];
      snprintf(link, sizeof link, "/proc/self/fd/%d", descriptor);
      ssize_t length = readlink(link, path, sizeof path - 1);
      const char *code = getenv("ORCHESTRATE_TEST_FLOCK_ERRNO");
      if (length > 0 && code) {
        path[length] = 0;
        if (strstr(path, ".writing-")) {
          errno = atoi(code);
          return -1;
        }
      }
      return real(descriptor, operation);
    }
    """

  /// The library, built once per test run with the toolchain's `clang` into the build
  /// folder; `nil` where it cannot be (not Linux, or no `clang`).
  static let library: URL? = {
    #if os(Linux)
      let folder = Orchestrate.buildFolder
      let library = folder.appendingPathComponent("libfailinglocks.so")
      do {
        let file = folder.appendingPathComponent("failinglocks.c")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["clang", "-shared", "-fPIC", "-o", library.path, file.path, "-ldl"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? library : nil
      } catch {
        return nil
      }
    #else
      return nil
    #endif
  }()

  /// The environment that preloads the library, after what the tests' own preloads, and
  /// makes `flock` fail with `code`.
  static func environment(errno code: Int32) -> [String: String] {
    let preloaded = ProcessInfo.processInfo.environment["LD_PRELOAD"].map { [$0] } ?? []
    return [
      "LD_PRELOAD": (preloaded + [library?.path ?? ""]).joined(separator: ":"),
      "ORCHESTRATE_TEST_FLOCK_ERRNO": "\(code)",
    ]
  }
}

/// A small file system mounted for one test and filled to the last byte: a full disk that
/// leaves the machine's own disks alone.
private enum FullDisk {
  /// Whether this machine lets the tests mount one (root on Linux).
  static let canBeMade: Bool = {
    guard geteuid() == 0 else { return false }
    let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-mount-probe-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: probe) }
    guard
      (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true))
        != nil, (try? mount(at: probe.path)) != nil
    else { return false }
    return (try? unmount(probe.path)) != nil
  }()

  static func mount(at path: String) throws {
    try run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", path])
  }

  static func unmount(_ path: String) throws {
    try run(["umount", path])
  }

  /// Writes a file until the file system refuses another byte.
  static func fill(_ path: String) throws {
    let filler = URL(fileURLWithPath: path).appendingPathComponent("filler")
    guard FileManager.default.createFile(atPath: filler.path, contents: nil) else {
      throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: filler)
    defer { try? handle.close() }
    let chunk = Data(count: 4096)
    while (try? handle.write(contentsOf: chunk)) != nil {}
    while (try? handle.write(contentsOf: Data(count: 1))) != nil {}
  }

  private static func run(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
  }
}

/// Makes a folder read-only, also for root, whom permission bits do not stop: for root the
/// folder is made immutable (`chattr +i`, which ext4 and most Linux file systems support).
private enum ReadOnlyFolder {
  /// Whether a folder made read-only here really refuses new files.
  static let canBeMade: Bool = {
    let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-read-only-probe-\(UUID().uuidString)")
    guard
      (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true))
        != nil
    else { return false }
    defer {
      try? unlock(probe.path)
      try? FileManager.default.removeItem(at: probe)
    }
    guard (try? lock(probe.path)) != nil else { return false }
    return !FileManager.default.createFile(
      atPath: probe.appendingPathComponent("file").path, contents: Data())
  }()

  static func lock(_ path: String) throws {
    try change(path, root: "+i", permissions: 0o555)
  }

  static func unlock(_ path: String) throws {
    try change(path, root: "-i", permissions: 0o755)
  }

  private static func change(_ path: String, root flag: String, permissions: Int) throws {
    guard geteuid() == 0 else {
      try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
      return
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["chattr", flag, path]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw CocoaError(.fileWriteNoPermission)
    }
  }
}
