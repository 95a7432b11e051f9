import LaunchOrchestrator

/// `orchestrate schema`: the manifest JSON Schema, including each plugin's params.
struct SchemaCommand: Command {
  static let spec = CommandSpec(
    name: "schema",
    abstract: "Prints a JSON Schema (draft 2020-12) for manifests, including each plugin's params.",
    discussion: """
      Point an editor at it ("$schema": "manifest.schema.json") to complete and check manifests \
      as you type. manifests/manifest.schema.json is this output for the built-in plugins.
      """)

  let arguments: ParsedArguments
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    try Self.noArguments(arguments)
    console.write(JSONWriter.prettyPrinted(ManifestSchema.json(for: registry)))
    return .success
  }
}
