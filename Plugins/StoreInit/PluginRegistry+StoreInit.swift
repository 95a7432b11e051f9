import LaunchOrchestrator

extension PluginRegistry {
  /// Registers the store kinds: `store.init` (open, migrate, recover the SQLite store) and `store.check` (a deferred `quick_check`): one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerStore() {
    register([StoreInitStep.self, StoreCheckStep.self])
  }
}
