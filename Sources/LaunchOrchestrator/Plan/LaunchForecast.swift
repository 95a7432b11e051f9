/// Predicts a launch without running it: the scheduler's own rules, played out in virtual time
/// with each step taking a predicted duration.
///
/// Because it drives the same state machine as the engine, a forecast honours priorities,
/// the concurrency limit, delays, deferral and timeouts exactly as a real launch would.
package enum LaunchForecast {
  /// Where each step's predicted duration came from.
  package enum Source: String, Sendable {
    /// A step's time in an earlier report.
    case report
    /// The manifest's `expectedDuration` hint.
    case hint
    /// Neither: the step counts as taking no time.
    case none
  }

  /// A predicted launch: a report of what would happen, and where each duration came from.
  package struct Prediction: Sendable {
    /// The launch as it would go if every step took its predicted time and succeeded.
    package var report: LaunchReport
    /// The predicted duration of each step, in manifest order.
    package var durations: [Duration]
    /// Where each duration came from, in manifest order.
    package var sources: [Source]
  }

  /// Predicts `plan` with durations from `earlier` (a report of a previous run) where it has
  /// them, `expectedDuration` hints otherwise, and zero for the rest.
  package static func predict(
    _ plan: LaunchPlan, durations earlier: LaunchReport? = nil, maxConcurrency: Int? = nil
  ) -> Prediction {
    predict(plan, durations: earlier, maxConcurrency: maxConcurrency, context: nil, version: nil)
  }

  /// Predicts `plan` as ``predict(_:durations:maxConcurrency:)`` does, in `context`: the
  /// steps it keeps out are skipped, run-once steps judged by the record in the data folder
  /// (read, never written) for the app version `version`.
  package static func predict(
    _ plan: LaunchPlan, durations earlier: LaunchReport? = nil, maxConcurrency: Int? = nil,
    context: LaunchContext?, version: String?
  ) -> Prediction {
    var durations: [Duration] = []
    var sources: [Source] = []
    // The report's steps by id, once: a lookup in its list per step would be quadratic.
    let measuredByID = Dictionary(
      (earlier?.steps ?? []).map { ($0.id, attemptDuration(of: $0)) },
      uniquingKeysWith: { first, _ in first })
    durations.reserveCapacity(plan.steps.count)
    sources.reserveCapacity(plan.steps.count)
    // Steps read in place: a copy of each would retain every list it holds.
    for index in plan.steps.indices {
      if !measuredByID.isEmpty, let measured = measuredByID[plan.steps[index].id] ?? nil {
        durations.append(measured)
        sources.append(.report)
      } else if let hint = plan.steps[index].expectedDuration {
        durations.append(hint)
        sources.append(.hint)
      } else {
        durations.append(.zero)
        sources.append(.none)
      }
    }

    var scheduler = LaunchScheduler(
      plan: plan, maxConcurrency: maxConcurrency ?? plan.manifest.maxConcurrency,
      gracePeriod: .zero, recordsEvents: false)
    var completions = BinaryHeap<Completion>()
    var now = Duration.zero
    // Drained in place: taking them would make an array for each step's completion.
    func collect() {
      scheduler.drainActions { action in
        guard case .start(let attempt) = action else { return }
        completions.insert(Completion(time: now + durations[attempt.step], token: attempt.token))
      }
    }
    let skipped: [ContextSkip] =
      context.map { context in
        let record =
          context.isFirstLaunch
          ? LaunchRecord()
          : LaunchRecordFile(dataDirectory: plan.dataDirectory, manifestName: plan.name).read()
            .record ?? LaunchRecord()
        return ContextKeeper.skips(of: plan, in: context, record: record, version: version)
      } ?? []
    scheduler.start(at: .zero, skipped: skipped)
    // A forecast sends no signal, as `orchestrate run` without `--signal` sends none and says
    // at once that none will come: the steps waiting for one are skipped as soon as nothing
    // else holds them, and the forecast says why.
    scheduler.closeSignals(at: .zero)
    collect()
    while !scheduler.isFinished {
      let deadline = scheduler.nextDeadline()
      if let next = completions.min, deadline.map({ next.time <= $0 }) ?? true {
        _ = completions.popMin()
        now = next.time
        scheduler.attemptFinished(token: next.token, result: .succeeded, at: now)
        collect()
      } else if let deadline {
        now = deadline
        scheduler.advance(to: now)
        collect()
      } else {
        break
      }
    }
    var report = LaunchReport(plan: plan, scheduler: scheduler, duration: now)
    report.context = context
    return Prediction(report: report, durations: durations, sources: sources)
  }

  /// How long the attempt that ended `step` took in an earlier report: its last attempt's
  /// work, or its refresh's last for a cached step (served in no time, its own time is the
  /// refresh's). A forecast's attempts all succeed at once: taking the step's whole span (its
  /// failed attempts, backoffs and fallback) for one attempt would run it into its timeout. The
  /// span, for a report without the attempts' work.
  private static func attemptDuration(of step: LaunchReport.Step) -> Duration? {
    if let refresh = step.refresh {
      if let last = refresh.work.last { return last.end - last.start }
      guard let start = refresh.start, let end = refresh.end else { return step.duration }
      return end - start
    }
    guard let last = step.work.last else { return step.duration }
    return last.end - last.start
  }

  private struct Completion: Comparable {
    let time: Duration
    let token: Int

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.time, lhs.token) < (rhs.time, rhs.token) }
  }
}
