import Foundation
import LaunchOrchestrator

/// `gate.version`: ends the launch on the `updateRequired` route when the app's version (its
/// ``AppInfo`` in the launch environment) is below the metadata's minimum.
public struct VersionGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.version"
  /// What the step does.
  public static let summary =
    "Routes to 'updateRequired' when the app's version (AppInfo) is below the metadata's minimumVersion."
  /// The app's version comes from the launch environment.
  public static let requirements: [StepRequirement] = [.required(AppInfo.self)]

  private let metadata: String

  /// Keeps the metadata file's path.
  public init(parameters: AppMetadataParameters) {
    metadata = parameters.metadata
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Routes or lets the launch go on.
  public func run(_ context: StepContext) async throws {
    let app = try context.environment(AppInfo.self)
    guard let appVersion = SemanticVersion(app.version) else {
      throw StepFailure("the app's version '\(app.version)' is not a version; write it like 1.9.2")
    }
    let file = try GateFile.require(context.resolve(metadata), what: "app metadata")
    guard let text = try file.string("minimumVersion") else { return }
    guard let minimum = SemanticVersion(text) else {
      throw StepFailure("'minimumVersion' in '\(file.url.path)' is not a version: '\(text)'")
    }
    guard appVersion < minimum else { return }
    context.log("version \(appVersion) is below the minimum \(minimum)")
    throw LaunchRoute.updateRequired
  }
}
