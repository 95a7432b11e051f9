import Foundation
import LaunchOrchestrator
import Testing

/// What a run of the `orchestrate` binary printed and how it exited.
struct CommandResult {
  var stdout: String
  var stderr: String
  var status: Int32
}

/// Runs the built `orchestrate` binary, the way a user would.
enum Orchestrate {
  /// The build folder: tests run from the folder that also holds the executables.
  static let buildFolder = URL(fileURLWithPath: CommandLine.arguments[0])
    .deletingLastPathComponent()

  static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// Runs the binary with `arguments` in `directory`, with `extra` added to its environment;
  /// `whileRunning` gets the process and the file its stdout goes to, for tests that signal
  /// it mid-run.
  ///
  /// Waits for the process without blocking a thread: Swift's cooperative pool has only as
  /// many threads as cores, and other tests need them meanwhile.
  static func run(
    _ arguments: [String], in directory: URL? = nil, binary name: String = "orchestrate",
    environment extra: [String: String] = [:],
    whileRunning: ((Process, URL) async throws -> Void)? = nil
  ) async throws -> CommandResult {
    let binary = buildFolder.appendingPathComponent(name)
    try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build '\(name)' first")
    let scratch = try TemporaryFolder()
    let stdoutURL = scratch.url.appendingPathComponent("stdout")
    let stderrURL = scratch.url.appendingPathComponent("stderr")
    try Data().write(to: stdoutURL)
    try Data().write(to: stderrURL)
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    process.currentDirectoryURL = directory ?? packageRoot
    var environment = ProcessInfo.processInfo.environment
    environment["CI"] = "true"
    environment.merge(extra) { $1 }
    process.environment = environment
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
    process.standardInput = FileHandle.nullDevice
    let (exited, exit) = AsyncStream.makeStream(of: Void.self)
    process.terminationHandler = { _ in exit.finish() }
    try process.run()
    try await whileRunning?(process, stdoutURL)
    for await _ in exited {}
    return CommandResult(
      stdout: try String(contentsOf: stdoutURL, encoding: .utf8),
      stderr: try String(contentsOf: stderrURL, encoding: .utf8),
      status: process.terminationStatus)
  }
}

extension Orchestrate {
  /// Runs `orchestrate-test-helper` with a `hold-…` command (`arguments`), runs `body` once
  /// the helper says it holds its lock, then kills it with SIGKILL, whatever `body` did: a
  /// test that stops early must not leave it holding. Fails when the helper exits without
  /// taking the lock.
  static func whileHelperHolds(
    _ arguments: [String], _ body: @escaping () async throws -> Void
  ) async throws {
    _ = try await run(arguments, binary: "orchestrate-test-helper") { helper, stdout in
      defer { kill(helper.processIdentifier, SIGKILL) }
      while !((try? String(contentsOf: stdout, encoding: .utf8)) ?? "").contains("locked") {
        try #require(helper.isRunning, "the helper could not take its lock: \(arguments)")
        try await Task.sleep(for: .milliseconds(10))
      }
      try await body()
    }
  }
}

/// A folder that is deleted when the value is.
final class TemporaryFolder {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "orchestrate-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// Writes `text` to `name` in the folder and returns its path.
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    let file = url.appendingPathComponent(name)
    try text.write(to: file, atomically: true, encoding: .utf8)
    return file.path
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Copies a shipped manifest (and the `gated/` data files) here, so that running it writes
  /// its data into this folder rather than the checkout; returns the copy's path.
  func copyShipped(_ manifest: String) throws -> String {
    let manifests = Orchestrate.packageRoot.appendingPathComponent("manifests")
    for name in [manifest, "gated", "migrations"] {
      let source = manifests.appendingPathComponent(name)
      let destination = url.appendingPathComponent(name)
      if !FileManager.default.fileExists(atPath: destination.path) {
        try FileManager.default.copyItem(at: source, to: destination)
      }
    }
    return path(manifest)
  }
}

/// Waits (up to a minute) until a running command's `stdout` holds `text`, then does `action`.
///
/// Watched from a thread of its own, every 0.1 ms: a task could wait seconds for one of the two
/// cooperative threads while other tests block them, and act after the command has ended.
func when(_ text: String, in stdout: URL, _ action: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
    Thread {
      let deadline = Date().addingTimeInterval(60)
      while !((try? String(contentsOf: stdout, encoding: .utf8))?.contains(text) ?? false),
        Date() < deadline
      {
        usleep(100)
      }
      action()
      done.resume()
    }.start()
  }
}

/// Runs `/usr/bin/env arguments...` to its end on a thread of its own, returning its exit
/// status and standard output: a wait on the test's task would hold one of the two
/// cooperative threads the other tests (and the launches they time) need.
func runTool(_ arguments: [String]) async throws -> (status: Int32, stdout: String) {
  try await withCheckedThrowingContinuation { continuation in
    Thread {
      continuation.resume(
        with: Result {
          let process = Process()
          process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
          process.arguments = arguments
          let output = Pipe()
          process.standardOutput = output
          try process.run()
          let text = String(
            decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
          process.waitUntilExit()
          return (process.terminationStatus, text)
        })
    }.start()
  }
}

/// The report a run wrote to `path`.
func readReport(_ path: String) throws -> LaunchReport {
  try LaunchReport(jsonText: String(contentsOfFile: path, encoding: .utf8))
}

/// Compares `text` with a golden file under `Golden/`; `RECORD_SNAPSHOTS=1` rewrites it.
func expectMatchesGolden(
  _ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "Golden/\(name)")
  if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
    try text.write(to: file, atomically: true, encoding: .utf8)
    return
  }
  let golden = try String(contentsOf: file, encoding: .utf8)
  #expect(
    text == golden,
    "differs from Golden/\(name); rerun with RECORD_SNAPSHOTS=1 if the change is intended",
    sourceLocation: sourceLocation)
}
