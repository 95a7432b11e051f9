import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `simulate`, stand-in work for rehearsals (not for an app's launch): one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerSimulate() {
    register([SimulateStep.self])
  }
}
