import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `queue.validate`, which drops queue entries whose work is gone: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerQueueValidation() {
    register([QueueValidationStep.self])
  }
}
