/// The command line of `orchestrate validate`.
package struct ValidateOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "validate",
    abstract: "Checks manifests and reports every problem, without running anything.",
    discussion:
      "Reads every file shipped with a manifest that a launch reads only when it needs it (every store.init migration, not only those a store lacks). Problems print compiler-style (file:line:column: error: ...). Exits 65 when a manifest is invalid, 66 when one cannot be read."
  )

  @Arguments("manifest", help: "Manifest files to check.")
  package var manifests: [String]

  package init() {}
}
