import Foundation
import LaunchOrchestrator

/// `gate.maintenance`: ends the launch on the `maintenance` route while the app metadata
/// says the service is under maintenance.
public struct MaintenanceGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.maintenance"
  /// What the step does.
  public static let summary =
    "Routes to 'maintenance' when the app metadata has \"isUnderMaintenance\": true."

  private let metadata: String

  /// Keeps the metadata file's path.
  public init(parameters: AppMetadataParameters) {
    metadata = parameters.metadata
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Routes or lets the launch go on.
  public func run(_ context: StepContext) async throws {
    let file = try GateFile.require(context.resolve(metadata), what: "app metadata")
    guard try file.bool("isUnderMaintenance") == true else { return }
    context.log(try file.string("maintenanceMessage") ?? "the service is under maintenance")
    throw LaunchRoute.maintenance
  }
}
