import Foundation
import LaunchOrchestrator
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// `--report` and `--trace` never destroy what they were not asked to write: each target is
/// checked before the launch starts, links are written through, permissions kept.
@Suite("orchestrate run: output files", .timeLimit(.minutes(10)))
struct OutputFilesTests {
  private let manifestText = """
    { "version": 1, "steps": [
      { "id": "a", "plugin": "simulate", "params": { "duration": "10ms" } },
      { "id": "b", "plugin": "simulate", "dependsOn": ["a"] }
    ] }
    """

  private func fileType(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & mode_t(S_IFMT)
  }

  /// The path with every symbolic link in it followed, as the refusals name it.
  private func realPath(_ path: String) throws -> String {
    let resolved = try #require(realpath(path, nil))
    defer { free(resolved) }
    return String(cString: resolved)
  }

  @Test func aReportThatCannotBeWrittenAfterTheLaunchKeepsTheLaunchsOutcomeAndTheHistory()
    async throws
  {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json",
      #"{ "version": 1, "steps": [ { "id": "slow", "plugin": "simulate", "params": { "duration": "1s" } } ] }"#
    )
    let out = folder.path("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let result = try await Orchestrate.run([
      "run", manifest, "--report", out + "/r.json", "--trace", out + "/t.json", "--history",
      folder.path("h"),
    ]) { _, stdout in
      // The folder goes while the launch runs, after the check before it.
      await when("start      slow", in: stdout) { try? FileManager.default.removeItem(atPath: out) }
    }
    // The launch's own outcome and exit code stand; each output that failed is named.
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("succeeded"))
    #expect(result.stderr.contains("Error: Cannot write the report to '\(out)/r.json'"))
    #expect(result.stderr.contains(" Cannot write the trace to '\(out)/t.json'"))
    let runs = try FileManager.default.contentsOfDirectory(atPath: folder.path("h"))
    #expect(runs.filter { $0.hasSuffix(".json") }.count == 1)
  }

  @Test func refusesTheManifestItselfHoweverItIsSpelledBeforeTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createDirectory(
      atPath: folder.path("sub"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("alias.json"), withDestinationPath: manifest)
    for target in [manifest, folder.path("sub/../app.json"), folder.path("alias.json")] {
      let result = try await Orchestrate.run(["run", manifest, "--report", target])
      #expect(result.status == 64)
      #expect(result.stdout.isEmpty, "the launch must not start")
      #expect(
        result.stderr.hasPrefix(
          "Error: '--report \(target)' is the manifest '\(manifest)'; writing there would destroy it. Name another file.\n"
        ))
      #expect(try String(contentsOfFile: manifest, encoding: .utf8) == manifestText)
    }
  }

  @Test func refusesAReportAndATraceThatAreOneFile() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createDirectory(
      atPath: folder.path("sub"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("link.json"), withDestinationPath: folder.path("out.json"))
    try folder.write("out.json", "keep")
    for trace in [folder.path("sub/../out.json"), folder.path("link.json")] {
      let result = try await Orchestrate.run([
        "run", manifest, "--report", folder.path("out.json"), "--trace", trace,
      ])
      #expect(result.status == 64)
      #expect(result.stdout.isEmpty)
      #expect(
        result.stderr.hasPrefix(
          "Error: '--trace \(trace)' is the same file as '--report \(folder.path("out.json"))'; one would overwrite the other. Name two different files.\n"
        ))
      #expect(try String(contentsOfFile: folder.path("out.json"), encoding: .utf8) == "keep")
    }
  }

  @Test func refusesAFolderBeforeTheLaunchInsteadOfFailingAfterIt() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createDirectory(
      atPath: folder.path("reports"), withIntermediateDirectories: false)
    let result = try await Orchestrate.run(["run", manifest, "--report", folder.path("reports")])
    #expect(result.status == 73)
    #expect(result.stdout.isEmpty, "the launch must not start")
    #expect(
      result.stderr
        == "Error: Refusing '--report \(folder.path("reports"))' before the launch: cannot write '\(folder.path("reports"))': it is a folder, not a regular file, and replacing it could destroy it; name a regular file instead.\n"
    )
  }

  @Test func writesAFIFOInPlaceForItsReaderAndLeavesItAFIFO() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let fifo = folder.path("pipe")
    try #require(mkfifo(fifo, 0o644) == 0)
    // A reader, as `orchestrate run app.json --trace pipe` has in `cat pipe`.
    let reader = Process()
    reader.executableURL = URL(fileURLWithPath: "/bin/sh")
    reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo, folder.path("read.json")]
    try reader.run()
    let result = try await Orchestrate.run(["run", manifest, "--trace", fifo])
    reader.waitUntilExit()
    #expect(result.status == 0, "\(result.stderr)")
    #expect(fileType(fifo) == mode_t(S_IFIFO))
    let read = try String(contentsOfFile: folder.path("read.json"), encoding: .utf8)
    #expect(read.contains("\"traceEvents\""))
  }

  /// A target whose folder is missing cannot be written: 73, as for `--history`, before
  /// the launch, with no usage line (the command line was right).
  @Test func aTargetInAFolderThatDoesNotExistIsRefusedWith73BeforeTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let target = folder.path("missing/r.json")
    let result = try await Orchestrate.run(["run", manifest, "--report", target])
    #expect(result.status == 73)
    #expect(result.stdout.isEmpty, "the launch must not start")
    #expect(
      result.stderr
        == "Error: The folder for '--report \(target)' does not exist; create '\(folder.path("missing"))' first.\n"
    )
  }

  /// A FIFO no one reads waits, as the shell's `>` would; and as for the shell, a SIGTERM (a
  /// Ctrl-C, a closed terminal) ends the wait and the process. It was ignored, the launch's
  /// handler gone: nothing could stop the process but a reader or SIGKILL.
  @Test func aSignalEndsTheWaitForAFIFOsReader() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let fifo = folder.path("pipe")
    try #require(mkfifo(fifo, 0o644) == 0)
    let process = Process()
    process.executableURL = Orchestrate.buildFolder.appendingPathComponent("orchestrate")
    // The report first: once it is there, the launch is over and the trace is next.
    process.arguments = ["run", manifest, "--report", folder.path("r.json"), "--trace", fifo]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(120)
    while !FileManager.default.fileExists(atPath: folder.path("r.json")), clock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    // Again until it ends: one sent before the wait for the reader began is ignored.
    while process.isRunning, clock.now < deadline {
      kill(process.processIdentifier, SIGTERM)
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(!process.isRunning, "still waiting for a reader after SIGTERM")
    if !process.isRunning {
      for await _ in exited {}
      #expect(process.terminationReason == .uncaughtSignal)
      #expect(process.terminationStatus == SIGTERM)
    }
    #expect(fileType(fifo) == mode_t(S_IFIFO))
  }

  @Test func aReportToDevStdoutFollowsThePrintedRunInsteadOfReplacingIt() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    // The test's standard output is a file, as with `> run.txt`.
    let result = try await Orchestrate.run(["run", manifest, "--report", "/dev/stdout"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("\"outcome\": \"succeeded\""))
    #expect(result.stdout.contains("critical path"), "the printed run is kept: \(result.stdout)")
  }

  @Test func refusesAWriteProtectedReportEvenAsRootBeforeTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let report = try folder.write("r.json", "keep")
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: report)
    let result = try await Orchestrate.run(["run", manifest, "--report", report])
    #expect(result.status == 73)
    #expect(result.stdout.isEmpty, "the launch must not start")
    #expect(
      result.stderr
        == "Error: Refusing '--report \(report)' before the launch: it is write-protected (mode r--r--r--), and the shell would not replace it either; make it writable or name another file.\n"
    )
    #expect(try String(contentsOfFile: report, encoding: .utf8) == "keep")
  }

  @Test func refusesAnyFileTheLaunchUsesBeforeTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
        { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } },
        { "id": "restore", "plugin": "state.restore" },
        { "id": "images", "plugin": "images.cleanup", "dependsOn": ["store"], "params": { "directory": "images" } }
      ] }
      """)
    let first = try await Orchestrate.run(["run", manifest])
    try #require(first.status == 0, "\(first.stderr)")
    try folder.write("queue.json", "[]")
    for name in ["images", ".state"] {
      try FileManager.default.createDirectory(
        atPath: folder.path(name), withIntermediateDirectories: true)
    }
    try folder.write(".state/launch-state.json", "{}")
    try folder.write("images/scan.jpg", "scan")
    let targets = [
      ("library.sqlite", "'path' of step 'store'"),
      ("library.sqlite-wal", "'path' of step 'store'"),
      ("library.sqlite-shm", "'path' of step 'store'"),
      ("queue.json", "'path' of step 'queue'"),
      (".state/launch-state.json", "'file' of step 'restore'"),
      ("images/scan.jpg", "'directory' of step 'images'"),
      ("images/new.json", "'directory' of step 'images'"),
    ]
    for (name, owner) in targets {
      let target = folder.path(name)
      let before = try? Data(contentsOf: URL(fileURLWithPath: target))
      let result = try await Orchestrate.run(["run", manifest, "--report", target])
      #expect(result.status == 64, "\(name): \(result.stderr)")
      #expect(result.stdout.isEmpty, "the launch must not start")
      #expect(result.stderr.contains("which the launch uses (\(owner))"), "\(result.stderr)")
      #expect((try? Data(contentsOf: URL(fileURLWithPath: target))) == before)
    }
  }

  @Test func refusesTheFilesOfAFallbackAndThoseKeptBesideALinkedStoresTarget() async throws {
    let folder = try TemporaryFolder()
    for name in ["data", "real"] {
      try FileManager.default.createDirectory(
        atPath: folder.path(name), withIntermediateDirectories: true)
    }
    // The store reached through a link: SQLite keeps its WAL and the plugins their records
    // beside the file the link leads to.
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("data/library.sqlite"), withDestinationPath: "../real/library.sqlite")
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "data/library.sqlite" },
          "fallback": { "params": { "path": "data/local.sqlite" } } },
        { "id": "restore", "plugin": "state.restore", "params": { "file": "data/state.json" },
          "fallback": { "params": { "file": "data/saved.json" } } }
      ] }
      """)
    // Refused before the launch: no store need be there, only the files they would destroy.
    let store = try folder.write("real/library.sqlite", "the user's store")
    let fallbackStore = try folder.write("data/local.sqlite", "the fallback's store")
    let saved = try folder.write("data/saved.json", "{}")
    let movedAside = try folder.write("real/library.sqlite.corrupt-20261123T101500", "old data")
    let targets = [
      (fallbackStore, "which the launch uses ('path' of the fallback of step 'store')"),
      (fallbackStore + "-wal", "which the launch uses ('path' of the fallback of step 'store')"),
      (saved, "which the launch uses ('file' of the fallback of step 'restore')"),
      (folder.path("real/library.sqlite-wal"), "which the launch uses ('path' of step 'store')"),
      (
        folder.path("real/library.sqlite.created"),
        "which the launch uses ('path' of step 'store')"
      ),
      (
        folder.path("data/library.sqlite.created"), "which the launch uses ('path' of step 'store')"
      ),
      (
        movedAside,
        "is named as a file kept beside '\(try realPath(store))', which the launch uses ('path' of step 'store')"
      ),
    ]
    for (target, reason) in targets {
      let before = try? Data(contentsOf: URL(fileURLWithPath: target))
      let result = try await Orchestrate.run(["run", manifest, "--report", target])
      #expect(result.status == 64, "\(target): \(result.stderr)")
      #expect(result.stdout.isEmpty, "the launch must not start")
      #expect(result.stderr.contains(reason), "\(result.stderr)")
      #expect((try? Data(contentsOf: URL(fileURLWithPath: target))) == before)
    }
    // A name that only begins like the store's, where nothing is kept yet, is the user's.
    for name in ["real/library.sqlite.report.json", "data/local.sqlite.json"] {
      let result = try await Orchestrate.run(["run", manifest, "--report", folder.path(name)])
      #expect(result.status != 64, "\(name): \(result.stderr)")
      #expect(FileManager.default.fileExists(atPath: folder.path(name)), "\(result.stderr)")
    }
  }

  @Test func refusesALinkToNothing() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("dangling.json"), withDestinationPath: folder.path("gone/r.json"))
    let result = try await Orchestrate.run([
      "run", manifest, "--report", folder.path("dangling.json"),
    ])
    #expect(result.status == 73)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("which does not exist"))
    #expect(fileType(folder.path("dangling.json")) == mode_t(S_IFLNK))
  }

  /// A FIFO or device is written in place, after the link is followed: never through a link
  /// another user planted in a folder everyone may write to (their FIFO would read the
  /// report), which the kernel does not follow there either.
  @Test(.enabled(if: geteuid() == 0, "only root may give a link away"))
  func refusesAnotherUsersLinkToAFIFOInAFolderEveryoneMayWriteTo() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let shared = folder.path("shared")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
    try #require(chmod(shared, 0o1777) == 0)
    try #require(mkfifo(folder.path("theirs.fifo"), 0o622) == 0)
    let planted = folder.path("shared/report.json")
    try FileManager.default.createSymbolicLink(
      atPath: planted, withDestinationPath: folder.path("theirs.fifo"))
    try #require(lchown(planted, 4242, 4242) == 0)
    let result = try await Orchestrate.run(["run", manifest, "--report", planted])
    #expect(result.status == 73)
    #expect(
      result.stderr.contains(
        "'\(planted)' is a symbolic link another user (uid 4242) made in '\(shared)'"),
      "\(result.stderr)")
    #expect(result.stdout.isEmpty)
  }

  @Test func aFolderOutOfReachIsNotSaidToBeMissing() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createDirectory(
      atPath: folder.path("a/b"), withIntermediateDirectories: true)
    // A loop of links stands for a folder this process cannot reach (root passes any mode).
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("loop"), withDestinationPath: folder.path("loop"))
    let result = try await Orchestrate.run([
      "run", manifest, "--report", folder.path("loop/r.json"),
    ])
    #expect(result.status == 73)
    #expect(result.stderr.contains("cannot be reached ("), "\(result.stderr)")
    #expect(!result.stderr.contains("does not exist"))
  }

  @Test func writesThroughALinkToARegularFileKeepingTheLinkAndSaysSo() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    try FileManager.default.createDirectory(
      atPath: folder.path("kept"), withIntermediateDirectories: false)
    let real = try folder.write("kept/report.json", "{}")
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("latest.json"), withDestinationPath: real)
    let result = try await Orchestrate.run([
      "run", manifest, "--report", folder.path("latest.json"), "--quiet",
    ])
    #expect(result.status == 0)
    #expect(
      result.stderr
        == "Note: '--report \(folder.path("latest.json"))' is a symbolic link; its target '\(real)' will be written, and the link kept.\n"
    )
    #expect(fileType(folder.path("latest.json")) == mode_t(S_IFLNK))
    let report = try LaunchReport(jsonText: String(contentsOfFile: real, encoding: .utf8))
    #expect(report.steps.map(\.id) == ["a", "b"])
  }

  @Test func keepsTheReportsPermissions() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let report = try folder.write("report.json", "{}")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: report)
    let result = try await Orchestrate.run(["run", manifest, "--report", report, "--quiet"])
    #expect(result.status == 0)
    let permissions = try FileManager.default.attributesOfItem(atPath: report)[.posixPermissions]
    #expect(permissions as? Int == 0o600)
    #expect(try String(contentsOfFile: report, encoding: .utf8).contains("\"outcome\""))
  }

  @Test func removesTheTemporaryFileARunKilledWhileWritingLeftBehind() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    // What a run killed mid-write leaves: its temporary file, which nothing holds any more.
    let leftover = try folder.write(
      SafeFiles.temporaryName(for: "report.json", slot: 0), "{ \"half\": ")
    let result = try await Orchestrate.run([
      "run", manifest, "--report", folder.path("report.json"), "--quiet",
    ])
    #expect(result.status == 0)
    #expect(!FileManager.default.fileExists(atPath: leftover))
    #expect(FileManager.default.fileExists(atPath: folder.path("report.json")))
  }

  @Test func aDashSendsTheReportToStandardOutputAndProgressToStandardError() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write("app.json", manifestText)
    let result = try await Orchestrate.run(["run", manifest, "--report", "-"], in: folder.url)
    #expect(result.status == 0)
    let report = try LaunchReport(jsonText: result.stdout)
    #expect(report.steps.map(\.id) == ["a", "b"])
    #expect(result.stderr.contains("start      a"))
    #expect(result.stderr.contains("report: standard output"))
    #expect(!FileManager.default.fileExists(atPath: folder.path("-")))

    let both = try await Orchestrate.run(["run", manifest, "--report", "-", "--trace", "-"])
    #expect(both.status == 64)
    #expect(
      both.stderr.hasPrefix(
        "Error: '--report -' and '--trace -' both ask for standard output; send one of them to a file.\n"
      ))
    let json = try await Orchestrate.run(["run", manifest, "--trace", "-", "--json"])
    #expect(json.status == 64)
    #expect(
      json.stderr.hasPrefix(
        "Error: '--trace -' and '--json' both print on standard output; use one of them.\n"))
  }
}
