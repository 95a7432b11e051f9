import LaunchOrchestrator

/// `orchestrate plugins`: every step kind this build knows, with its parameters.
struct PluginsCommand: Command {
  let options: PluginsOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    for (index, plugin) in registry.descriptors.enumerated() {
      if index > 0 { console.out("") }
      console.out(plugin.summary.isEmpty ? plugin.kind : "\(plugin.kind): \(plugin.summary)")
      var notes: [String] = []
      if plugin.hasOutput {
        notes.append(
          "outputs \(plugin.outputTypeName)\(plugin.isCacheable ? ", which a 'cache' can keep" : "")"
        )
      }
      let required = plugin.inputs.filter(\.isRequired).map(\.typeName)
      if !required.isEmpty {
        notes.append("needs \(required.joined(separator: ", ")) from a dependency")
      }
      let fromApp = plugin.requirements.filter(\.isRequired).map(\.typeName)
      if !fromApp.isEmpty {
        notes.append("requires \(fromApp.joined(separator: ", ")) from the app")
      }
      for parameter in plugin.parameters where parameter.removesFiles {
        notes.append("removes files in the folder '\(parameter.name)' names")
      }
      for parameter in plugin.parameters where parameter.rewritesFile {
        notes.append("rewrites the file '\(parameter.name)' names, or moves it aside")
      }
      for parameter in plugin.parameters where !parameter.companions.isEmpty {
        let files = parameter.companions.map { "<\(parameter.name)>\($0)" }
        notes.append(
          "keeps \(files.joined(separator: ", ")) beside the file '\(parameter.name)' names")
      }
      for parameter in plugin.parameters {
        notes += parameter.requires.map { "'\(parameter.name)' needs '\($0)'" }
        notes += parameter.excludes.map { "'\(parameter.name)' cannot be used with '\($0)'" }
      }
      if !notes.isEmpty { console.out("  (\(notes.joined(separator: "; ")))") }
      if plugin.parameters.isEmpty { continue }
      let rows = plugin.parameters.map { parameter in
        [
          parameter.name, parameter.type.description,
          parameter.isRequired
            ? "required" : parameter.defaultValue.map { "default \($0)" } ?? "optional",
          parameter.summary,
        ]
      }
      for line in Table.render(rows) { console.out("    " + line) }
    }
    return .success
  }
}
