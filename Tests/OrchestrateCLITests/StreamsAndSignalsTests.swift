import Foundation
import LaunchOrchestrator
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Closed and full output streams, hang-ups, and hostile text on the terminal, through the
/// real binary.
@Suite("orchestrate: streams, signals and terminal safety", .timeLimit(.minutes(10)))
struct StreamsAndSignalsTests {
  /// Runs in a pseudo-terminal (Python's `pty`), as a terminal of type `term` outside CI.
  @Test(arguments: ["dumb", "xterm"])
  func aTerminalThatCannotMoveItsCursorGetsTheEventsNotTheLiveDisplay(term: String) async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "slow.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate", "params": { "duration": "300ms" } },
        { "id": "b", "plugin": "simulate", "dependsOn": ["a"], "params": { "duration": "300ms" } }
      ] }
      """)
    let (status, output) = try await runTool([
      "CI=false", "TERM=\(term)", "python3", "-c",
      "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))",
      Orchestrate.buildFolder.appendingPathComponent("orchestrate").path, "run", manifest,
    ])
    #expect(status == 0, "\(output)")
    #expect(output.contains("slow: succeeded in "), "\(output)")
    // The live display redraws its lines by moving the cursor up: `ESC [ n F`.
    #expect(output.contains("\u{1B}[") == (term != "dumb"), "\(output)")
  }

  /// The live display's block fits a narrow terminal: it redraws by moving up a row a line,
  /// so a line that wrapped left its first rows behind at every redraw.
  @Test func theLiveDisplaysLinesFitANarrowTerminal() async throws {
    let folder = try TemporaryFolder()
    let id = String(repeating: "a-long-step-name-", count: 4)
    let manifest = try folder.write(
      "slow.json",
      """
      { "version": 1, "steps": [
        { "id": "\(id)", "plugin": "simulate", "params": { "duration": "300ms" } },
        { "id": "b", "plugin": "simulate", "dependsOn": ["\(id)"], "params": { "duration": "300ms" } }
      ] }
      """)
    // A pseudo-terminal 40 columns wide, its size set in the child before the tool starts.
    let script = """
      import fcntl, os, pty, struct, sys, termios
      pid, fd = pty.fork()
      if pid == 0:
          fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 40, 0, 0))
          os.execv(sys.argv[1], sys.argv[1:])
      out = b''
      while True:
          try:
              chunk = os.read(fd, 65536)
          except OSError:
              break
          if not chunk:
              break
          out += chunk
      sys.stdout.buffer.write(out)
      sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
      """
    let (status, output) = try await runTool([
      "CI=false", "TERM=xterm", "python3", "-c", script,
      Orchestrate.buildFolder.appendingPathComponent("orchestrate").path, "run", manifest,
    ])
    #expect(status == 0, "\(output)")
    // The block's lines, indented by four, in what was printed before the summary (whose
    // chart wraps as printed text may); the erase (`ESC [ J`) that starts a redraw cut off.
    let live = output.components(separatedBy: "slow: succeeded in ").first ?? ""
    let block = live.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map {
      $0.components(separatedBy: "\u{1B}[J").last ?? ""
    }.filter { $0.hasPrefix("    ") }
    #expect(!block.isEmpty, "\(output)")
    for line in block { #expect(line.count < 40, "'\(line)'") }
    #expect(block.contains { $0.hasSuffix("…") }, "\(block)")
  }

  @Test func aReaderThatGoesAwayStopsThePrintingButNotTheLaunch() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "slow.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate", "params": { "duration": "100ms" } },
        { "id": "b", "plugin": "simulate", "dependsOn": ["a"], "params": { "duration": "100ms" } },
        { "id": "c", "plugin": "simulate", "dependsOn": ["b"], "params": { "duration": "100ms" } }
      ] }
      """)
    let process = Process()
    process.executableURL = Orchestrate.buildFolder.appendingPathComponent("orchestrate")
    process.arguments = ["run", manifest, "--report", folder.path("r.json")]
    process.environment = ProcessInfo.processInfo.environment.merging(["CI": "true"]) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    // `| head -1`: one line, then the reader is gone while the launch still prints.
    var first = Data()
    while !first.contains(UInt8(ascii: "\n")),
      let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty
    {
      first += byte
    }
    try output.fileHandleForReading.close()
    for await _ in exited {}
    #expect(String(decoding: first, as: UTF8.self).contains("start      a"))
    #expect(process.terminationReason == .exit, "killed by SIGPIPE")
    #expect(process.terminationStatus == 0)
    let report = try LaunchReport(
      jsonText: String(contentsOfFile: folder.path("r.json"), encoding: .utf8))
    #expect(report.steps.allSatisfy { $0.state == .succeeded })
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
  func aFullStandardOutputIsAnErrorNotACrash() async throws {
    let process = Process()
    process.executableURL = Orchestrate.buildFolder.appendingPathComponent("orchestrate")
    process.arguments = ["schema"]
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
    let errors = Pipe()
    process.standardError = errors
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    let stderr = try errors.fileHandleForReading.readToEnd() ?? Data()
    for await _ in exited {}
    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 74)
    #expect(
      String(decoding: stderr, as: UTF8.self)
        == "Error: standard output could not be written: No space left on device.\n")
  }

  /// Runs the binary from a shell that first closes the descriptors in `closing` (`>&-`),
  /// returning its exit status and what it wrote to the streams still open.
  private func runWithClosed(
    _ closing: String, _ arguments: [String]
  ) async throws -> CommandResult {
    let folder = try TemporaryFolder()
    let binary = Orchestrate.buildFolder.appendingPathComponent("orchestrate").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "exec \"$@\" \(closing)", "sh", binary] + arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["CI": "true"]) { $1 }
    process.standardOutput = try FileHandle(
      forWritingTo: URL(fileURLWithPath: folder.write("out", "")))
    process.standardError = try FileHandle(
      forWritingTo: URL(fileURLWithPath: folder.write("err", "")))
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    for await _ in exited {}
    #expect(process.terminationReason == .exit, "killed by a signal")
    return CommandResult(
      stdout: try String(contentsOfFile: folder.path("out"), encoding: .utf8),
      stderr: try String(contentsOfFile: folder.path("err"), encoding: .utf8),
      status: process.terminationStatus)
  }

  @Test func aClosedStandardOutputIsAnErrorNamingItAndTheLaunchStillWritesItsReport()
    async throws
  {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate", "params": { "duration": "10ms" } },
        { "id": "b", "plugin": "simulate", "dependsOn": ["a"], "params": { "duration": "10ms" } }
      ] }
      """)

    let result = try await runWithClosed(
      ">&-", ["run", manifest, "--report", folder.path("r.json")])

    #expect(result.status == 74)
    #expect(result.stderr == "Error: standard output could not be written: Bad file descriptor.\n")
    let report = try readReport(folder.path("r.json"))
    #expect(report.steps.map(\.state) == [.succeeded, .succeeded])
  }

  @Test func closedStandardStreamsNeitherCrashNorChangeTheLaunchsExitStatus() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json",
      """
      { "version": 1, "steps": [ { "id": "a", "plugin": "simulate", "params": { "fail": true } } ] }
      """)

    let stderrClosed = try await runWithClosed("2>&-", ["run", manifest])
    let bothClosed = try await runWithClosed(
      ">&- 2>&-", ["run", manifest, "--report", folder.path("r.json")])

    #expect(stderrClosed.status == 1)
    #expect(stderrClosed.stdout.contains("FAILED     a: simulated failure"))
    #expect(bothClosed.status == 1)
    #expect(try readReport(folder.path("r.json")).steps.map(\.state) == [.failed])
  }

  @Test func aGraphNeverLetsANameForgeALine() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "evil.json",
      #"""
      { "version": 1, "name": "Evil\nforged", "milestones": { "m\nforged": ["a\nforged"] }, "steps": [
        { "id": "a\nforged", "plugin": "simulate" },
        { "id": "b\u2028forged", "plugin": "simulate", "dependsOn": ["a\nforged"] }
      ] }
      """#)

    for format in ["dot", "mermaid"] {
      let graph = try await Orchestrate.run(["graph", manifest, "--format", format])
      #expect(graph.status == 0, "\(graph.stderr)")
      #expect(!graph.stdout.split(separator: "\n").contains { $0.hasPrefix("forged") }, "\(format)")
      #expect(!graph.stdout.contains("\u{2028}"), "\(format)")
    }
    let mermaid = try await Orchestrate.run(["graph", manifest, "--format", "mermaid"])
    #expect(mermaid.stdout.contains(#"s0["a\nforged<br/>simulate · normal"]"#))
    #expect(mermaid.stdout.contains(#"m0{{"m\nforged"}}"#))
    #expect(mermaid.stdout.contains(#"s1["b\u{2028}forged<br/>simulate · normal"]"#))
  }

  @Test func aMermaidLabelNeverOpensATag() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "tags.json",
      #"{ "version": 1, "steps": [ { "id": "<img src=x onerror=alert(1)>", "plugin": "simulate" } ] }"#
    )
    let mermaid = try await Orchestrate.run(["graph", manifest, "--format", "mermaid"])
    #expect(mermaid.status == 0, "\(mermaid.stderr)")
    #expect(
      mermaid.stdout.contains(##"s0["#lt;img src=x onerror=alert(1)#gt;<br/>simulate · normal"]"##))
    #expect(!mermaid.stdout.contains("<img"))
  }

  @Test func jsonOnTheTerminalStaysJSONWithEveryNameEscaped() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "evil.json",
      #"""
      { "version": 1, "steps": [ { "id": "a\u2028b\u202Ec\u0085\u001b", "plugin": "simulate" } ] }
      """#)

    let run = try await Orchestrate.run(["run", manifest, "--json"])

    #expect(run.status == 0, "\(run.stderr)")
    #expect(
      !run.stdout.unicodeScalars.contains { [0x1B, 0x85, 0x2028, 0x202E].contains($0.value) })
    #expect(run.stdout.contains(#""id": "a\u2028b\u202Ec\u0085\u001b""#))
    let report = try LaunchReport(jsonText: run.stdout)
    #expect(report.steps.map(\.id) == ["a\u{2028}b\u{202E}c\u{85}\u{1B}"])
    for option in ["--report", "--trace"] {
      let file = try await Orchestrate.run(["run", manifest, option, "-"])
      #expect(file.status == 0, "\(file.stderr)")
      #expect(
        !file.stdout.unicodeScalars.contains { [0x1B, 0x85, 0x2028, 0x202E].contains($0.value) })
      #expect(file.stdout.contains(#"a\u2028b\u202Ec\u0085\u001b"#), "\(option)")
      #expect(
        (try? JSONSerialization.jsonObject(with: Data(file.stdout.utf8))) != nil, "\(option)")
    }
  }

  @Test func escapesControlCharactersAndNewlinesFromTheManifestBeforeTheTerminal() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "evil.json",
      #"""
      { "version": 1, "name": "Evil\u001b[2J\nforged line", "steps": [
        { "id": "a\u001b]0;owned\u0007", "plugin": "simulate", "params": { "fail": true } },
        { "id": "b\r", "plugin": "simulate", "dependsOn": ["a\u001b]0;owned\u0007"] }
      ] }
      """#)
    let run = try await Orchestrate.run(["run", manifest])
    #expect(run.status == 1)
    let invalid = try folder.write(
      "invalid.json",
      #"{ "version": 1, "steps": [ { "id": "x", "plugin": "sim\u001b[31mulate" } ] }"#)
    let validate = try await Orchestrate.run(["validate", invalid])
    #expect(validate.status == 65)
    for text in [run.stdout, run.stderr, validate.stdout, validate.stderr] {
      #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F })
      #expect(!text.contains("\nforged"))
    }
    #expect(run.stdout.contains("Evil\\u{1B}[2J\\nforged line: failed in "))
    #expect(run.stdout.contains("start      a\\u{1B}]0;owned\\u{7}"))
    #expect(run.stdout.contains("skipped    b\\r"))
    #expect(validate.stdout.contains("'sim\\u{1B}[31mulate'"))
  }
}
