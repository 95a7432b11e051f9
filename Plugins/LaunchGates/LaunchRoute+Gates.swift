import LaunchOrchestrator

/// The routes the gates end a launch with, for an app to switch on.
extension LaunchRoute {
  /// The service is down for maintenance (`gate.maintenance`).
  public static let maintenance = LaunchRoute("maintenance")
  /// This version of the app is too old to run (`gate.version`).
  public static let updateRequired = LaunchRoute("updateRequired")
  /// There is no valid session; the user must log in (`gate.session`).
  public static let loginRequired = LaunchRoute("loginRequired")
  /// The user belongs to no household yet (`gate.household`).
  public static let createHousehold = LaunchRoute("createHousehold")
  /// The user must pick one of several households (`gate.household`).
  public static let selectHousehold = LaunchRoute("selectHousehold")
}
