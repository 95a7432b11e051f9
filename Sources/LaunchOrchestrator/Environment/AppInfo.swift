/// The app's identity: its version and build, as gates such as `gate.version` read it.
///
/// An app puts its own in the ``LaunchEnvironment``; a manifest's `app` object gives a
/// default for rehearsals outside the app, and `orchestrate run --app-version` overrides both.
public struct AppInfo: Sendable, Equatable, CustomStringConvertible {
  /// The version people see, such as `2.3.0`.
  public var version: String
  /// The build number, such as `41`.
  public var build: String?

  /// Creates an app's identity.
  public init(version: String, build: String? = nil) {
    self.version = version
    self.build = build
  }

  /// Reads `VERSION` or `VERSION+BUILD` (`2.3.0+41`); `nil` when the version is empty.
  public init?(parsing text: String) {
    let parts = text.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
    guard let version = parts.first, !version.isEmpty else { return nil }
    let build = parts.count > 1 ? String(parts[1]) : nil
    guard build?.isEmpty != true else { return nil }
    self.init(version: String(version), build: build)
  }

  /// `VERSION` or `VERSION+BUILD`.
  public var description: String { build.map { "\(version)+\($0)" } ?? version }
}
