import LaunchOrchestrator

/// A route for the core's own tests, which link no gate plugin.
extension LaunchRoute {
  static let maintenance = LaunchRoute("maintenance")
}
