import Foundation
import LaunchOrchestrator
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

@Suite("SafeFiles")
struct SafeFilesTests {
  /// A real folder under the temporary directory, removed with the value.
  final class Folder {
    let url: URL

    init() throws {
      url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "safefiles-\(UUID().uuidString.prefix(8))")
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
      try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> URL {
      try Data(text.utf8).write(to: file(name))
      return file(name)
    }

    var names: [String] {
      ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }
  }

  private func text(_ url: URL) throws -> String {
    try String(contentsOf: url, encoding: .utf8)
  }

  private func info(_ url: URL) throws -> stat {
    var info = stat()
    try #require(lstat(url.path, &info) == 0, "lstat '\(url.path)'")
    return info
  }

  private func isLink(_ url: URL) throws -> Bool {
    try info(url).st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK)
  }

  private func message(_ body: () throws -> Void) -> String? {
    do {
      try body()
      return nil
    } catch {
      return "\(error)"
    }
  }

  /// The name a file moved aside at the epoch takes first.
  private let asideAtEpoch = "state.json.unreadable-19700101T000000"

  @Test func movingAsideNeverReplacesWhatHasTheNewNameALinkToNothingIncluded() throws {
    let folder = try Folder()
    let file = try folder.write("state.json", "damaged")
    try FileManager.default.createSymbolicLink(
      atPath: folder.file(asideAtEpoch).path, withDestinationPath: "elsewhere.json")
    try folder.write("\(asideAtEpoch)-2", "moved aside before")
    let aside = try SafeFiles.moveAside(
      file, label: "unreadable", now: Date(timeIntervalSince1970: 0))
    #expect(aside.lastPathComponent == "\(asideAtEpoch)-3")
    #expect(try text(aside) == "damaged")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.file(asideAtEpoch).path)
        == "elsewhere.json")
    #expect(try text(folder.file("\(asideAtEpoch)-2")) == "moved aside before")
    #expect(folder.names == [asideAtEpoch, "\(asideAtEpoch)-2", "\(asideAtEpoch)-3"])
  }

  @Test func movingAsideMovesALinkItselfAndAFolderWhole() throws {
    let folder = try Folder()
    let target = try folder.write("target.json", "the user's")
    let link = folder.file("state.json")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "target.json")
    let movedLink = try SafeFiles.moveAside(
      link, label: "unreadable", now: Date(timeIntervalSince1970: 0))
    #expect(try isLink(movedLink))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: movedLink.path) == "target.json")
    #expect(try text(target) == "the user's")
    #expect(try info(target).st_nlink == 1)

    // A folder takes no second name: it is renamed, after a look at the name it takes.
    try FileManager.default.createDirectory(at: link, withIntermediateDirectories: false)
    try folder.write("state.json/inside", "kept")
    let movedFolder = try SafeFiles.moveAside(
      link, label: "unreadable", now: Date(timeIntervalSince1970: 0))
    #expect(movedFolder.lastPathComponent == "\(asideAtEpoch)-2")
    #expect(try text(movedFolder.appendingPathComponent("inside")) == "kept")
    #expect(folder.names == [asideAtEpoch, "\(asideAtEpoch)-2", "target.json"])
  }

  #if os(Linux)
    /// Runs `script` with Python 3 (its `os` module reaches extended attributes, which
    /// Swift's Glibc module leaves out) and returns what it printed.
    private func python(_ script: String, _ arguments: String...) throws -> String {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["python3", "-c", script] + arguments
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let printed = output.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      try #require(process.terminationStatus == 0, "python3 failed")
      return String(decoding: printed, as: UTF8.self)
    }

    /// A file's extended attributes, names and values, as Python lists them.
    private func attributes(_ url: URL) throws -> String {
      try python(
        "import os, sys\nfor n in sorted(os.listxattr(sys.argv[1])): print(n, os.getxattr(sys.argv[1], n).hex())",
        url.path)
    }

    /// A rewrite keeps who may read the file: a POSIX access list (here one letting the user
    /// `nobody` read a file its mode keeps from others) and the app's other marks. Lost, the
    /// other user was shut out of the queue after the first launch that rewrote it.
    @Test func aRewriteKeepsTheFilesAccessListAndItsOtherExtendedAttributes() throws {
      let folder = try Folder()
      let file = try folder.write("queue.json", "old")
      try #require(chmod(file.path, 0o640) == 0)
      _ = try python(
        """
        import os, struct, sys
        os.setxattr(sys.argv[1], 'user.origin', b'the app')
        entry = lambda tag, perm, id: struct.pack('<HHI', tag, perm, id)
        acl = struct.pack('<I', 2) + entry(1, 6, 0xffffffff) + entry(2, 4, 65534) \\
          + entry(4, 4, 0xffffffff) + entry(0x10, 4, 0xffffffff) + entry(0x20, 0, 0xffffffff)
        os.setxattr(sys.argv[1], 'system.posix_acl_access', acl)
        """, file.path)
      let before = try attributes(file)
      #expect(before.contains("system.posix_acl_access"))
      #expect(before.contains("user.origin"))
      try SafeFiles.writeAtomically(Data("new".utf8), to: file)
      #expect(try text(file) == "new")
      #expect(try attributes(file) == before)
      #expect(try info(file).st_mode & 0o7777 == 0o640)
    }
  #endif

  @Test func replacesARegularFileByRenameAndLeavesNoTemporaryFile() throws {
    let folder = try Folder()
    let file = try folder.write("report.json", "old")
    let before = try info(file).st_ino
    try SafeFiles.writeAtomically(Data("new".utf8), to: file)
    #expect(try text(file) == "new")
    #expect(try info(file).st_ino != before)
    #expect(folder.names == ["report.json"])
  }

  /// Written through an open folder, a file lands in that folder even when the folder's
  /// path has been swapped for a link to somewhere else since it was opened.
  @Test func aWriteThroughAnOpenFolderIsNotRedirectedByALinkSwappedIn() throws {
    let folder = try Folder()
    let cache = folder.file("cache")
    let elsewhere = folder.file("elsewhere")
    try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
    let opened = open(cache.path, O_RDONLY | O_DIRECTORY)
    #expect(opened >= 0)
    defer { close(opened) }
    let moved = folder.file("moved")
    try FileManager.default.moveItem(at: cache, to: moved)
    try FileManager.default.createSymbolicLink(at: cache, withDestinationURL: elsewhere)
    try SafeFiles.writeAtomically(
      Data("entry".utf8), named: "a.json", in: opened,
      naming: cache.appendingPathComponent("a.json"))
    #expect(try text(moved.appendingPathComponent("a.json")) == "entry")
    #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: moved.path) == ["a.json"])
    // A link standing at the name itself is refused, not followed.
    let outside = try folder.write("outside", "keep")
    try FileManager.default.createSymbolicLink(
      at: moved.appendingPathComponent("b.json"), withDestinationURL: outside)
    #expect(throws: StepFailure.self) {
      try SafeFiles.writeAtomically(
        Data("x".utf8), named: "b.json", in: opened, naming: moved.appendingPathComponent("b.json"))
    }
    #expect(try text(outside) == "keep")
  }

  @Test func createsAFileThatDoesNotExistYet() throws {
    let folder = try Folder()
    try SafeFiles.writeAtomically(Data("fresh".utf8), to: folder.file("new.json"))
    #expect(try text(folder.file("new.json")) == "fresh")
    #expect(folder.names == ["new.json"])
  }

  @Test func writesThroughASymlinkChainToTheRegularFileAndKeepsTheLinks() throws {
    let folder = try Folder()
    try FileManager.default.createDirectory(
      at: folder.file("real"), withIntermediateDirectories: true)
    let target = try folder.write("real/queue.json", "old")
    // A relative link to an absolute one: both kinds of link text are followed.
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("middle.json").path, withDestinationPath: target.path)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("queue.json").path, withDestinationPath: "middle.json")
    #expect(try SafeFiles.checkReplaceable(folder.file("queue.json")).path == target.path)
    try SafeFiles.writeAtomically(Data("new".utf8), to: folder.file("queue.json"))
    #expect(try isLink(folder.file("queue.json")))
    #expect(try isLink(folder.file("middle.json")))
    #expect(try text(target) == "new")
    #expect(folder.names == ["middle.json", "queue.json", "real"])
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.file("real").path) == [
        "queue.json"
      ])
  }

  @Test func keepsTheTargetsPermissions() throws {
    let folder = try Folder()
    let file = try folder.write("secret.json", "old")
    try #require(chmod(file.path, 0o600) == 0)
    try SafeFiles.writeAtomically(Data("new".utf8), to: file)
    #expect(try info(file).st_mode & 0o7777 == 0o600)
    try #require(chmod(file.path, 0o640) == 0)
    try SafeFiles.writeAtomically(Data("newer".utf8), to: file)
    #expect(try info(file).st_mode & 0o7777 == 0o640)
  }

  @Test(.enabled(if: geteuid() == 0, "only root may give a file away"))
  func keepsTheTargetsOwner() throws {
    let folder = try Folder()
    let file = try folder.write("shared.json", "old")
    try #require(chown(file.path, 4242, 4343) == 0)
    try SafeFiles.writeAtomically(Data("new".utf8), to: file)
    #expect(try info(file).st_uid == 4242)
    #expect(try info(file).st_gid == 4343)
  }

  @Test func refusesAFolderWithAnErrorThatNamesIt() throws {
    let folder = try Folder()
    let reports = folder.file("reports")
    try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
    try folder.write("reports/keep.json", "kept")
    let expected =
      "cannot write '\(reports.path)': it is a folder, not a regular file, and replacing it could destroy it; name a regular file instead"
    #expect(message { _ = try SafeFiles.checkReplaceable(reports) } == expected)
    #expect(message { try SafeFiles.writeAtomically(Data("x".utf8), to: reports) } == expected)
    #expect(try text(folder.file("reports/keep.json")) == "kept")
    #expect(folder.names == ["reports"])
  }

  @Test func refusesAFIFOAndKeepsIt() throws {
    let folder = try Folder()
    let fifo = folder.file("pipe")
    try #require(mkfifo(fifo.path, 0o600) == 0)
    #expect(
      message { try SafeFiles.writeAtomically(Data("x".utf8), to: fifo) }
        == "cannot write '\(fifo.path)': it is a FIFO (named pipe), not a regular file, and replacing it could destroy it; name a regular file instead"
    )
    #expect(try info(fifo).st_mode & mode_t(S_IFMT) == mode_t(S_IFIFO))
    #expect(folder.names == ["pipe"])
  }

  @Test func refusesASocketAndKeepsIt() throws {
    let folder = try Folder()
    let path = folder.file("socket").path
    #if canImport(Darwin)
      let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
    #else
      let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    #if canImport(Darwin)
      address.sun_len = UInt8(MemoryLayout<sockaddr_un>.size)
    #endif
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      buffer.copyBytes(from: Array(path.utf8) + [0])
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    try #require(bound == 0)
    #expect(
      message { try SafeFiles.writeAtomically(Data("x".utf8), to: URL(fileURLWithPath: path)) }
        == "cannot write '\(path)': it is a socket, not a regular file, and replacing it could destroy it; name a regular file instead"
    )
    #expect(try info(URL(fileURLWithPath: path)).st_mode & mode_t(S_IFMT) == mode_t(S_IFSOCK))
  }

  @Test func refusesALinkToADeviceAndKeepsTheLink() throws {
    let folder = try Folder()
    let link = folder.file("out.json")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "/dev/null")
    #expect(
      message { try SafeFiles.writeAtomically(Data("x".utf8), to: link) }
        == "cannot write '\(link.path)': it is a symbolic link to '/dev/null', which is a character device, not a regular file, and replacing it could destroy it; name a regular file instead"
    )
    #expect(try isLink(link))
    #expect(folder.names == ["out.json"])
  }

  @Test func refusesALinkToNothingAndALoopOfLinks() throws {
    let folder = try Folder()
    let dangling = folder.file("dangling.json")
    try FileManager.default.createSymbolicLink(
      atPath: dangling.path, withDestinationPath: folder.file("missing.json").path)
    #expect(
      message { _ = try SafeFiles.checkReplaceable(dangling) }
        == "cannot write '\(dangling.path)': it is a symbolic link to '\(folder.file("missing.json").path)', which does not exist; create that file first or name a regular file"
    )
    let loop = folder.file("loop.json")
    try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: "loop.json")
    #expect(
      message { try SafeFiles.writeAtomically(Data("x".utf8), to: loop) }
        == "cannot write '\(loop.path)': it is a chain of more than 32 symbolic links (a loop?); name a regular file instead"
    )
    #expect(folder.names == ["dangling.json", "loop.json"])
    #expect(
      message { _ = try SafeFiles.checkReplaceable(loop, creatingLinkTarget: true) }
        == "cannot write '\(loop.path)': it is a chain of more than 32 symbolic links (a loop?); name a regular file instead"
    )
  }

  @Test func aLinkToNothingLeadsToTheFileToCreateWhenItsFolderExists() throws {
    let folder = try Folder()
    let dangling = folder.file("dangling.json")
    try FileManager.default.createSymbolicLink(
      atPath: dangling.path, withDestinationPath: "shared/state.json")
    try FileManager.default.createDirectory(
      at: folder.file("shared"), withIntermediateDirectories: false)
    #expect(
      try SafeFiles.checkReplaceable(dangling, creatingLinkTarget: true).path
        == folder.file("shared/state.json").path)

    // No folder is created where a link leads: one missing, or a file in its place, is said.
    let nowhere = folder.file("nowhere.json")
    try FileManager.default.createSymbolicLink(
      atPath: nowhere.path, withDestinationPath: "gone/state.json")
    #expect(
      message { _ = try SafeFiles.checkReplaceable(nowhere, creatingLinkTarget: true) }
        == "cannot write '\(nowhere.path)': it is a symbolic link to '\(folder.file("gone/state.json").path)', and '\(folder.file("gone").path)' is not a folder that exists; create the folder or change the link"
    )
    try Data("x".utf8).write(to: folder.file("plain"))
    let throughFile = folder.file("through-file.json")
    try FileManager.default.createSymbolicLink(
      atPath: throughFile.path, withDestinationPath: "plain/state.json")
    #expect(
      message { _ = try SafeFiles.checkReplaceable(throughFile, creatingLinkTarget: true) }
        == "cannot write '\(throughFile.path)': it is a symbolic link to '\(folder.file("plain/state.json").path)', and '\(folder.file("plain").path)' is not a folder that exists; create the folder or change the link"
    )
    #expect(
      folder.names == ["dangling.json", "nowhere.json", "plain", "shared", "through-file.json"])
  }

  @Test(.enabled(if: geteuid() == 0, "only root may give a link away"))
  func refusesAnotherUsersLinkInAFolderEveryoneMayWriteTo() throws {
    let folder = try Folder()
    let mine = try folder.write("mine.json", "mine")
    let shared = folder.file("shared")
    try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
    try #require(chmod(shared.path, 0o1777) == 0)
    let planted = folder.file("shared/state.json")
    try FileManager.default.createSymbolicLink(
      atPath: planted.path, withDestinationPath: mine.path)
    try #require(lchown(planted.path, 4242, 4242) == 0)
    let expected =
      "cannot write '\(planted.path)': '\(planted.path)' is a symbolic link another user (uid 4242) made in '\(shared.path)', a folder everyone may write to, and following it could write where they chose; remove it if it is not yours, or name a file in a folder of your own"
    #expect(message { _ = try SafeFiles.checkReplaceable(planted) } == expected)
    #expect(
      message { _ = try SafeFiles.checkReplaceable(planted, creatingLinkTarget: true) }
        == expected)
    #expect(message { try SafeFiles.writeAtomically(Data("theirs".utf8), to: planted) } == expected)
    #expect(try text(mine) == "mine")

    // The kernel's own rule: the folder's owner may link, and outside such folders anyone may.
    try #require(chown(shared.path, 4242, 4242) == 0)
    #expect(try SafeFiles.checkReplaceable(planted).path == mine.path)
    try #require(chown(shared.path, 0, 0) == 0)
    try #require(chmod(shared.path, 0o777) == 0)
    #expect(try SafeFiles.checkReplaceable(planted).path == mine.path)
  }

  @Test func checkingATargetThatDoesNotExistYetReturnsItAndWritesNothing() throws {
    let folder = try Folder()
    let file = folder.file("report.json")
    #expect(try SafeFiles.checkReplaceable(file) == file)
    #expect(folder.names == [])
  }

  @Test func namesAFolderThatDoesNotExist() throws {
    let folder = try Folder()
    let file = folder.file("missing/report.json")
    #expect(
      message { try SafeFiles.writeAtomically(Data("x".utf8), to: file) }
        == "cannot write '\(file.path)': its folder '\(folder.file("missing").path)' does not exist; create it first"
    )
  }

  /// The temporary file of slot `slot` of a write to `name`, held as a write in flight holds
  /// it: created and locked through a descriptor of its own (a lock of this process's
  /// conflicts with a write's, as another process's would). Closing the descriptor lets go.
  private func holdSlot(_ slot: Int, of name: String, in folder: Folder) throws -> Int32 {
    let path = folder.file(SafeFiles.temporaryName(for: name, slot: slot)).path
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    try #require(descriptor >= 0)
    try #require(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
    try #require(write(descriptor, "in flight", 9) == 9)
    return descriptor
  }

  @Test func theNextWriteRemovesWhatAKilledWriterLeftAndLeavesAWriteInFlight() async throws {
    let folder = try Folder()
    let file = try folder.write("report.json", "old")
    // What killed writes leave: a file in a slot that no one holds. Here a process writes
    // half a file into the first slot and dies by kill -9, and the fourth slot has another.
    // (A writer that held its slot's lock when killed: User data safety ›
    // theNextRewriteRemovesTheTemporaryFileOfAWriterKilledMidWrite.)
    let leftover = folder.file(SafeFiles.temporaryName(for: "report.json", slot: 0))
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = ["-c", #"printf 'half a rep' > "$1"; exec sleep 60"#, "sh", leftover.path]
    try writer.run()
    while ((try? Data(contentsOf: leftover))?.count ?? 0) == 0 {
      try await Task.sleep(for: .milliseconds(5))
    }
    kill(writer.processIdentifier, SIGKILL)
    writer.waitUntilExit()
    try folder.write(SafeFiles.temporaryName(for: "report.json", slot: 3), "older half")
    // A write in flight holds the second slot; another file's slot is not this write's to judge.
    // Closed once, whichever comes first: a second `close` would close a descriptor another
    // test running meanwhile opened under the same number.
    var inFlight: Int32? = try holdSlot(1, of: "report.json", in: folder)
    defer { if let inFlight { close(inFlight) } }
    let otherTarget = try folder.write(
      SafeFiles.temporaryName(for: "trace.json", slot: 0), "not ours to judge")

    try SafeFiles.writeAtomically(Data("new".utf8), to: file)

    #expect(leftover.lastPathComponent == ".report.json.writing-0")
    #expect(
      folder.names
        == [".report.json.writing-1", otherTarget.lastPathComponent, "report.json"].sorted())
    #expect(try text(file) == "new")
    #expect(try text(folder.file(".report.json.writing-1")) == "in flight")
    // Once that write has died too, the next write removes its file as well.
    if let inFlight { close(inFlight) }
    inFlight = nil
    try SafeFiles.writeAtomically(Data("newer".utf8), to: file)
    #expect(folder.names == [otherTarget.lastPathComponent, "report.json"].sorted())
  }

  @Test func passesOverASlotTakenByALinkOrAFolderAndNeverFollowsIt() throws {
    let folder = try Folder()
    let file = try folder.write("report.json", "old")
    let victim = try folder.write("notes.txt", "someone's notes")
    try FileManager.default.createSymbolicLink(
      at: folder.file(SafeFiles.temporaryName(for: "report.json", slot: 0)),
      withDestinationURL: victim)
    try FileManager.default.createDirectory(
      at: folder.file(SafeFiles.temporaryName(for: "report.json", slot: 1) + "/inside"),
      withIntermediateDirectories: true)

    try SafeFiles.writeAtomically(Data("new".utf8), to: file)

    #expect(try text(file) == "new")
    #expect(try text(victim) == "someone's notes")
    #expect(
      folder.names
        == [".report.json.writing-0", ".report.json.writing-1", "notes.txt", "report.json"])
    let link = folder.file(".report.json.writing-0").path
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == victim.path)
  }

  @Test func aWriteWithEverySlotHeldTakesANameOfItsOwnAndLeavesTheSlotsAlone() throws {
    let folder = try Folder()
    let file = try folder.write("report.json", "old")
    let held = try (0..<8).map { try holdSlot($0, of: "report.json", in: folder) }
    let slots = (0..<8).map { SafeFiles.temporaryName(for: "report.json", slot: $0) }

    try SafeFiles.writeAtomically(Data("new".utf8), to: file)

    #expect(try text(file) == "new")
    #expect(folder.names == (slots + ["report.json"]).sorted())
    for slot in slots { #expect(try text(folder.file(slot)) == "in flight") }
    // Once those writes are gone (here: their locks let go), the next write removes them all.
    for descriptor in held { close(descriptor) }
    try SafeFiles.writeAtomically(Data("newer".utf8), to: file)
    #expect(folder.names == ["report.json"])
  }

  @Test func writesFromManyThreadsAtOnceEachLandWholeAndLeaveNothingBehind() async throws {
    let folder = try Folder()
    let file = try folder.write("report.json", "old")
    // Big enough that a write is still in flight when others start; more writers than slots,
    // so that some take names of their own.
    let contents = (0..<10).map { writer in
      (0..<30).map { String(repeating: "\(writer)-\($0) ", count: 2_000) }
    }
    let failures = Locked<[String]>([])
    await withTaskGroup(of: Void.self) { group in
      for writer in contents {
        // Threads of their own: a write blocks in fsync, and the test's tasks share two.
        group.addTask {
          await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
              for content in writer {
                do {
                  try SafeFiles.writeAtomically(Data(content.utf8), to: file)
                } catch {
                  failures.withLock { $0.append("\(error)") }
                }
              }
              done.resume()
            }.start()
          }
        }
      }
    }
    #expect(failures.withLock { $0 } == [])
    #expect(contents.contains { $0.last == (try? text(file)) })
    #expect(folder.names == ["report.json"])
  }

  /// A manifest's bytes are read straight into an array: the same bytes as the `Data` reader
  /// gives, and the same refusals.
  @Test func readsBytesAsTheDataReaderDoes() throws {
    let folder = try Folder()
    var generator = SplitMix(seed: 24)
    for size in [0, 1, 4095, 4096, 65_537, 300_000] {
      let file = folder.file("f\(size)")
      let content = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      try Data(content).write(to: file)
      let bytes = try SafeFiles.bytesOfRegularFile(followingLinksAt: file.path, limit: 1 << 20)
      #expect(bytes == content, "\(size) bytes")
      let data = try SafeFiles.contentsOfRegularFile(followingLinksAt: file, limit: 1 << 20)
      #expect(data.map(Array.init) == bytes)
    }
    // A link is followed to its file; nothing there is nil, not an error.
    let link = folder.file("link")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder.file("f1"))
    #expect(try SafeFiles.bytesOfRegularFile(followingLinksAt: link.path, limit: 10)?.count == 1)
    #expect(
      try SafeFiles.bytesOfRegularFile(followingLinksAt: folder.file("none").path, limit: 10) == nil
    )
    // Over the limit by one byte, a folder, a FIFO (never waited on): refused with the reason.
    let over = message {
      _ = try SafeFiles.bytesOfRegularFile(followingLinksAt: folder.file("f4096").path, limit: 4095)
    }
    #expect(over?.contains("4095") == true)
    #expect(
      try SafeFiles.bytesOfRegularFile(followingLinksAt: folder.file("f4096").path, limit: 4096)?
        .count == 4096)
    let folderProblem = message {
      _ = try SafeFiles.bytesOfRegularFile(followingLinksAt: folder.url.path, limit: 10)
    }
    #expect(folderProblem != nil)
    let fifo = folder.file("fifo")
    try #require(mkfifo(fifo.path, 0o600) == 0)
    let fifoProblem = message {
      _ = try SafeFiles.bytesOfRegularFile(followingLinksAt: fifo.path, limit: 10)
    }
    #expect(fifoProblem != nil)
    #expect(
      fifoProblem
        == message { _ = try SafeFiles.contentsOfRegularFile(followingLinksAt: fifo, limit: 10) })
    #expect(
      folderProblem
        == message {
          _ = try SafeFiles.contentsOfRegularFile(followingLinksAt: folder.url, limit: 10)
        })
  }

  /// A file that grew since its size was read (a hint smaller than the file) is read whole,
  /// across buffers, up to one byte past the limit, and refused past it; so is a file whose
  /// status gives no size.
  @Test(.timeLimit(.minutes(1))) func readsAFileLongerThanItsSizeSaid() throws {
    let folder = try Folder()
    var generator = SplitMix(seed: 7)
    let size = 300_000
    let content = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    let file = folder.file("grown")
    try Data(content).write(to: file)
    func read(hint: Int, limit: Int) throws -> [UInt8] {
      let descriptor = open(file.path, O_RDONLY)
      try #require(descriptor >= 0)
      defer { close(descriptor) }
      return try SafeFiles.readAll(descriptor, sizeHint: hint, limit: limit, naming: file)
    }
    for hint in [0, 1, size - 1, size, size + 5] {
      #expect(try read(hint: hint, limit: size) == content, "hint \(hint)")
      #expect(try read(hint: hint, limit: size + 1) == content, "hint \(hint)")
      let refused = message { _ = try read(hint: hint, limit: size - 1) }
      #expect(refused?.contains("\(size - 1)") == true, "hint \(hint): \(refused ?? "read")")
    }
    #if os(Linux)
      // A file of the kernel's: its status says 0 bytes, and it holds more.
      let status = try #require(
        try SafeFiles.bytesOfRegularFile(followingLinksAt: "/proc/self/status", limit: 1 << 20))
      #expect(String(decoding: status, as: UTF8.self).hasPrefix("Name:"))
      #expect(
        message {
          _ = try SafeFiles.bytesOfRegularFile(followingLinksAt: "/proc/self/status", limit: 10)
        }?
        .contains("10") == true)
    #endif
  }
}
