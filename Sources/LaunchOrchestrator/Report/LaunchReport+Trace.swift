import LaunchJSON

/// The report as Chrome trace-event JSON, which Perfetto and chrome://tracing open.
extension LaunchReport {
  /// Complete (`"ph": "X"`) events, one lane per concurrently running step, each step's waits
  /// as their own slices (category `wait`) in its lane: before it, or nested in it for waits
  /// between its start and its work (backoff, the main thread). Milestones are global instant
  /// events, and so is each pause (`paused`, category `pause`, its real length in `args`):
  /// times are active time, in which a pause takes none. A cached step is a slice of no length at the time it was served, and its refresh
  /// a slice of its own named `<id> (refresh)`. Times are in microseconds since the launch
  /// started.
  package var chromeTrace: JSONValue {
    let steps = steps + steps.compactMap(\.refreshBar)
    let lanes = Self.lanes(for: steps)
    let laneCount = max(1, lanes.compactMap { $0 }.max() ?? 0)
    var events = [Self.traceName(name, thread: nil)]
    events += (1...laneCount).map { Self.traceName("lane \($0)", thread: $0) }
    events += zip(steps, lanes).compactMap { step, lane in lane.flatMap(step.traceSlice) }
    events += zip(steps, lanes).flatMap { step, lane in lane.map(step.traceWaitSlices) ?? [] }
    events += milestones.compactMap(\.traceInstant)
    events += pauses.map(\.traceInstant)
    return [
      "traceEvents": JSONValue(.array(events)),
      "displayTimeUnit": "ms",
      "otherData": [
        "manifest": JSONValue(.string(manifest)),
        "outcome": JSONValue(.string(outcome.rawValue)),
        "route": route.map { JSONValue(.string($0.name)) } ?? nil,
      ],
    ]
  }

  /// The metadata event naming the process (`thread` `nil`) or a lane.
  private static func traceName(_ name: String, thread: Int?) -> JSONValue {
    [
      "name": thread == nil ? "process_name" : "thread_name",
      "ph": "M",
      "pid": 1,
      "tid": JSONValue(integer: thread ?? 0),
      "args": ["name": JSONValue(.string(name))],
    ]
  }

  /// The lane (from 1) of each step that ran: the lowest lane free when it started waiting or,
  /// without waits, started, so steps that overlap in time (waits included) never share one.
  /// `nil` for steps that never started.
  package static func lanes(for steps: [Step]) -> [Int?] {
    var lanes = [Int?](repeating: nil, count: steps.count)
    var laneEnds: [Duration] = []
    func from(_ step: Step) -> Duration? {
      step.start.map { min($0, step.waits.first?.start ?? $0) }
    }
    let started = steps.indices.filter { steps[$0].start != nil }
      .sorted { (from(steps[$0])!, $0) < (from(steps[$1])!, $1) }
    for index in started {
      let start = from(steps[index])!
      let end = steps[index].end ?? start
      if let free = laneEnds.firstIndex(where: { $0 <= start }) {
        laneEnds[free] = end
        lanes[index] = free + 1
      } else {
        laneEnds.append(end)
        lanes[index] = laneEnds.count
      }
    }
    return lanes
  }
}

extension LaunchReport.Step {
  /// The step's slice in `lane`; `nil` if it never started.
  fileprivate func traceSlice(lane: Int) -> JSONValue? {
    guard let start, let end else { return nil }
    return [
      "name": JSONValue(.string(id)),
      "cat": JSONValue(.string(plugin)),
      "ph": "X",
      "ts": start.traceMicroseconds,
      "dur": (end - start).traceMicroseconds,
      "pid": 1,
      "tid": JSONValue(integer: lane),
      "args": [
        "state": JSONValue(.string(state.rawValue)),
        "attempts": JSONValue(integer: attempts),
        "usedFallback": JSONValue(.bool(usedFallback)),
        "error": error.map { JSONValue(.string($0)) } ?? nil,
      ],
    ]
  }

  /// A slice for each of its waits, in `lane`.
  fileprivate func traceWaitSlices(lane: Int) -> [JSONValue] {
    waits.map { wait in
      [
        "name": JSONValue(.string("\(id) waits: \(wait.reason.rawValue)")),
        "cat": "wait",
        "ph": "X",
        "ts": wait.start.traceMicroseconds,
        "dur": (wait.end - wait.start).traceMicroseconds,
        "pid": 1,
        "tid": JSONValue(integer: lane),
        "args": [
          "step": JSONValue(.string(id)),
          "heldBy": JSONValue(.array(wait.heldBy.map { JSONValue(.string($0)) })),
        ],
      ]
    }
  }

  /// The refresh of a cached step as a step of its own, `<id> (refresh)`, for charts that
  /// draw it as a bar beside the step's instant.
  package var refreshBar: Self? {
    guard let refresh else { return nil }
    return Self(
      id: "\(id) (refresh)", plugin: plugin, state: refresh.state, start: refresh.start,
      end: refresh.end, attempts: refresh.attempts, usedFallback: false, error: refresh.error,
      ready: refresh.ready, waits: refresh.waits, work: refresh.work)
  }
}

extension LaunchReport.Milestone {
  /// A global instant event when it was reached; `nil` if it never was.
  fileprivate var traceInstant: JSONValue? {
    guard let time else { return nil }
    return [
      "name": JSONValue(.string(name)),
      "cat": "milestone",
      "ph": "i",
      "s": "g",
      "ts": time.traceMicroseconds,
      "pid": 1,
      "tid": 0,
    ]
  }
}

extension LaunchReport.Pause {
  /// A global instant event where the launch was paused, its real length in `args`.
  fileprivate var traceInstant: JSONValue {
    [
      "name": "paused",
      "cat": "pause",
      "ph": "i",
      "s": "g",
      "ts": at.traceMicroseconds,
      "pid": 1,
      "tid": 0,
      "args": ["duration": JSONValue(.number(duration.seconds))],
    ]
  }
}

extension Duration {
  /// Whole microseconds, as trace events count time: rounded from the seconds as a `Double`,
  /// as they always were, so that a trace names the same times as before they were integers.
  fileprivate var traceMicroseconds: JSONValue {
    JSONValue(integer: Int64((seconds * 1e6).rounded()))
  }
}
