@_exported import BooksLibraryPlugin
@_exported import ImageCleanupPlugin
@_exported import LaunchGatesPlugin
import LaunchOrchestrator
@_exported import MusicLibraryPlugin
@_exported import QueueValidationPlugin
@_exported import SQLiteStore
@_exported import SampleDataPlugin
@_exported import ScreenSortPlugin
@_exported import SimulatePlugin
@_exported import StateRestorePlugin
@_exported import StoreInitPlugin

// The built-in kinds and the types they output (pages, the store handle) come with one
// `import LaunchPlugins`.
extension PluginRegistry {
  /// Every step kind `orchestrate` ships, ready for an app or a custom binary to add its own:
  ///
  /// ```swift
  /// var registry = PluginRegistry.builtIn
  /// registry.register(WarmCache.self)
  /// ```
  public static var builtIn: PluginRegistry {
    var registry = PluginRegistry()
    registry.register(builtInPlugins)
    return registry
  }

  /// The built-in plugin types, in the order `orchestrate plugins` lists them.
  public static let builtInPlugins: [any StepPlugin.Type] = [
    StoreInitStep.self, StoreCheckStep.self, SampleDataStep.self, QueueValidationStep.self,
    ImageCleanupStep.self,
    BooksPageStep.self, MusicPageStep.self, MusicSearchStep.self, MaintenanceGate.self,
    VersionGate.self, SessionGate.self, HouseholdGate.self, SimulateStep.self,
    StateRestoreStep.self, ResultsLoadStep.self,
  ]
}
