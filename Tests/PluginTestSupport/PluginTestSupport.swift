import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A folder under the temporary directory, deleted with the value.
public final class ScratchFolder: Sendable {
  /// The folder.
  public let url: URL

  /// Creates an empty folder.
  public init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "plugin-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// The URL of `path` inside the folder.
  public func file(_ path: String) -> URL {
    url.appendingPathComponent(path)
  }

  /// Writes `text` to `path` inside the folder, creating folders on the way.
  @discardableResult
  public func write(_ path: String, _ text: String) throws -> URL {
    let file = file(path)
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: file)
    return file
  }
}

/// Loads `manifest` as `launch.json` in `folder` with `plugins`, and runs it for real with
/// the app's `environment`; `onEvent` sees each event as it arrives.
public func launch(
  _ manifest: String, in folder: ScratchFolder, plugins: [any StepPlugin.Type],
  environment: LaunchEnvironment = LaunchEnvironment(),
  onEvent: (LaunchEvent) -> Void = { _ in }
) async throws -> (report: LaunchReport, events: [LaunchEvent]) {
  let path = try folder.write("launch.json", manifest).path
  var registry = PluginRegistry()
  registry.register(plugins)
  let plan = try ManifestLoader(registry: registry).load(path: path)
  let (stream, continuation) = LaunchEvents.makeStream()
  async let report = LaunchEngine().run(plan, environment: environment, events: continuation)
  var events: [LaunchEvent] = []
  for await event in stream {
    onEvent(event)
    events.append(event)
  }
  return (await report, events)
}

/// The messages of a manifest that fails to load with `plugins`, or `[]` if it loads; with
/// `checksShippedFiles`, as `orchestrate validate` loads it.
public func loadProblems(
  _ manifest: String, plugins: [any StepPlugin.Type], checksShippedFiles: Bool = false
) -> [String] {
  var registry = PluginRegistry()
  registry.register(plugins)
  do {
    _ = try ManifestLoader(registry: registry, checksShippedFiles: checksShippedFiles).load(
      bytes: Array(manifest.utf8), file: "launch.json",
      directory: FileManager.default.temporaryDirectory)
    return []
  } catch {
    return error.errors.map { "\($0.path): \($0.message)" }
  }
}

/// Runs `work`, which blocks its thread, on a thread of its own, so that a test's task does
/// not hold one of the few cooperative threads while it waits.
public func onThreadOfItsOwn<T: Sendable>(_ work: @escaping @Sendable () throws -> T)
  async throws -> T
{
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}

/// The second process of the plugins' tests (`Tests/TestHelper`), built beside the tests.
public enum TestHelper {
  /// The helper's path: tests run from the build folder, which also holds the executables.
  public static let url = URL(fileURLWithPath: CommandLine.arguments[0])
    .deletingLastPathComponent().appendingPathComponent("orchestrate-test-helper")

  /// Runs the helper with `arguments` to its end, blocking the calling thread; returns its
  /// exit status (a signal it was killed by is `128 + signal`) and standard output.
  @discardableResult
  public static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
    let process = try start(arguments)
    let text = String(
      decoding: (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile()
        ?? Data(), as: UTF8.self)
    process.waitUntilExit()
    let status =
      process.terminationReason == .uncaughtSignal
      ? 128 + process.terminationStatus : process.terminationStatus
    return (status, text)
  }

  /// Starts the helper with `arguments`, its standard output a pipe.
  public static func start(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = url
    process.arguments = arguments
    process.standardOutput = Pipe()
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return process
  }

  /// Starts the helper with a command that takes a lock and says `locked` (`hold-lock`,
  /// `churn-lock`), runs `body` once it has said so, then kills it with SIGKILL, whatever
  /// `body` did.
  ///
  /// - Throws: ``HelperFailure`` when the helper ends without saying it took its lock, and
  ///   what `body` throws.
  public static func whileLocking<T>(
    _ arguments: [String], _ body: () async throws -> T
  ) async throws -> T {
    let process = try start(arguments)
    defer {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    let output = (process.standardOutput as? Pipe)?.fileHandleForReading
    // Read on a thread of its own: a test's task does not hold a cooperative thread meanwhile.
    let said = await withCheckedContinuation { continuation in
      Thread {
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("locked\n") {
          guard let chunk = output?.availableData, !chunk.isEmpty else { break }
          said += chunk
        }
        continuation.resume(returning: String(decoding: said, as: UTF8.self))
      }.start()
    }
    guard said.contains("locked\n") else {
      throw HelperFailure(message: "the helper did not take its lock: \(arguments) said '\(said)'")
    }
    return try await body()
  }

  /// What went wrong with the helper.
  public struct HelperFailure: Error, CustomStringConvertible {
    /// What happened.
    public var message: String
    /// The message.
    public var description: String { message }
  }

  /// Runs the helper to its end on a thread of its own, so that a test's task does not hold
  /// one of the few cooperative threads while it waits.
  public static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String) {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Result { try run(arguments) as (Int32, String) }) }.start()
    }
  }
}
