import Foundation
import LaunchJSON
import LaunchOrchestrator

/// `orchestrate cache clear <manifest>`: removes the saved outputs of the manifest's steps.
struct CacheCommand: Command {
  let options: CacheOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let (name, dataDirectory) = try cacheOwner()
    let removed: Int
    do {
      removed = try LaunchPlan.clearCache(manifestName: name, dataDirectory: dataDirectory)
    } catch {
      throw CLIError(message: "\(error)".capitalizedFirst + ".", exitCode: .cannotCreate)
    }
    let folder = dataDirectory.appendingPathComponent(".orchestrate-cache").path
    console.out("Removed \(Grammar.count(removed, "cached output")) of '\(name)' from '\(folder)'.")
    return .success
  }

  /// The manifest's name and data folder. A manifest that no longer loads (an update renamed
  /// a kind) still names its cache: only its `name` is read then, with a note.
  private func cacheOwner() throws(CLIError) -> (name: String, dataDirectory: URL) {
    let path = options.manifest
    let dataDirectory = options.dataDirectory.map { URL(fileURLWithPath: $0) }
    do {
      let plan = try ManifestLoader(registry: registry).load(
        path: path, dataDirectory: dataDirectory)
      return (plan.name, plan.dataDirectory)
    } catch  where error.code == .invalid {
      let url = URL(fileURLWithPath: path)
      let root = (try? Data(contentsOf: url)).flatMap { try? JSONParser.parse(Array($0)).root }
      guard let root, root.members != nil else {
        throw CLIError(
          message: "The manifest '\(path)' is not a JSON object, so its cache cannot be named.",
          exitCode: .invalidManifest)
      }
      let name = root["name"]?.stringValue ?? url.deletingPathExtension().lastPathComponent
      console.err(
        "Note: the manifest '\(path)' has errors ('orchestrate validate' lists them); clearing the cache of '\(name)' all the same."
      )
      return (name, dataDirectory ?? url.deletingLastPathComponent().standardizedFileURL)
    } catch {
      throw CLIError(
        message: ManifestLoading.summary(of: error, path: path), exitCode: .missingInput)
    }
  }
}
