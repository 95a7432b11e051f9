/// The command line of `orchestrate schema`: no arguments.
package struct SchemaOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "schema",
    abstract: "Prints a JSON Schema (draft 2020-12) for manifests, including each plugin's params.",
    discussion: """
      Point an editor at it ("$schema": "manifest.schema.json") to complete and check manifests \
      as you type. manifests/manifest.schema.json is this output for the built-in plugins.
      """)

  package init() {}
}
