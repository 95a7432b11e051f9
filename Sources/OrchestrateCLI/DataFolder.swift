import Foundation

/// The `--data-dir` of `run` and `plan`, its help said once and its check done once: the
/// folder a launch's data paths and its launch record are in.
enum DataFolder {
  static let help =
    "Resolve relative data paths in params against this folder, not the manifest's, and keep the launch record there."

  /// `folder`, which must be an existing folder: data written elsewhere than asked would be
  /// lost to the user, and a record read elsewhere would predict another app's launch.
  static func checked(_ folder: String?, option: ArgumentDeclaration) throws(CLIError) -> String? {
    guard let folder else { return nil }
    var isFolder: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder)
    guard exists, isFolder.boolValue else {
      let problem =
        exists ? "is a file, not a folder; name a folder" : "does not exist; create it first"
      throw CLIError(
        message: "The data folder '\(folder)' given to '\(option.name)' \(problem).",
        exitCode: .missingInput)
    }
    return folder
  }
}
