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

  /// Reads `VERSION` or `VERSION+BUILD` (`2.3.0+41`); `nil` when the version does not look
  /// like one (see ``looksLikeVersion(_:)``) or the build is empty.
  package init?(parsing text: String) {
    let parts = text.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
    guard let version = parts.first, Self.looksLikeVersion(String(version)) else { return nil }
    let build = parts.count > 1 ? String(parts[1]) : nil
    guard build?.isEmpty != true else { return nil }
    self.init(version: String(version), build: build)
  }

  /// Whether `text` looks like a version people write: a digit first, then digits, letters,
  /// dots and dashes, never two separators in a row nor one at the end (`1.10.0`, `2.3`,
  /// `1.2.0-beta.2`). What a gate makes of it is the gate's business; this only catches a
  /// value that cannot be a version at all (`banana`, `1..0`, `1.`).
  package static func looksLikeVersion(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, ("0"..."9").contains(first) else { return false }
    var afterSeparator = false
    for scalar in text.unicodeScalars {
      switch scalar {
      case "0"..."9", "a"..."z", "A"..."Z":
        afterSeparator = false
      case ".", "-":
        if afterSeparator { return false }
        afterSeparator = true
      default:
        return false
      }
    }
    return !afterSeparator
  }

  /// ``looksLikeVersion(_:)`` as a regular expression, for the manifest's JSON Schema (a test
  /// checks that they agree).
  package static let versionPattern = "^[0-9][0-9A-Za-z]*(?:[.-][0-9A-Za-z]+)*$"

  /// `VERSION` or `VERSION+BUILD`.
  public var description: String { build.map { "\(version)+\($0)" } ?? version }
}
