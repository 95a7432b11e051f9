import Foundation
import LaunchOrchestrator

/// `gate.session`: ends the launch on the `loginRequired` route when there is no signed-in
/// user or the session has expired.
public struct SessionGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.session"
  /// What the step does.
  public static let summary =
    "Routes to 'loginRequired' when the session file has no user or token, or has expired."

  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter("The session JSON file (userId, token, expiresAt as ISO 8601).", isPath: true)
    var session: String

    /// No file yet: a manifest must give one.
    public init() {}
  }

  private let session: String

  /// Keeps the parameters.
  public init(parameters: Parameters) {
    session = parameters.session
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Routes or lets the launch go on.
  public func run(_ context: StepContext) async throws {
    guard let file = try GateFile.read(context.resolve(session)) else {
      context.log("no session; the user must log in")
      throw LaunchRoute.loginRequired
    }
    guard let user = try file.string("userId"), !user.isEmpty, let token = try file.string("token"),
      !token.isEmpty
    else {
      context.log("the session has no user or token; the user must log in")
      throw LaunchRoute.loginRequired
    }
    if let text = try file.string("expiresAt") {
      guard let expiry = try? Date(text, strategy: .iso8601) else {
        throw StepFailure("'expiresAt' in '\(file.url.path)' is not an ISO 8601 date: '\(text)'")
      }
      if expiry <= Date() {
        context.log("the session of '\(user)' expired at \(text); the user must log in")
        throw LaunchRoute.loginRequired
      }
    }
  }
}
