import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `results.load`, the newest page of sorted screenshots: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerScreenSort() {
    register([ResultsLoadStep.self])
  }
}
