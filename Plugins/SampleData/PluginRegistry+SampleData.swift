import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `sample.data`, which seeds an empty library: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerSampleData() {
    register([SampleDataStep.self])
  }
}
