/// What the steps of a launch produced, by step id, for the app's first screen.
///
/// ```swift
/// let store = report.outputs.output(of: "store", as: StoreHandle.self)
/// ```
///
/// A step served by its fallback holds the fallback's output. Two values compare equal when
/// the same steps produced an output: the outputs themselves need not be `Equatable`.
package struct StepOutputs: Sendable, Equatable {
  // As the engine keeps them, by step index: building a dictionary for every launch would
  // cost every launch, and apps look up a handful of outputs.
  private var ids: [String]
  private var values: [(any Sendable)?]
  /// Where each step is in `ids`, made by the first `set` (or `indexSteps()`): a session
  /// stores outputs one at a time, as its steps succeed, and a search for each would make its
  /// launch quadratic in steps. An app reading a few outputs of a report never needs it.
  private var positions: [String: Int]?

  /// Outputs by step id.
  package init(_ values: [String: any Sendable] = [:]) {
    ids = Array(values.keys)
    self.values = ids.map { values[$0] }
  }

  /// The outputs of the steps with `ids`, in the same order; `nil` where a step produced none.
  init(ids: [String], values: [(any Sendable)?]) {
    self.ids = ids
    self.values = values
  }

  /// The output of `step` as a `T`; `nil` when the step produced none (yet) or another type.
  package func output<T>(of step: String, as type: T.Type = T.self) -> T? {
    guard let index = index(of: step) else { return nil }
    return values[index] as? T
  }

  /// The output of `step`, whatever its type.
  func value(of step: String) -> (any Sendable)? {
    guard let index = index(of: step) else { return nil }
    return values[index]
  }

  /// Indexes the steps by id, once: lookups after it take constant time, for a caller that
  /// looks up every step.
  mutating func indexSteps() {
    guard positions == nil else { return }
    positions = Dictionary(zip(ids, ids.indices), uniquingKeysWith: { first, _ in first })
  }

  private func index(of step: String) -> Int? {
    if let positions { return positions[step] }
    return ids.firstIndex(of: step)
  }

  /// The ids of the steps that produced an output.
  package var steps: Set<String> {
    Set(ids.indices.lazy.filter { values[$0] != nil }.map { ids[$0] })
  }

  /// Stores `value` as the output of `step`.
  mutating func set(_ value: any Sendable, for step: String) {
    indexSteps()
    if let index = positions?[step] {
      values[index] = value
    } else {
      positions?[step] = ids.count
      ids.append(step)
      values.append(value)
    }
  }

  /// Whether the same steps produced an output.
  package static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.steps == rhs.steps
  }
}

/// When a launch's splash screen gave way, by the manifest's `splash` rule.
package struct SplashTiming: Sendable, Equatable {
  /// When the content showed; `nil` when the launch routed or failed first.
  package var contentAt: Duration?
  /// When a skeleton replaced the splash; `nil` when none showed.
  package var skeletonFrom: Duration?

  /// Creates a record.
  package init(contentAt: Duration?, skeletonFrom: Duration?) {
    self.contentAt = contentAt
    self.skeletonFrom = skeletonFrom
  }

  /// Applies `policy` to a launch whose dismiss milestone was reached at `readyAt` (`nil` if
  /// never) and that ended at `endedAt` (a route, a failure or the end of the launch).
  package init(policy: SplashPolicy, readyAt: Duration?, endedAt: Duration) {
    let leaves = readyAt ?? endedAt
    contentAt = readyAt.map(policy.splashEnd(readyAt:))
    skeletonFrom = leaves > policy.skeletonDeadline ? policy.skeletonDeadline : nil
  }
}
