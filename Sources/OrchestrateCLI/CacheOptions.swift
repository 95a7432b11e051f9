/// The command line of `orchestrate cache`.
package struct CacheOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "cache", abstract: "Clears the saved outputs of a manifest's cached steps.",
    discussion: """
      Steps with a 'cache' save their output under the data folder, in \
      .orchestrate-cache/<manifest name>/, one file per step. 'clear' removes every file in \
      that folder (it is the cache's own), so the next launch runs every step; nothing outside \
      it is touched, and a folder found in it is left and named.
      """)

  @Argument("action", help: "What to do: 'clear'.")
  package var action: String

  @Argument("manifest", help: "The launch manifest (JSON).")
  package var manifest: String

  @Option(
    "--data-dir", valueName: "folder",
    help: "The data folder the launches ran with, if not the manifest's folder.", parse: .path)
  package var dataDirectory: String?

  package init() {}

  package func validate() throws(CLIError) {
    guard action == "clear" else {
      throw .invalidValue(
        "Unknown action '\(action)' for 'cache'; the one action is 'clear' (orchestrate cache clear <manifest>)."
      )
    }
  }
}
