import LaunchOrchestrator

extension HistoryFolder {
  /// The comparable runs' ``Baseline``, and notes on what it leaves out and what it mixes.
  ///
  /// Runs of another version of the manifest (its SHA-256 differs from `manifestHash`) count
  /// in the median with a note, not left out: a changed manifest is exactly what a comparison
  /// with the history is for, and leaving them out would empty the history at every edit.
  /// Runs from another machine count too, with a note, since a history usually comes from one.
  /// - Parameters:
  ///   - manifestHash: the SHA-256 of the manifest being compared, when known.
  ///   - machine: the machine of the run being compared, when known.
  ///   - excluding: the file name of an entry not to count (the report being compared).
  ///   - launch: the name of the launch being compared, when known: runs of other launches
  ///     (another manifest's `name`) are left out, since their steps and times are another's.
  package func baseline(
    manifestHash: String? = nil, machine: Machine? = nil, excluding: String? = nil,
    launch: String? = nil, kind: String? = nil
  ) -> (baseline: Baseline, notes: [String]) {
    var notes = unreadable.map {
      "Note: skipped '\(file($0.name))' in the history: \($0.reason)."
    }
    let counted = entries.filter { $0.name != excluding }.map(\.entry)
    var runs = counted.filter { Baseline.isComparable($0.report) }
    let left = counted.count - runs.count
    if left > 0 {
      notes.append(
        "Note: \(Grammar.count(left, "run")) in '\(path)' \(left == 1 ? "is" : "are") left out of the median: \(left == 1 ? "it" : "they") failed, \(left == 1 ? "was" : "were") routed or interrupted, and stopped early."
      )
    }
    if let launch {
      let others = runs.filter { $0.report.name != launch }.count
      if others > 0 {
        runs.removeAll { $0.report.name != launch }
        notes.append(
          "Note: \(Grammar.count(others, "run")) in '\(path)' \(others == 1 ? "is" : "are") of another launch than '\(launch)' and left out\(runs.isEmpty ? "; no run of this launch is left to compare with" : "")."
        )
      }
    }
    if let kind { keepRuns(of: kind, in: &runs, notes: &notes) }
    if let manifestHash {
      let other = runs.filter { $0.manifestHash != manifestHash }.count
      if other > 0 {
        notes.append(
          "Note: \(other) of the \(Grammar.count(runs.count, "run")) in '\(path)' ran another version of the manifest (its SHA-256 differs); \(other == 1 ? "it counts" : "they count") in the median all the same, since a changed manifest is what the comparison measures."
        )
      }
    } else {
      let versions = Set(runs.map(\.manifestHash)).count
      if versions > 1 {
        notes.append(
          "Note: the runs in '\(path)' ran \(versions) versions of the manifest (by SHA-256); all count in the median."
        )
      }
    }
    if let machine {
      let other = runs.filter { $0.machine != machine }
      if !other.isEmpty {
        notes.append(
          "Note: \(other.count) of the \(Grammar.count(runs.count, "run")) in '\(path)' ran on another machine than \(machine.description); times from different machines differ for reasons of their own."
        )
      }
    } else {
      var machines: [Machine] = []
      for run in runs where !machines.contains(run.machine) { machines.append(run.machine) }
      if machines.count > 1 {
        notes.append(
          "Note: the runs in '\(path)' come from \(machines.count) machines (\(machines.map(\.description).joined(separator: "; "))); times from different machines differ for reasons of their own."
        )
      }
    }
    var launches: [String] = []
    for run in runs where !launches.contains(run.report.name) { launches.append(run.report.name) }
    if launches.count > 1 {
      notes.append(
        "Note: the runs in '\(path)' are of \(launches.count) launches (\(launches.map { "'\($0)'" }.joined(separator: ", "))); their steps and milestones are matched by name."
      )
    }
    return (Baseline(runs.map(\.report)), notes)
  }

  /// Leaves out the runs of another kind of launch than `kind` (``LaunchReport/launchKind``):
  /// a first launch or one woken for a background task is not timed like an ordinary one.
  private func keepRuns(of kind: String, in runs: inout [HistoryEntry], notes: inout [String]) {
    let others = runs.filter { $0.report.launchKind != kind }.count
    guard others > 0 else { return }
    runs.removeAll { $0.report.launchKind != kind }
    notes.append(
      "Note: \(Grammar.count(others, "run")) in '\(path)' \(others == 1 ? "is" : "are") of another kind of launch than this one (\(kind)) and left out\(runs.isEmpty ? "; no run of this kind is left to compare with" : "")."
    )
  }

  /// The path of entry `name` in the folder, as the user would type it.
  func file(_ name: String) -> String {
    path.hasSuffix("/") ? path + name : path + "/" + name
  }
}
