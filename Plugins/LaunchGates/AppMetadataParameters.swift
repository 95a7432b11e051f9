import LaunchOrchestrator

/// What a manifest gives the gates that read the app metadata file (`gate.maintenance` and
/// `gate.version`): one file holds what both look at, so both take it the same way.
public struct AppMetadataParameters: StepParameters {
  @Parameter(
    "The app metadata JSON file (isUnderMaintenance, maintenanceMessage, minimumVersion).",
    isPath: true)
  var metadata: String

  /// No file yet: a manifest must give one.
  public init() {}
}
