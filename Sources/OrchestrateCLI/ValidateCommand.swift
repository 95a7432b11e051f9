import Foundation
import LaunchJSON
import LaunchOrchestrator

/// `orchestrate validate <manifest>...`: checks manifests without running anything.
struct ValidateCommand: Command {
  let options: ValidateOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    var errors = 0
    var warnings = 0
    var invalid = 0
    var unreadable = 0
    var skipped = 0
    for (index, path) in options.manifests.enumerated() {
      // `validate manifests/*.json` also names the schema that sits beside the manifests.
      if Self.isJSONSchema(path) {
        console.out("\(path): skipped, a JSON Schema rather than a manifest")
        skipped += 1
        continue
      }
      do {
        // Every file shipped with the manifest, as a launch reads only those it needs.
        let plan = try ManifestLoader(registry: registry, checksShippedFiles: true).load(
          path: path)
        for warning in plan.warnings { console.out(warning.description) }
        warnings += plan.warnings.count
        console.out(
          "\(path): valid (\(Grammar.count(plan.steps.count, "step")), \(Grammar.count(plan.milestones.count, "milestone")))"
        )
        // Only the last manifest's plan is left to the exit: each earlier one is freed as the
        // loop goes on, so that `validate` of many manifests holds one plan at a time.
        if index == options.manifests.count - 1 { ExitKeeper.keep(plan) }
      } catch {
        for diagnostic in error.diagnostics { console.out(diagnostic.description) }
        errors += error.errors.count
        warnings += error.diagnostics.count - error.errors.count
        if error.code == .unreadable { unreadable += 1 } else { invalid += 1 }
      }
    }
    let files = options.manifests.count - skipped
    let skippedNote =
      skipped > 0 ? "; \(Grammar.count(skipped, "file")) skipped, not a manifest" : ""
    console.out(
      "\(Grammar.count(errors, "error")), \(Grammar.count(warnings, "warning")) in \(Grammar.count(files, "manifest"))"
        + skippedNote
        + (invalid + unreadable > 0 ? "; \(invalid + unreadable) not valid." : "."))
    if unreadable > 0 { return .missingInput }
    return invalid > 0 ? .invalidManifest : .success
  }

  /// Whether `path` holds a JSON Schema rather than a manifest, as
  /// ``ManifestSchema/isSchemaDocument(_:)`` tells them apart.
  private static func isJSONSchema(_ path: String) -> Bool {
    guard let data = FileManager.default.contents(atPath: path),
      let document = try? JSONParser.parse(Array(data))
    else { return false }
    return ManifestSchema.isSchemaDocument(document.root)
  }
}
