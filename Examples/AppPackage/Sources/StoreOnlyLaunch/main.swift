import Foundation
import LaunchOrchestrator
import StoreInitPlugin

// A launch that opens the app's store and nothing else, linking only the store family.
var registry = PluginRegistry()
registry.registerStore()
let data = FileManager.default.temporaryDirectory
  .appendingPathComponent("store-only-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: data) }
let plan = try ManifestLoader(registry: registry).load(
  bytes: Array(
    """
    { "version": 1, "name": "StoreOnly", "milestones": { "interactive": ["store"] },
      "steps": [ { "id": "store", "plugin": "store.init",
                   "params": { "path": "library.sqlite", "schema": "books" } } ] }
    """.utf8), file: "store-only.json", directory: data, dataDirectory: data)
let report = await LaunchEngine().run(plan)
let created = FileManager.default.fileExists(
  atPath: data.appendingPathComponent("library.sqlite").path)
print("store only: \(report.outcome.rawValue), store created: \(created)")
guard report.outcome == .succeeded, created else {
  print("store only: FAILED")
  exit(1)
}
print("store only: ok")
