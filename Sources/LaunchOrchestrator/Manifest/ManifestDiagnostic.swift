import LaunchJSON

/// One problem found in a manifest, located as precisely as the input allows.
public struct ManifestDiagnostic: Sendable, Hashable, CustomStringConvertible {
  /// Whether the problem stops the manifest from loading.
  public enum Severity: String, Sendable {
    /// The manifest cannot be used.
    case error
    /// The manifest loads, but probably does not do what its author wants.
    case warning
  }

  /// Whether this is an error or a warning.
  public var severity: Severity
  /// The manifest file as the user named it.
  public var file: String
  /// Where in the document, such as `steps[3].dependsOn[0]`: a pure JSON path, for tools.
  package var path: JSONPath
  /// The id of the step the problem is in, when ``path`` is inside a step whose id could be
  /// read; people find a step by its id, not by counting array elements.
  public var step: String?
  /// The line and column, when known.
  package var position: SourcePosition?
  /// What is wrong and what to do about it.
  public var message: String

  /// Creates a diagnostic.
  package init(
    severity: Severity = .error, file: String, path: JSONPath, step: String? = nil,
    position: SourcePosition? = nil, message: String
  ) {
    self.severity = severity
    self.file = file
    self.path = path
    self.step = step
    self.position = position
    self.message = message
  }

  /// Compiler style, the step named by its id when known:
  /// `app.json:12:7: error: step 'songs' (steps[3].dependsOn[0]): unknown step 'stor'.`
  public var description: String {
    let location = position.map { "\(file):\($0.line):\($0.column)" } ?? file
    let place =
      switch (step, path.components.isEmpty) {
      case (let step?, _): "step '\(step)' (\(path)): "
      case (nil, true): ""
      case (nil, false): "\(path): "
      }
    return "\(location): \(severity.rawValue): \(place)\(message)"
  }
}

/// The error thrown when a manifest cannot be loaded: every problem found, not just the first.
public struct ManifestError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is.
  public struct Code: Sendable, Hashable {
    fileprivate let name: String
    /// The file does not exist or cannot be read.
    public static let unreadable = Code(name: "unreadable")
    /// The file was read but is not a valid manifest.
    public static let invalid = Code(name: "invalid")
  }

  /// Whether the file could not be read or was invalid.
  public var code: Code
  /// The problems found, errors and warnings, in document order.
  public var diagnostics: [ManifestDiagnostic]

  /// Creates a manifest error.
  package init(code: Code, diagnostics: [ManifestDiagnostic]) {
    self.code = code
    self.diagnostics = diagnostics
  }

  /// The errors among the diagnostics.
  package var errors: [ManifestDiagnostic] { diagnostics.filter { $0.severity == .error } }

  /// Every diagnostic, one per line.
  public var description: String {
    diagnostics.map(\.description).joined(separator: "\n")
  }
}

#if canImport(Foundation)
  import Foundation

  extension ManifestError: LocalizedError {
    /// Every problem, one compiler-style line each, for apps that log `localizedDescription`.
    public var errorDescription: String? { description }
  }
#endif
