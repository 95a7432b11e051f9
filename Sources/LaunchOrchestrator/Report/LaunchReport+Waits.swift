/// Why a step that could run did not: the report's wait reasons.
package enum WaitReason: String, Sendable, Equatable, CaseIterable {
  /// Its `deferUntil` milestone or its `delay`.
  case deferral
  /// Every concurrency slot was held by other steps.
  case concurrency
  /// Between a failed attempt and the next.
  case backoff
  /// A main-isolated attempt had started, but the main thread was busy: from the attempt's
  /// start until its code began running.
  case main
}

extension LaunchReport {
  /// A stretch of time a step spent waiting, after its dependencies had ended.
  package struct Wait: Sendable, Equatable {
    /// What it waited for.
    package var reason: WaitReason
    /// When the wait began.
    package var start: Duration
    /// When it ended.
    package var end: Duration
    /// For a concurrency wait, the steps that held slots during it, by start time.
    package var heldBy: [String]

    /// Creates a wait.
    package init(reason: WaitReason, start: Duration, end: Duration, heldBy: [String] = []) {
      self.reason = reason
      self.start = start
      self.end = end
      self.heldBy = heldBy
    }
  }

  /// One attempt's own work.
  package struct Work: Sendable, Equatable {
    /// The attempt's number, from 1.
    package var attempt: Int
    /// When its code began running: its start, or for a main-isolated step, the end of its
    /// wait for the main thread.
    package var start: Duration
    /// When it returned, timed out or was abandoned.
    package var end: Duration

    /// Creates an attempt's work span.
    package init(attempt: Int, start: Duration, end: Duration) {
      self.attempt = attempt
      self.start = start
      self.end = end
    }
  }

  /// The chain of steps that decided when a milestone (or the launch's end) came.
  package struct CriticalChain: Sendable, Equatable {
    /// How a link was held by the link before it.
    package enum Hold: String, Sendable, Equatable {
      /// It depended on it (`dependsOn` or `after`).
      case dependency
      /// It waited for the slot that step held.
      case slot
      /// That step was the last of its `deferUntil` milestone.
      case deferral
    }

    /// One step of the chain.
    package struct Link: Sendable, Equatable {
      /// The step's id.
      package var step: String
      /// How the link before held it; `nil` for the first link.
      package var heldVia: Hold?
      /// When its first attempt started.
      package var start: Duration
      /// When it ended.
      package var end: Duration
      /// Time from the previous link's end (the launch's start for the first) to its start.
      package var wait: Duration
      /// Its attempts' own work, summed.
      package var work: Duration

      /// Creates a link.
      package init(
        step: String, heldVia: Hold?, start: Duration, end: Duration, wait: Duration,
        work: Duration
      ) {
        self.step = step
        self.heldVia = heldVia
        self.start = start
        self.end = end
        self.wait = wait
        self.work = work
      }
    }

    /// The milestone; `nil` for the launch's end.
    package var milestone: String?
    /// The links, earliest first.
    package var links: [Link]

    /// Creates a chain.
    package init(milestone: String?, links: [Link]) {
      self.milestone = milestone
      self.links = links
    }

    /// How long each step on the chain delayed its end: from the previous link's end (the
    /// launch's start for the first) to its own end, largest first. The shares add up to the
    /// chain's end.
    package var blame: [(step: String, delay: Duration)] {
      var previousEnd = Duration.zero
      var shares: [(step: String, delay: Duration)] = []
      for link in links {
        shares.append((link.step, link.end - previousEnd))
        previousEnd = link.end
      }
      return shares.enumerated().sorted {
        ($0.element.delay, $1.offset) > ($1.element.delay, $0.offset)
      }.map(\.element)
    }
  }

  /// The chain that decided when `milestone` was reached; `nil` for a milestone it did not
  /// record.
  package func criticalChain(to milestone: String) -> CriticalChain? {
    criticalChains.first { $0.milestone == milestone }
  }
}

extension LaunchReport.Step {
  /// Time from the launch's start until its dependencies had ended; `nil` if they never did.
  package var dependencies: Duration? { ready }
}

/// Turns the scheduler's times into waits, work and critical chains.
enum WaitAnalysis {
  /// The steps that waited or have work spans of their own (more than one attempt, or a wait
  /// for the main thread), in step order, with those waits and spans; concurrency waits name
  /// the steps whose attempts overlapped them.
  ///
  /// Only those steps: most steps of a launch have neither, and two arrays of a list per
  /// step, made and destroyed for every report, cost every step of every launch.
  static func waitsAndWork(
    plan: LaunchPlan, records: [LaunchScheduler.Record]
  ) -> [(step: Int, waits: [LaunchReport.Wait], work: [LaunchReport.Work])] {
    var found: [(step: Int, waits: [LaunchReport.Wait], work: [LaunchReport.Work])] = []
    var hasSlotWaits = false
    for index in records.indices {
      // Fields read in place: copying a whole record costs a retain per field.
      guard let start = records[index].start else { continue }
      var waits: [LaunchReport.Wait] = []
      var work: [LaunchReport.Work] = []
      if records[index].attemptLog.isEmpty {
        // One attempt: its span is the step's start and end, which the step line holds.
        let queued = records[index].queued ?? start
        waitsBefore(
          queued, ready: records[index].ready,
          earlierAttempt: records[index].waitedForEarlierAttempt, into: &waits)
        if start > queued {
          waits.append(.init(reason: .concurrency, start: queued, end: start))
          hasSlotWaits = true
        }
      } else {
        let record = records[index]
        let attempts = record.attemptLog
        waitsBefore(
          attempts[0].queued, ready: record.ready, earlierAttempt: record.waitedForEarlierAttempt,
          into: &waits)
        var previousEnd: Duration?
        for (offset, attempt) in attempts.enumerated() {
          if let previousEnd, attempt.queued > previousEnd {
            waits.append(.init(reason: .backoff, start: previousEnd, end: attempt.queued))
          }
          if attempt.start > attempt.queued {
            waits.append(.init(reason: .concurrency, start: attempt.queued, end: attempt.start))
            hasSlotWaits = true
          }
          var began = attempt.start
          if let codeStart = attempt.began, codeStart > attempt.start {
            waits.append(.init(reason: .main, start: attempt.start, end: codeStart))
            began = codeStart
          }
          let end = attempt.end ?? record.end ?? attempt.start
          work.append(.init(attempt: offset + 1, start: began, end: max(began, end)))
          previousEnd = end
        }
      }
      if !waits.isEmpty || !work.isEmpty { found.append((index, waits, work)) }
    }
    guard hasSlotWaits else { return found }
    // Slot holders are named over every step's spans: by step, for the launches that have
    // slot waits.
    var waits = [[LaunchReport.Wait]](repeating: [], count: records.count)
    var work = [[LaunchReport.Work]](repeating: [], count: records.count)
    for entry in found {
      waits[entry.step] = entry.waits
      work[entry.step] = entry.work
    }
    nameSlotHolders(plan: plan, records: records, waits: &waits, work: work)
    for position in found.indices { found[position].waits = waits[found[position].step] }
    return found
  }

  /// The waits from `ready` until the first attempt was `queued`: its deferral, then, when it
  /// waited from `earlierAttempt` for an attempt of an earlier launch to end, a `backoff`,
  /// the wait between that attempt and this one.
  private static func waitsBefore(
    _ queued: Duration, ready: Duration?, earlierAttempt: Duration?,
    into waits: inout [LaunchReport.Wait]
  ) {
    guard let ready, queued > ready else { return }
    let deferredUntil = min(earlierAttempt ?? queued, queued)
    if deferredUntil > ready {
      waits.append(.init(reason: .deferral, start: ready, end: deferredUntil))
    }
    if queued > deferredUntil {
      waits.append(.init(reason: .backoff, start: max(ready, deferredUntil), end: queued))
    }
  }

  /// Fills `heldBy` with a sweep over attempt spans in start order: only the spans running at
  /// a wait's start are kept between waits, so a launch without concurrency waits costs nothing
  /// and one with them costs what it names. An attempt holds its slot from its start, its
  /// wait for the main thread included.
  private static func nameSlotHolders(
    plan: LaunchPlan, records: [LaunchScheduler.Record], waits: inout [[LaunchReport.Wait]],
    work: [[LaunchReport.Work]]
  ) {
    var slotWaits: [(step: Int, wait: Int)] = []
    for step in waits.indices {
      for wait in waits[step].indices where waits[step][wait].reason == .concurrency {
        slotWaits.append((step, wait))
      }
    }
    guard !slotWaits.isEmpty else { return }
    slotWaits.sort { waits[$0.step][$0.wait].start < waits[$1.step][$1.wait].start }
    var spans: [(step: Int, start: Duration, end: Duration)] = []
    for step in work.indices {
      for span in work[step] {
        let hop = waits[step].last { $0.reason == .main && $0.end == span.start }
        spans.append((step, hop?.start ?? span.start, span.end))
      }
      if work[step].isEmpty, let start = records[step].start {
        spans.append((step, start, records[step].end ?? start))
      }
    }
    spans.sort { ($0.start, $0.step) < ($1.start, $1.step) }
    var next = 0
    var active: [(step: Int, start: Duration, end: Duration)] = []
    for (step, index) in slotWaits {
      let wait = waits[step][index]
      while next < spans.count, spans[next].start < wait.start {
        active.append(spans[next])
        next += 1
      }
      active.removeAll { $0.end <= wait.start }
      var holders = active.filter { $0.step != step }.map(\.step)
      var later = next
      while later < spans.count, spans[later].start < wait.end {
        if spans[later].step != step { holders.append(spans[later].step) }
        later += 1
      }
      var seen = Set<Int>()
      waits[step][index].heldBy = holders.filter { seen.insert($0).inserted }.map {
        plan.steps[$0].id
      }
    }
  }

  /// The chains to each reached milestone, in manifest order, then to the launch's end.
  static func chains(
    plan: LaunchPlan, steps: [LaunchReport.Step], milestoneTimes: [Duration?]
  ) -> [LaunchReport.CriticalChain] {
    // Only slot holders are found by id, and only launches with slot waits have any.
    let hasSlotWaits = steps.indices.contains { index in
      steps[index].waits.contains { $0.reason == .concurrency }
    }
    let index =
      hasSlotWaits
      ? Dictionary(
        steps.indices.map { (steps[$0].id, $0) }, uniquingKeysWith: { first, _ in first })
      : [:]
    var chains: [LaunchReport.CriticalChain] = []
    for milestone in plan.milestones {
      guard let time = milestoneTimes[milestone.index] else { continue }
      if let last = latestEnding(milestone.steps, [], by: time, plan, steps) {
        chains.append(
          .init(milestone: milestone.name, links: chain(from: last, plan, steps, index)))
      }
    }
    // The launch ends when its last step or refresh does: a cached step counts by its
    // refresh (under the step's id), which waited for the step's dependencies like any step.
    // Substituted only when some step was served: a copy of every line costs a retain per
    // field, in every launch.
    let ending =
      steps.indices.contains { steps[$0].hasRefresh }
      ? steps.map { step in
        step.refreshBar.map {
          var refresh = $0
          refresh.id = step.id
          return refresh
        } ?? step
      } : steps
    var last: Int?
    for index in ending.indices {
      guard ending[index].start != nil, let end = ending[index].end else { continue }
      if last.map({ (ending[$0].end!, $0) < (end, index) }) ?? true { last = index }
    }
    if let last {
      chains.append(.init(milestone: nil, links: chain(from: last, plan, ending, index)))
    }
    return chains
  }

  /// The step of `first` and then `second` that ended last (the later index on a tie), among
  /// those that started and ended; a loop, not a filtered and joined copy: every launch's
  /// report walks its chain through it.
  ///
  /// A step that never started (skipped: a dependency failed or timed out) stands for what
  /// it waited for that ended by `bound` (the milestone's time, or the start of the step
  /// that waited for it): its skip came with the end of one of those, and the report keeps
  /// no time of its own for it.
  private static func latestEnding(
    _ first: [Int], _ second: [Int], by bound: Duration, _ plan: LaunchPlan,
    _ steps: [LaunchReport.Step]
  ) -> Int? {
    var latest: (end: Duration, step: Int)?
    // Skipped steps met, to expand: a list, not recursion (a skipped chain of 10,000 steps
    // would use up the thread's stack); both allocated only when one is met, which most
    // launches have none of.
    var skipped: [Int] = []
    var expanded: Set<Int> = []
    func consider(_ step: Int) {
      guard steps[step].start != nil else {
        if steps[step].state == .skipped, expanded.insert(step).inserted { skipped.append(step) }
        return
      }
      guard let end = steps[step].end, end <= bound else { return }
      if latest.map({ $0 < (end, step) }) ?? true { latest = (end, step) }
    }
    for step in first { consider(step) }
    for step in second { consider(step) }
    while let step = skipped.popLast() {
      for dependency in plan.steps[step].dependsOn { consider(dependency) }
      for dependency in plan.steps[step].after { consider(dependency) }
    }
    return latest?.step
  }

  /// Walks back from `last` through whatever held each step's first start last: the slot
  /// holder whose work ended latest by then, else the deferral milestone's last step, else
  /// the dependency that ended last. Each step is visited at most once.
  private static func chain(
    from last: Int, _ plan: LaunchPlan, _ steps: [LaunchReport.Step], _ index: [String: Int]
  ) -> [LaunchReport.CriticalChain.Link] {
    // Flags by step, not a set: no hashing; in one word for a plan of up to 64 steps, which
    // allocates nothing, else one array.
    var visitedWord: UInt64 = 0
    var visited = steps.count > 64 ? [Bool](repeating: false, count: steps.count) : []
    // Made from the last link back, then turned around. Each link ends when it let the next
    // one go on: a slot holder when the attempt that freed the slot ended (it may have run
    // again after), any other step at its end.
    var links: [LaunchReport.CriticalChain.Link] = []
    var current: Int? = last
    var currentEnd = steps[last].end
    while let step = current, let start = steps[step].start {
      if visited.isEmpty {
        guard visitedWord & (1 << UInt64(step)) == 0 else { break }
        visitedWord |= 1 << UInt64(step)
      } else {
        guard !visited[step] else { break }
        visited[step] = true
      }
      var previous: Int?
      var previousEnd: Duration?
      var via = LaunchReport.CriticalChain.Hold.dependency
      // The waits over by the step's start, read in place.
      var slotWait: Int?
      var deferred = false
      for wait in steps[step].waits.indices where steps[step].waits[wait].end <= start {
        switch steps[step].waits[wait].reason {
        case .concurrency: slotWait = wait
        case .deferral: deferred = true
        case .backoff, .main: break
        }
      }
      if let slotWait {
        let slot = steps[step].waits[slotWait]
        // The holder freed its slot when one of its attempts ended by then, even if it
        // ran again later.
        let freed =
          slot.heldBy.compactMap { index[$0] }.compactMap { holder in
            // A cached step holds slots through its refresh.
            (steps[holder].work + (steps[holder].refresh?.work ?? [])).last { $0.end <= start }
              .map { (holder, $0.end) }
          }.max { ($0.1, $0.0) < ($1.1, $1.0) }
        previous = freed?.0
        previousEnd = freed?.1
        via = .slot
      }
      if previous == nil, deferred, let milestone = plan.steps[step].deferUntil {
        previous = latestEnding(plan.milestones[milestone].steps, [], by: start, plan, steps)
        via = .deferral
      }
      // A cached step waited for nothing: its output was there from the start.
      if previous == nil, steps[step].state != .cached {
        previous = latestEnding(
          plan.steps[step].dependsOn, plan.steps[step].after, by: start, plan, steps)
        via = .dependency
      }
      let end = currentEnd ?? start
      // Its work until it let the next link go on (a cached step's refresh work is later).
      var work = steps[step].workTime(endingBy: end)
      if steps[step].hasRefresh {
        for span in steps[step].refresh?.work ?? [] where span.end <= end {
          work += span.end - span.start
        }
      }
      // Fields read in place: a copy of the line would retain each of its fields. The wait is
      // filled in once the link before is known.
      links.append(
        .init(
          step: steps[step].id, heldVia: previous == nil ? nil : via, start: start, end: end,
          wait: .zero, work: work))
      current = previous
      currentEnd = previousEnd ?? previous.flatMap { steps[$0].end }
    }
    links.reverse()
    var previousEnd = Duration.zero
    for position in links.indices {
      if position == 0 { links[position].heldVia = nil }
      links[position].wait = max(.zero, links[position].start - previousEnd)
      previousEnd = links[position].end
    }
    return links
  }
}
