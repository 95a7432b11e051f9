/// What the app shows while it launches, by the manifest's `splash` rule (`minimum`,
/// `skeletonAfter`, `dismissOn`): the splash, a skeleton, the content, a route's screen, a
/// failure, or nothing after the app cancelled the launch.
public enum LaunchScreen: Sendable, Equatable {
  /// The splash screen.
  case splash
  /// A placeholder of the first screen: the content is late.
  case skeleton
  /// The first screen with its content: the dismiss milestone was reached.
  case content
  /// The screen of the route a step ended the launch with (maintenance, update, login...).
  case routed(LaunchRoute)
  /// The launch failed: show ``LaunchFailure/userMessage``, branch on its
  /// ``LaunchFailure/kind`` or ``LaunchFailure/underlying``.
  case failed(LaunchFailure)
  /// The app cancelled the launch (``LaunchSession/cancel()``): not a failure, so no error.
  case cancelled

  /// Whether the splash is gone for good: content, a route or a failure.
  package var isSettled: Bool {
    switch self {
    case .splash, .skeleton: false
    case .content, .routed, .failed, .cancelled: true
    }
  }
}
