@_exported import BooksLibraryPlugin
@_exported import ImageCleanupPlugin
@_exported import LaunchGatesPlugin
import LaunchOrchestrator
@_exported import MusicLibraryPlugin
@_exported import QueueValidationPlugin
@_exported import SQLiteStore
@_exported import SampleDataPlugin
@_exported import ScreenSortPlugin
@_exported import StateRestorePlugin
@_exported import StoreInitPlugin

// The built-in kinds and the types they output (pages, the store handle) come with one
// `import LaunchPlugins`. `simulate` is not among them: it is for rehearsals, and an app
// links it only by asking for the `SimulatePlugin` product.
extension PluginRegistry {
  /// Every step kind an app may use from this package, ready for an app or a custom binary to
  /// add its own (`orchestrate` adds `simulate` with ``registerSimulate()``):
  ///
  /// ```swift
  /// var registry = PluginRegistry.builtIn
  /// registry.register(WarmCache.self)
  /// ```
  public static var builtIn: PluginRegistry {
    var registry = PluginRegistry()
    registry.registerStore()
    registry.registerSampleData()
    registry.registerQueueValidation()
    registry.registerImageCleanup()
    registry.registerBooksLibrary()
    registry.registerMusicLibrary()
    registry.registerLaunchGates()
    registry.registerStateRestore()
    registry.registerScreenSort()
    return registry
  }
}
