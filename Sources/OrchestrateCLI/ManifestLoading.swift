import Foundation
import LaunchOrchestrator

/// Loads a manifest for a command, printing its problems the way compilers do.
struct ManifestLoading {
  let registry: PluginRegistry
  let console: Console

  /// The plan, with warnings printed to stderr; or a ``CLIError`` after printing every problem.
  /// Relative data paths resolve against `dataDirectory`, or the manifest's folder.
  func load(_ path: String, dataDirectory: String? = nil) throws(CLIError) -> LaunchPlan {
    do {
      var loader = ManifestLoader(registry: registry)
      // A rehearsal removes files as the launch does.
      loader.checksSharedPaths = true
      let plan = try loader.load(
        path: path, dataDirectory: dataDirectory.map { URL(fileURLWithPath: $0) })
      for warning in plan.warnings { console.err(warning.description) }
      return plan
    } catch {
      if error.code == .invalid {
        for diagnostic in error.diagnostics { console.err(diagnostic.description) }
      }
      throw CLIError(
        message: Self.summary(of: error, path: path),
        exitCode: error.code == .unreadable ? .missingInput : .invalidManifest)
    }
  }

  static func summary(of error: ManifestError, path: String) -> String {
    if error.code == .unreadable {
      return error.diagnostics.first?.message.capitalizedFirst ?? "Cannot read '\(path)'."
    }
    let count = error.errors.count
    return
      "The manifest '\(path)' has \(count) \(count == 1 ? "error" : "errors"); nothing was run."
  }
}

extension String {
  var capitalizedFirst: String {
    guard let first else { return self }
    return first.uppercased() + dropFirst()
  }
}
