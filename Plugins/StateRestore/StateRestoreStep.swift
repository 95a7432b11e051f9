import Foundation
import LaunchOrchestrator

/// `state.restore`: hands the app the values it saved last session (the scrolled-to result,
/// the selected tab) from a small JSON file in the data folder, as a ``RestoredState``.
///
/// A missing, unreadable or oversized file is empty state and a note in the report, never a
/// failure; an unreadable one is moved aside first, so the app's next save does not replace
/// what could be recovered. The app saves with ``LaunchStateFile``.
public struct StateRestoreStep: StepPlugin {
  /// The kind name.
  public static let kind = "state.restore"
  /// What the step does.
  public static let summary =
    "Restores the values the app saved last session (scroll position, selected tab) from a JSON"
    + " state file; a missing or unreadable file is empty state and a note, never a failure."

  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter(
      "The state file the app saves with LaunchStateFile, in the data folder.", isPath: true,
      rewritesFile: true)
    var file = LaunchStateFile.defaultPath
    @Parameter(
      "Restore only these keys; others saved in the file are left out of the output.",
      nonEmpty: true)
    var keys: [String]?

    /// Every key of the default state file.
    public init() {}
  }

  private let file: String
  private let keys: [String]?

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) {
    file = parameters.file
    keys = parameters.keys
  }

  /// Reading a small file blocks briefly.
  public var isBlocking: Bool { true }

  /// Reads the state file.
  public func run(_ context: StepContext) async throws -> RestoredState {
    let stateFile = LaunchStateFile(url: context.resolve(file))
    var (state, notes) = stateFile.restore()
    if let keys {
      let saved = state.keys
      state = state.keeping(keys)
      let unsaved = keys.filter { !saved.contains($0) }
      if !saved.isEmpty, !unsaved.isEmpty {
        notes.append("nothing saved for \(unsaved.map { "'\($0)'" }.joined(separator: ", "))")
      }
    }
    if !state.isEmpty {
      let count = state.keys.count
      notes.append(
        "restored \(count) value\(count == 1 ? "" : "s") (\(state.keys.joined(separator: ", ")))"
          + " from '\(stateFile.url.path)'")
    } else if notes.isEmpty {
      notes.append("the saved state '\(stateFile.url.path)' holds no values")
    }
    for note in notes { context.log(note) }
    return state
  }
}
