import LaunchOrchestrator

extension PluginRegistry {
  /// Registers the gates that route a launch: `gate.maintenance`, `gate.version`, `gate.session` and `gate.household`: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerLaunchGates() {
    register([MaintenanceGate.self, VersionGate.self, SessionGate.self, HouseholdGate.self])
  }
}
