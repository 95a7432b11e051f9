import Foundation
import LaunchOrchestrator
import LaunchPlugins
import SimulatePlugin

/// Launches the way an app's scene delegate does, with why it launched: a notification
/// first (the first launch: onboarding runs, the feed does not), then a tap on the icon.
@MainActor
func contextLaunches() async throws -> Bool {
  let manifest = """
    { "version": 1, "name": "Contextual", "safeMode": { "after": 2 },
      "milestones": { "interactive": ["store"] },
      "steps": [
        { "id": "store", "plugin": "simulate" },
        { "id": "onboarding", "plugin": "simulate", "when": { "firstLaunch": true } },
        { "id": "feed", "plugin": "simulate", "dependsOn": ["store"],
          "when": { "reason": ["userTap", "url"], "prewarmed": false, "safeMode": false } }
      ] }
    """
  let data = FileManager.default.temporaryDirectory
    .appendingPathComponent("app-context-\(ProcessInfo.processInfo.processIdentifier)")
  try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: data) }
  var registry = PluginRegistry.builtIn
  registry.registerSimulate()
  let plan = try ManifestLoader(registry: registry).load(
    bytes: Array(manifest.utf8), file: "contextual.json", directory: data, dataDirectory: data)

  func launch(_ reason: LaunchContext.Reason) async -> (LaunchSession, LaunchReport) {
    var environment = LaunchEnvironment()
    environment[AppInfo.self] = AppInfo(version: "2.3.0")
    environment[LaunchContext.self] = LaunchContext(reason: reason, isPrewarmed: false)
    let session = LaunchSession()
    return (session, await session.run(plan, on: LaunchEngine(), environment: environment))
  }

  let (first, opened) = await launch(.notification)
  if first.isSafeMode { print("safe mode: the last launches did not finish") }
  print(
    "first launch: \(first.context?.isFirstLaunch == true), feed \(opened.step("feed")?.error ?? "ran")"
  )
  let (second, tapped) = await launch(.userTap)
  print(
    "launch \(second.context?.launchNumber ?? 0): onboarding \(tapped.step("onboarding")?.error ?? "ran"), feed \(tapped.step("feed")?.state.rawValue ?? "none")"
  )
  return first.context?.isFirstLaunch == true && !first.isSafeMode
    && opened.step("feed")?.error == "condition: reason is notification"
    && opened.step("onboarding")?.state == .succeeded
    && second.context?.launchNumber == 2 && tapped.step("feed")?.state == .succeeded
    && tapped.outcome == .succeeded
}
