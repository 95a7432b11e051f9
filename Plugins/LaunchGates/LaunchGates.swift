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
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "metadata", .path, required: true,
      "The app metadata JSON file (isUnderMaintenance, maintenanceMessage).")
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var metadata: String
  }

  private let metadata: String

  /// Keeps the parameters.
  public init(parameters: Parameters) {
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

/// `gate.session`: ends the launch on the `loginRequired` route when there is no signed-in
/// user or the session has expired.
public struct SessionGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.session"
  /// What the step does.
  public static let summary =
    "Routes to 'loginRequired' when the session file has no user or token, or has expired."
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "session", .path, required: true,
      "The session JSON file (userId, token, expiresAt as ISO 8601).")
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var session: String
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

/// `gate.household`: ends the launch on `createHousehold` when the user has no household, or
/// `selectHousehold` when none of theirs is selected.
public struct HouseholdGate: StepPlugin {
  /// The kind name.
  public static let kind = "gate.household"
  /// What the step does.
  public static let summary =
    "Routes to 'createHousehold' with no householdIds, or 'selectHousehold' without a valid lastSelectedHouseholdId."
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "profile", .path, required: true,
      "The profile JSON file (householdIds, lastSelectedHouseholdId).")
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var profile: String
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
