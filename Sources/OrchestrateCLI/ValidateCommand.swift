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
    for path in options.manifests {
      do {
        let plan = try ManifestLoader(registry: registry).load(path: path)
        for warning in plan.warnings { console.out(warning.description) }
        warnings += plan.warnings.count
        console.out(
          "\(path): valid (\(plan.steps.count) steps, \(plan.milestones.count) milestones)")
      } catch {
        for diagnostic in error.diagnostics { console.out(diagnostic.description) }
        errors += error.errors.count
        warnings += error.diagnostics.count - error.errors.count
        if error.code == .unreadable { unreadable += 1 } else { invalid += 1 }
      }
    }
    let files = options.manifests.count
    console.out(
      "\(plural(errors, "error")), \(plural(warnings, "warning")) in \(plural(files, "manifest"))"
        + (invalid + unreadable > 0 ? "; \(invalid + unreadable) not valid." : "."))
    if unreadable > 0 { return .missingInput }
    return invalid > 0 ? .invalidManifest : .success
  }

  private func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
  }
}
