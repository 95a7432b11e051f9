import LaunchOrchestrator

/// `orchestrate validate <manifest>...`: checks manifests without running anything.
struct ValidateCommand: Command {
  static let spec = CommandSpec(
    name: "validate",
    abstract: "Checks manifests and reports every problem, without running anything.",
    discussion:
      "Problems print compiler-style (file:line:column: error: ...). Exits 65 when a manifest is invalid, 66 when one cannot be read.",
    arguments: [.init(name: "manifest", help: "Manifest files to check.", repeating: true)])

  let arguments: ParsedArguments
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    guard !arguments.positionals.isEmpty else {
      throw .usage("Missing expected argument '<manifest>'.", command: Self.spec)
    }
    var errors = 0
    var warnings = 0
    var invalid = 0
    var unreadable = 0
    for path in arguments.positionals {
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
    let files = arguments.positionals.count
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
