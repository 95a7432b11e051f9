import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `state.restore`, the values the app saved last session: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerStateRestore() {
    register([StateRestoreStep.self])
  }
}
