import LaunchOrchestrator
import PluginTestSupport
import QueueValidationPlugin
import SQLiteStore
import StoreInitPlugin

/// The launch the queue suites run: `store.init`, then `queue.validate` of `queue.json`
/// against that store.
let queueManifest = """
  { "version": 1, "steps": [
    { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } },
    { "id": "queue", "plugin": "queue.validate", "dependsOn": ["store"], "params": { "path": "queue.json" } }
  ] }
  """

/// The plugins `queueManifest` needs.
let queuePlugins: [any StepPlugin.Type] = [StoreInitStep.self, QueueValidationStep.self]

/// A scratch folder with a store that an earlier launch created, holding works 1 and 2, and
/// `extraWorks` (a `VALUES` list) when given.
func folderWithStore(extraWorks: String = "") async throws -> ScratchFolder {
  let folder = try ScratchFolder()
  _ = try await launch(
    #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
    in: folder, plugins: [StoreInitStep.self])
  let connection = try SQLiteConnection(url: folder.file("library.sqlite"), mode: .readWrite)
  try connection.run(
    "INSERT INTO works (id, title) VALUES (1, 'Kindred'), (2, 'Beloved')"
      + (extraWorks.isEmpty ? "" : ", " + extraWorks))
  return folder
}
