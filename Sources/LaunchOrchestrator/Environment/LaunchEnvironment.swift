/// Values the app hands to its launch, by type: its ``AppInfo``, an API client, a settings
/// object. Plugins declare the types they need in ``StepPlugin/requirements`` and read them
/// with ``StepContext/environment(_:)``.
///
/// ```swift
/// var environment = LaunchEnvironment()
/// environment[AppInfo.self] = AppInfo(version: "2.3.0", build: "41")
/// environment[APIClient.self] = client
/// let report = await session.run(plan, on: LaunchEngine(), environment: environment)
/// ```
public struct LaunchEnvironment: Sendable {
  private var values: [ObjectIdentifier: any Sendable] = [:]

  /// An empty environment.
  public init() {}

  /// The value of type `T`, if the app provided one.
  public subscript<T: Sendable>(_ type: T.Type) -> T? {
    get {
      // A missing value is `nil` without a cast: the run-time cast of an empty optional is
      // what a launch paid for each type it asked for and was not given.
      guard let value = values[ObjectIdentifier(type)] else { return nil }
      return value as? T
    }
    set { values[ObjectIdentifier(type)] = newValue }
  }

  /// Whether a value of the type with this identity was provided.
  func contains(_ type: ObjectIdentifier) -> Bool {
    values[type] != nil
  }

  /// This environment, with the manifest's `app` default when the app gave no ``AppInfo``.
  func withDefaults(of manifest: Manifest) -> LaunchEnvironment {
    guard self[AppInfo.self] == nil, let app = manifest.app else { return self }
    var filled = self
    filled[AppInfo.self] = app
    return filled
  }
}

/// A value a plugin reads from the ``LaunchEnvironment``.
public struct StepRequirement: Sendable {
  /// The type's identity.
  package let type: ObjectIdentifier
  // Named when a message or `orchestrate plugins` asks: a type's name is looked up through
  // its conformances, the first time, and plugins declare these in the registry every
  // launch builds before its first step.
  private let name: @Sendable () -> String
  /// The type's name, for messages and `orchestrate plugins`.
  package var typeName: String { name() }
  /// Whether the step cannot run without it; a missing required value fails the launch
  /// before any step starts.
  package let isRequired: Bool

  /// A value the step cannot run without.
  public static func required<T: Sendable>(_ type: T.Type) -> StepRequirement {
    StepRequirement(
      type: ObjectIdentifier(type), name: { String(describing: T.self) }, isRequired: true)
  }

  /// A value the step uses when the app provides it.
  public static func optional<T: Sendable>(_ type: T.Type) -> StepRequirement {
    StepRequirement(
      type: ObjectIdentifier(type), name: { String(describing: T.self) }, isRequired: false)
  }
}

/// A required environment value that the app did not provide, found before the launch starts.
package struct MissingRequirement: Sendable, Equatable, CustomStringConvertible {
  /// The step that requires it.
  package var step: String
  /// The step's plugin kind.
  package var plugin: String
  /// The missing type's name.
  package var typeName: String

  /// Creates a finding.
  package init(step: String, plugin: String, typeName: String) {
    self.step = step
    self.plugin = plugin
    self.typeName = typeName
  }

  /// `step 'version' (gate.version) requires AppInfo in the launch environment, ...`, for people.
  package var description: String {
    "step '\(step)' (\(plugin)) requires \(typeName) in the launch environment, and none was provided"
  }
}

extension LaunchPlan {
  /// The required environment values `environment` lacks, step by step, in manifest order.
  ///
  /// The manifest's `app` default counts as a provided ``AppInfo``.
  package func missingRequirements(in environment: LaunchEnvironment) -> [MissingRequirement] {
    let environment = environment.withDefaults(of: manifest)
    var missing: [MissingRequirement] = []
    for (index, requirement) in requiredValues where !environment.contains(requirement.type) {
      let finding = MissingRequirement(
        step: steps[index].id, plugin: steps[index].plugin, typeName: requirement.typeName)
      if !missing.contains(finding) { missing.append(finding) }
    }
    return missing
  }
}
