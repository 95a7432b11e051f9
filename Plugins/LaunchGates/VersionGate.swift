import Foundation
import LaunchOrchestrator

/// `gate.version`: ends the launch on the `updateRequired` route when this app's version is
/// below the metadata's minimum.
public struct VersionGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.version"
  /// What the step does.
  public static let summary =
    "Routes to 'updateRequired' when appVersion is below the metadata's minimumVersion."
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init("metadata", .path, required: true, "The app metadata JSON file (minimumVersion)."),
    .init("appVersion", .string, required: true, "This build's version, such as 1.9.2."),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var metadata: String
    var appVersion: String
  }

  private let metadata: String
  private let appVersion: SemanticVersion

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    metadata = parameters.metadata
    guard let version = SemanticVersion(parameters.appVersion) else {
      throw ParameterError(
        "appVersion", "'\(parameters.appVersion)' is not a version; write it like 1.9.2.")
    }
    appVersion = version
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Routes or lets the launch go on.
  public func run(_ context: StepContext) async throws {
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
