import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `images.cleanup`, which removes reviewed and orphaned images: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerImageCleanup() {
    register([ImageCleanupStep.self])
  }
}
