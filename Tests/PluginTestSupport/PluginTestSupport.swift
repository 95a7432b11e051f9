import Foundation
import LaunchOrchestrator

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

/// The messages of a manifest that fails to load with `plugins`, or `[]` if it loads.
public func loadProblems(_ manifest: String, plugins: [any StepPlugin.Type]) -> [String] {
  var registry = PluginRegistry()
  registry.register(plugins)
  do {
    _ = try ManifestLoader(registry: registry).load(
      bytes: Array(manifest.utf8), file: "launch.json",
      directory: FileManager.default.temporaryDirectory)
    return []
  } catch {
    return error.errors.map { "\($0.path): \($0.message)" }
  }
}
