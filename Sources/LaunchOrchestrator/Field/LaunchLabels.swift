/// What a fleet of launches is sliced by beyond the app's version and the launch's context:
/// the experiment arm the user is in and the class of device, as the app names them.
///
/// The app puts them in the environment; each report carries them
/// (``LaunchReport/labels``), and `orchestrate stats --by arm` or `--by device` groups by them:
///
/// ```swift
/// environment[LaunchLabels.self] = LaunchLabels(arm: "deferred-store", device: "iPhone12")
/// ```
public struct LaunchLabels: Sendable, Equatable {
  /// The experiment arm, such as `control` or `deferred-store`; `nil` outside experiments.
  public var arm: String?
  /// The class of device, such as `iPhone12` or `low-memory`, as coarse as the app wants.
  public var device: String?

  /// Labels for the launch; either may be left out.
  public init(arm: String? = nil, device: String? = nil) {
    self.arm = arm
    self.device = device
  }
}
