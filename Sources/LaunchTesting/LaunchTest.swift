import Foundation
import LaunchOrchestrator

/// Runs a manifest, or one plugin, the way a launch would, on a ``ManualClock``: for an app's
/// tests and a plugin author's.
///
/// ```swift
/// let page = try await LaunchTest.run(
///   MusicPageStep.self, params: #"{ "limit": 20 }"#, inputs: [store])
/// let report = try await LaunchTest.run(manifest: text, registry: registry)
/// ```
public enum LaunchTest {
  /// Loads `manifest` (JSON text) with `registry` and runs it on `clock`, moving the clock to
  /// each deadline in turn, and returns the report.
  ///
  /// Relative data paths resolve against `dataDirectory` (a new temporary folder when `nil`).
  ///
  /// - Throws: ``LaunchFailure`` of kind ``LaunchFailure/Kind/invalidPlan`` when the manifest
  ///   does not load, its message listing every problem.
  public static func run(
    manifest: String, registry: PluginRegistry,
    environment: LaunchEnvironment = LaunchEnvironment(), clock: ManualClock = ManualClock(),
    dataDirectory: URL? = nil
  ) async throws(LaunchFailure) -> LaunchReport {
    let (plan, madeFolder) = try load(manifest, registry: registry, dataDirectory: dataDirectory)
    defer { madeFolder.map { try? FileManager.default.removeItem(at: $0) } }
    let engine = LaunchEngine(clock: clock)
    return await clock.run { await engine.run(plan, environment: environment) }
  }

  /// Runs one step of `plugin` with `params` (JSON text), the outputs of its dependencies
  /// `inputs` (what ``StepContext/input(_:)`` reads) and `environment`, on `clock`, and returns
  /// its output.
  ///
  /// - Throws: ``LaunchFailure`` when the step fails (the plugin's own error in
  ///   ``LaunchFailure/underlying``), times out, or its params do not load
  ///   (``LaunchFailure/Kind/invalidPlan``).
  public static func run<Plugin: StepPlugin>(
    _ plugin: Plugin.Type, params: String = "{}", inputs: [any Sendable] = [],
    environment: LaunchEnvironment = LaunchEnvironment(), clock: ManualClock = ManualClock(),
    dataDirectory: URL? = nil
  ) async throws(LaunchFailure) -> Plugin.Output {
    var registry = PluginRegistry()
    registry.register(plugin)
    var steps: [String] = []
    for (index, input) in inputs.enumerated() {
      let kind = "launchtest.input\(index)"
      registry.provide(input, as: kind)
      steps.append(#"{ "id": "input\#(index)", "plugin": "\#(kind)" }"#)
    }
    let dependencies = inputs.indices.map { #""input\#($0)""# }.joined(separator: ", ")
    // On demand, so that `ensure` hands back the plugin's own error.
    steps.append(
      #"{ "id": "step", "plugin": "\#(Plugin.kind)", "params": \#(params), "dependsOn": [\#(dependencies)], "trigger": "onDemand" }"#
    )
    let manifest =
      #"{ "version": 1, "name": "\#(Plugin.kind)", "steps": [\#(steps.joined(separator: ", "))] }"#
    let (plan, madeFolder) = try load(manifest, registry: registry, dataDirectory: dataDirectory)
    defer { madeFolder.map { try? FileManager.default.removeItem(at: $0) } }
    let engine = LaunchEngine(clock: clock)
    let control = LaunchControl()
    _ = await clock.run { await engine.run(plan, environment: environment, control: control) }
    let result = await clock.run { () -> Result<Plugin.Output, LaunchFailure> in
      do {
        return .success(try await control.ensure("step", as: Plugin.Output.self))
      } catch let failure as LaunchFailure {
        return .failure(failure)
      } catch {
        return .failure(LaunchFailure(kind: .stepFailed, step: "step", message: "\(error)"))
      }
    }
    return try result.get()
  }

  /// The plan, and the temporary data folder made for it when none was given (removed once
  /// the run is over).
  private static func load(
    _ manifest: String, registry: PluginRegistry, dataDirectory: URL?
  ) throws(LaunchFailure) -> (LaunchPlan, madeFolder: URL?) {
    let folder =
      dataDirectory
      ?? FileManager.default.temporaryDirectory.appendingPathComponent(
        "launchtest-\(UUID().uuidString)")
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      let plan = try ManifestLoader(registry: registry).load(
        bytes: Array(manifest.utf8), file: "manifest.json", directory: folder,
        dataDirectory: folder)
      return (plan, dataDirectory == nil ? folder : nil)
    } catch {
      if dataDirectory == nil { try? FileManager.default.removeItem(at: folder) }
      throw LaunchFailure(kind: .invalidPlan, message: "\(error)")
    }
  }
}

extension PluginRegistry {
  /// A kind whose step outputs `value`: a dependency's output for the step under test.
  fileprivate mutating func provide<Value: Sendable>(_ value: Value, as kind: String) {
    register(kind: kind) { _ in value }
  }
}
