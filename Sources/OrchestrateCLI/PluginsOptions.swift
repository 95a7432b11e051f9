/// The command line of `orchestrate plugins`: no arguments.
package struct PluginsOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "plugins", abstract: "Lists the step kinds this build knows, with their parameters.")

  package init() {}
}
