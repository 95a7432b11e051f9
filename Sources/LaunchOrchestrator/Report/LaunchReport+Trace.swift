/// The report as Chrome trace-event JSON, which Perfetto and chrome://tracing open.
extension LaunchReport {
  /// Complete (`"ph": "X"`) events, one lane per concurrently running step, each step's waits
  /// as their own slices (category `wait`) in its lane: before it, or nested in it for waits
  /// between its start and its work (backoff, the main thread). Milestones are global instant
  /// events. A cached step is a slice of no length at the time it was served, and its refresh
  /// a slice of its own named `<id> (refresh)`. Times are in microseconds since the launch
  /// started.
  public var chromeTrace: JSONValue {
    func micros(_ duration: Duration) -> JSONValue {
      JSONValue(.number((duration.seconds * 1e6).rounded()))
    }
    func object(_ members: [(String, JSONValue)]) -> JSONValue {
      JSONValue(.object(members.map { JSONMember(key: $0.0, value: $0.1) }))
    }

    var events: [JSONValue] = [
      object([
        ("name", "process_name"), ("ph", "M"), ("pid", 1), ("tid", 0),
        ("args", object([("name", .init(.string(name)))])),
      ])
    ]
    let steps = steps + steps.compactMap(\.refreshBar)
    let lanes = Self.lanes(for: steps)
    for lane in 1...max(1, (lanes.compactMap { $0 }.max() ?? 0)) {
      events.append(
        object([
          ("name", "thread_name"), ("ph", "M"), ("pid", 1), ("tid", .init(integer: lane)),
          ("args", object([("name", .init(.string("lane \(lane)")))])),
        ]))
    }
    for (index, step) in steps.enumerated() {
      guard let start = step.start, let end = step.end, let lane = lanes[index] else { continue }
      events.append(
        object([
          ("name", .init(.string(step.id))), ("cat", .init(.string(step.plugin))), ("ph", "X"),
          ("ts", micros(start)),
          ("dur", micros(end - start)), ("pid", 1), ("tid", .init(integer: lane)),
          (
            "args",
            object([
              ("state", .init(.string(step.state.rawValue))),
              ("attempts", .init(integer: step.attempts)),
              ("usedFallback", .init(.bool(step.usedFallback))),
              ("error", step.error.map { JSONValue(.string($0)) } ?? nil),
            ])
          ),
        ]))
    }
    for (index, step) in steps.enumerated() {
      guard let lane = lanes[index] else { continue }
      for wait in step.waits {
        events.append(
          object([
            ("name", .init(.string("\(step.id) waits: \(wait.reason.rawValue)"))), ("cat", "wait"),
            ("ph", "X"), ("ts", micros(wait.start)), ("dur", micros(wait.end - wait.start)),
            ("pid", 1), ("tid", .init(integer: lane)),
            (
              "args",
              object([
                ("step", .init(.string(step.id))),
                ("heldBy", JSONValue(.array(wait.heldBy.map { JSONValue(.string($0)) }))),
              ])
            ),
          ]))
      }
    }
    for milestone in milestones {
      guard let time = milestone.time else { continue }
      events.append(
        object([
          ("name", .init(.string(milestone.name))), ("cat", "milestone"), ("ph", "i"), ("s", "g"),
          ("ts", micros(time)),
          ("pid", 1), ("tid", 0),
        ]))
    }
    return object([
      ("traceEvents", JSONValue(.array(events))), ("displayTimeUnit", "ms"),
      (
        "otherData",
        object([
          ("manifest", .init(.string(manifest))), ("outcome", .init(.string(outcome.rawValue))),
          ("route", route.map { JSONValue(.string($0.name)) } ?? nil),
        ])
      ),
    ])
  }

  /// The lane (from 1) of each step that ran: the lowest lane free when it started waiting or,
  /// without waits, started, so steps that overlap in time (waits included) never share one.
  /// `nil` for steps that never started.
  public static func lanes(for steps: [Step]) -> [Int?] {
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
