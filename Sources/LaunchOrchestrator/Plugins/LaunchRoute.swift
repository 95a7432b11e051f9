/// Where an app goes instead of its main content when a launch step ends the launch early.
///
/// A plugin throws a route from `run` to end the launch: the orchestrator cancels what is
/// still running, skips what has not started, and reports the outcome `routed`.
public struct LaunchRoute: Error, Sendable, Hashable, CustomStringConvertible {
  /// The route's name, as reports and the CLI print it.
  public let name: String

  /// A route by name; the built-in names have static members.
  public init(_ name: String) {
    self.name = name
  }

  /// The service is down for maintenance.
  public static let maintenance = LaunchRoute("maintenance")
  /// This version of the app is too old to run.
  public static let updateRequired = LaunchRoute("updateRequired")
  /// There is no valid session; the user must log in.
  public static let loginRequired = LaunchRoute("loginRequired")
  /// The user belongs to no household yet.
  public static let createHousehold = LaunchRoute("createHousehold")
  /// The user must pick one of several households.
  public static let selectHousehold = LaunchRoute("selectHousehold")

  /// The route's name.
  public var description: String { name }
}
