import LaunchJSON
import LaunchOrchestrator

/// `orchestrate schema`: the manifest JSON Schema, including each plugin's params.
struct SchemaCommand: Command {
  let options: SchemaOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    console.json(JSONWriter.prettyPrinted(ManifestSchema.json(for: registry)))
    return .success
  }
}
