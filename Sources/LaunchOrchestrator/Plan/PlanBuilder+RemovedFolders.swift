import Foundation
import LaunchJSON

extension PlanBuilder {
  /// Reports each folder a step removes files in (a parameter declared `removesFiles`) that
  /// holds, or is, a path another step or parameter is given, or the launch's own records and
  /// cache: `images.cleanup` given the folder of `store.init`'s migrations would delete them.
  /// Paths are compared as written, resolved and with `.` and `..` taken out; the plugin
  /// itself refuses what only a link or a second name reaches (the data folder, a store).
  mutating func checkRemovedFolders() {
    let parameters = manifest.pathParameters(registry: registry)
    guard parameters.contains(where: \.removesFiles) else { return }
    // Where each path resolves: the data folder first, then the manifest's folder, which a
    // plugin may read shipped files from.
    let places = parameters.map { parameter in
      [dataDirectory, manifestDirectory].map {
        StepContext.resolve(parameter.written, against: $0).path
      }
    }
    let record = LaunchRecordFile(dataDirectory: dataDirectory, manifestName: manifest.name)
    let owned = [
      (
        OutputCache(dataDirectory: dataDirectory, manifestName: manifest.name).folder.path,
        "the launch's cache"
      ),
      (record.folder.path, "the launch records"),
    ]
    for (position, folder) in parameters.enumerated() where folder.removesFiles {
      let root = places[position][0]
      func isInside(_ path: String) -> Bool { path == root || path.hasPrefix(root + "/") }
      var held: [String] = []
      // Another folder files are removed in is no file kept.
      for (other, parameter) in parameters.enumerated() where !parameter.removesFiles {
        guard places[other].contains(where: isInside) else { continue }
        held.append("'\(parameter.written)' (the \(parameter.owner(in: manifest)))")
      }
      for (path, what) in owned where isInside(path) { held.append(what) }
      guard let last = held.popLast() else { continue }
      let list = held.isEmpty ? last : held.joined(separator: ", ") + " and " + last
      var location = stepPath(folder.step)
      if folder.isFallback { location = location.appending("fallback") }
      diagnostics.report(
        "\(folder.kind) removes files in '\(folder.written)', where the launch keeps \(list); give it a folder that holds only what it may remove.",
        at: location.appending("params").appending(folder.name))
    }
  }
}
