import LaunchOrchestrator

/// What `orchestrate stats --by` splits the figures by.
package enum StatsGrouping: String, CaseIterable, Sendable {
  case version, reason, arm, device, firstLaunch

  /// The group of `report`; `unknown` when the report does not say (or says `""`).
  func key(of report: ScannedReport) -> String {
    let key: String? =
      switch self {
      case .version: report.version
      case .reason: report.reason
      case .arm: report.arm
      case .device: report.device
      case .firstLaunch: report.firstLaunch.map { $0 ? "first" : "later" }
      }
    guard let key, !key.isEmpty else { return StatsGroup.unknown }
    return key
  }

  /// Sorts group names: versions by their numbers (`1.10` after `1.9`), others by name,
  /// `unknown` last.
  func sorted(_ names: [String]) -> [String] {
    names.sorted { left, right in
      if (left == StatsGroup.unknown) != (right == StatsGroup.unknown) {
        return right == StatsGroup.unknown
      }
      guard self == .version else { return left < right }
      return Self.versionOrder(left, right)
    }
  }

  private static func versionOrder(_ left: String, _ right: String) -> Bool {
    let a = left.split(whereSeparator: { $0 == "." || $0 == "-" || $0 == "+" })
    let b = right.split(whereSeparator: { $0 == "." || $0 == "-" || $0 == "+" })
    for (x, y) in zip(a, b) where x != y {
      if let m = Int(x), let n = Int(y) { return m < n }
      return x < y
    }
    return a.count < b.count
  }
}

/// Where a name was first seen in the input, so milestones and steps are listed in the order
/// reports give them, whichever thread read them first.
struct FirstSeen: Comparable, Sendable {
  var item: Int
  var offset: Int
  var position: Int

  static func < (a: Self, b: Self) -> Bool {
    (a.item, a.offset, a.position) < (b.item, b.offset, b.position)
  }
}

/// The figures of one group of reports (or of all of them).
struct StatsGroup: Sendable {
  static let unknown = "unknown"

  struct Milestone: Sendable {
    var times = QuantileSketch()
    /// Reports that name the milestone without reaching it.
    var missed = 0
    var firstSeen: FirstSeen
  }

  struct Step: Sendable {
    var durations = QuantileSketch()
    var waits = QuantileSketch()
    /// Reports in which it never started.
    var notStarted = 0
    var firstSeen: FirstSeen
  }

  var reports = 0
  var outcomes: [LaunchOutcome: Int] = [:]
  var milestones: [String: Milestone] = [:]
  var steps: [String: Step] = [:]
  /// Deferred steps that started, and those of them that succeeded.
  var deferredStarted = 0
  var deferredSucceeded = 0

  mutating func add(_ report: ScannedReport, at seen: FirstSeen) {
    reports += 1
    if let outcome = report.outcome { outcomes[outcome, default: 0] += 1 }
    for (position, milestone) in report.milestones.enumerated() {
      var seen = seen
      seen.position = position
      if let time = milestone.time {
        milestones[milestone.name, default: Milestone(firstSeen: seen)].times.add(time)
      } else {
        milestones[milestone.name, default: Milestone(firstSeen: seen)].missed += 1
      }
    }
    for (position, step) in report.steps.enumerated() {
      var seen = seen
      seen.position = position
      guard let start = step.start, let end = step.end else {
        steps[step.id, default: Step(firstSeen: seen)].notStarted += 1
        continue
      }
      let wait = step.ready.map { max(0, start - $0) }
      // One lookup for both series.
      let update = { (line: inout Step) in
        line.durations.add(max(0, end - start))
        if let wait { line.waits.add(wait) }
      }
      update(&steps[step.id, default: Step(firstSeen: seen)])
      if step.isDeferred {
        deferredStarted += 1
        if step.state == .succeeded || step.state == .cached { deferredSucceeded += 1 }
      }
    }
  }

  mutating func merge(_ other: StatsGroup) {
    reports += other.reports
    outcomes.merge(other.outcomes, uniquingKeysWith: +)
    for (name, theirs) in other.milestones {
      guard var mine = milestones[name] else {
        milestones[name] = theirs
        continue
      }
      mine.times.merge(theirs.times)
      mine.missed += theirs.missed
      mine.firstSeen = min(mine.firstSeen, theirs.firstSeen)
      milestones[name] = mine
    }
    for (id, theirs) in other.steps {
      guard var mine = steps[id] else {
        steps[id] = theirs
        continue
      }
      mine.durations.merge(theirs.durations)
      mine.waits.merge(theirs.waits)
      mine.notStarted += theirs.notStarted
      mine.firstSeen = min(mine.firstSeen, theirs.firstSeen)
      steps[id] = mine
    }
    deferredStarted += other.deferredStarted
    deferredSucceeded += other.deferredSucceeded
  }

  /// The share of reports with `outcome`.
  func share(_ outcome: LaunchOutcome) -> Double {
    reports == 0 ? 0 : Double(outcomes[outcome, default: 0]) / Double(reports)
  }

  /// Deferred steps that succeeded among those that started; `nil` when none started.
  var backgroundCompletion: Double? {
    deferredStarted == 0 ? nil : Double(deferredSucceeded) / Double(deferredStarted)
  }

  var orderedMilestones: [(name: String, milestone: Milestone)] {
    milestones.sorted { $0.value.firstSeen < $1.value.firstSeen }.map { ($0.key, $0.value) }
  }

  var orderedSteps: [(id: String, step: Step)] {
    steps.sorted { $0.value.firstSeen < $1.value.firstSeen }.map { ($0.key, $0.value) }
  }
}

/// Everything `stats` gathered: all reports, each group, and what it skipped.
struct FleetStats: Sendable {
  var all = StatsGroup()
  var groups: [String: StatsGroup] = [:]
  /// Files (or lines) skipped, and the first few in the input's order with why.
  var skipped = 0
  private var examples: [(seen: FirstSeen, text: String)] = []
  var filesRead = 0
  static let examplesKept = 5

  /// The first few files or lines skipped, with why.
  var skippedExamples: [String] { examples.map(\.text) }

  mutating func add(_ report: ScannedReport, at seen: FirstSeen, grouping: StatsGrouping?) {
    all.add(report, at: seen)
    if let grouping {
      groups[grouping.key(of: report), default: StatsGroup()].add(report, at: seen)
    }
  }

  mutating func skip(_ what: String, at seen: FirstSeen) {
    skipped += 1
    keep([(seen, what)])
  }

  private mutating func keep(_ more: [(seen: FirstSeen, text: String)]) {
    examples = Array((examples + more).sorted { $0.seen < $1.seen }.prefix(Self.examplesKept))
  }

  mutating func merge(_ other: FleetStats) {
    all.merge(other.all)
    for (key, group) in other.groups { groups[key, default: StatsGroup()].merge(group) }
    skipped += other.skipped
    filesRead += other.filesRead
    keep(other.examples)
  }
}
