import Foundation
import LaunchOrchestrator

/// `orchestrate cache clear <manifest>`: removes the saved outputs of the manifest's steps.
struct CacheCommand: Command {
  let options: CacheOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let plan = try ManifestLoading(registry: registry, console: console).load(
      options.manifest, dataDirectory: options.dataDirectory)
    let removed: Int
    do {
      removed = try plan.clearCache()
    } catch {
      throw CLIError(message: "\(error)".capitalizedFirst + ".", exitCode: .cannotCreate)
    }
    console.out(
      "Removed \(Grammar.count(removed, "cached output")) from '\(plan.cacheDirectory.path)'.")
    return .success
  }
}
