import LaunchOrchestrator

/// The typical times of earlier runs, per milestone and per step: the median, and how far runs
/// stray from it, to tell a real change from run-to-run noise.
///
/// The spread is the median absolute deviation (MAD): the median of each run's distance from
/// the median. Unlike a standard deviation, one odd run (a cold cache, a busy machine) barely
/// moves it. A change counts as beyond noise when it exceeds 3 × 1.4826 × MAD (for normally
/// distributed times, 1.4826 × MAD estimates the standard deviation, so this is about three
/// of them), and at least 1 ms, the precision times are printed with. With fewer than
/// ``minimumRuns`` runs the spread says too little, and nothing is judged.
package struct Baseline: Sendable {
  /// The fewest runs whose spread is trusted, for the noise flags and for `--regression`.
  package static let minimumRuns = 5
  /// Changes this small are never called beyond noise.
  package static let noiseFloor = Duration.milliseconds(1)

  /// One milestone's or step's times over the runs.
  package struct Figure: Sendable, Equatable {
    /// The median time.
    package var median: Duration
    /// The median absolute deviation from it.
    package var deviation: Duration
    /// How many runs had a time.
    package var runs: Int

    /// The largest change that is still run-to-run noise; `nil` with too few runs to say.
    package var noise: Duration? {
      guard runs >= Baseline.minimumRuns else { return nil }
      return max(deviation * (3 * 1.4826), Baseline.noiseFloor)
    }

    /// The figure of `times`; `nil` when there are none.
    package init?(_ times: [Duration]) {
      guard let median = Baseline.median(times) else { return nil }
      self.median = median
      deviation = Baseline.median(times.map { $0 > median ? $0 - median : median - $0 }) ?? .zero
      runs = times.count
    }
  }

  /// The reports of the runs the figures come from, oldest first.
  package var reports: [LaunchReport]
  /// Per milestone, in the order the newest run lists them; milestones never reached in any
  /// run are left out.
  package private(set) var milestones: [(name: String, figure: Figure)]
  /// Per step, how long it ran (end - start), in the order the newest run lists them.
  package private(set) var steps: [(id: String, figure: Figure)]

  /// The figures of the runs in `reports`.
  package init(_ reports: [LaunchReport]) {
    self.reports = reports
    let milestoneNames = Self.names(reports.map { $0.milestones.map(\.name) })
    milestones = milestoneNames.compactMap { name in
      let times = reports.compactMap { $0.time(ofMilestone: name) ?? nil }
      return Figure(times).map { (name, $0) }
    }
    let stepIds = Self.names(reports.map { $0.steps.map(\.id) })
    // Each report's steps by id, once: looking each id up in each list would take time
    // quadratic in the steps (100 s at 100,000 steps).
    let durations = reports.map { report in
      Dictionary(report.steps.map { ($0.id, $0.duration) }, uniquingKeysWith: { first, _ in first })
    }
    steps = stepIds.compactMap { id in
      Figure(durations.compactMap { $0[id] ?? nil }).map { (id, $0) }
    }
    milestoneIndex = Dictionary(
      milestones.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    stepIndex = Dictionary(
      steps.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
  }

  private var milestoneIndex: [String: Int] = [:]
  private var stepIndex: [String: Int] = [:]

  /// The figure of milestone `name`.
  package func milestone(_ name: String) -> Figure? {
    milestoneIndex[name].map { milestones[$0].figure }
  }

  /// The figure of step `id`.
  package func step(_ id: String) -> Figure? {
    stepIndex[id].map { steps[$0].figure }
  }

  /// A report whose steps each ran for their median, from time zero: what `plan --durations`
  /// reads a duration from.
  package func medianReport(named name: String) -> LaunchReport {
    LaunchReport(
      manifest: reports.last?.manifest ?? "", name: name, outcome: .succeeded, route: nil,
      duration: steps.map(\.figure.median).max() ?? .zero,
      milestones: milestones.map { LaunchReport.Milestone(name: $0.name, time: $0.figure.median) },
      criticalPath: [],
      steps: steps.map {
        LaunchReport.Step(
          id: $0.id, plugin: "", state: .succeeded, start: .zero, end: $0.figure.median,
          attempts: 1, usedFallback: false, error: nil)
      })
  }

  /// The runs whose times describe a normal launch: those that succeeded or were degraded.
  /// A failed, routed or interrupted launch stopped early, and its times would pull the
  /// median down.
  package static func isComparable(_ report: LaunchReport) -> Bool {
    report.outcome == .succeeded || report.outcome == .degraded
  }

  /// The median of `times`: the middle one, or the mean of the two middle ones.
  package static func median(_ times: [Duration]) -> Duration? {
    guard !times.isEmpty else { return nil }
    let sorted = times.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  /// Every name in the lists, the newest list's order first, then names only older ones have.
  private static func names(_ lists: [[String]]) -> [String] {
    var seen: Set<String> = []
    var result: [String] = []
    for list in lists.reversed() {
      for name in list where seen.insert(name).inserted { result.append(name) }
    }
    return result
  }
}
