import Foundation
import LaunchOrchestrator

/// `gate.household`: ends the launch on `createHousehold` when the user has no household, or
/// `selectHousehold` when none of theirs is selected.
public struct HouseholdGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.household"
  /// What the step does.
  public static let summary =
    "Routes to 'createHousehold' with no householdIds, or 'selectHousehold' without a valid lastSelectedHouseholdId."

  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter("The profile JSON file (householdIds, lastSelectedHouseholdId).", isPath: true)
    var profile: String

    /// No file yet: a manifest must give one.
    public init() {}
  }

  private let profile: String

  /// Keeps the parameters.
  public init(parameters: Parameters) {
    profile = parameters.profile
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Routes or lets the launch go on.
  public func run(_ context: StepContext) async throws {
    let file = try GateFile.require(context.resolve(profile), what: "profile")
    let households = try file.strings("householdIds") ?? []
    guard !households.isEmpty else {
      context.log("the user belongs to no household")
      throw LaunchRoute.createHousehold
    }
    guard let selected = try file.string("lastSelectedHouseholdId"), households.contains(selected)
    else {
      context.log("none of the user's \(households.count) households is selected")
      throw LaunchRoute.selectHousehold
    }
  }
}
