/// Where an app goes instead of its main content when a launch step ends the launch early.
///
/// A plugin throws a route from `run` to end the launch: the orchestrator cancels what is
/// still running, skips what has not started, and reports the outcome `routed`.
public struct LaunchRoute: Error, Sendable, Hashable, CustomStringConvertible {
  /// The route's name, as reports and the CLI print it.
  public let name: String

  /// A route by name. A plugin that routes declares its names as static members in an
  /// extension, as the gates do (`LaunchRoute.maintenance`), so an app can switch on them.
  public init(_ name: String) {
    self.name = name
  }

  /// The route's name.
  public var description: String { name }
}
