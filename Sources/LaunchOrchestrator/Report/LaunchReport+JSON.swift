/// The report's JSON form, as `--report` writes it and `plan --durations` reads it;
/// docs/report.md describes every key.
extension LaunchReport {
  /// The version of the JSON form this build writes (the `version` key) and reads up to:
  /// 2 added wait reasons, critical chains, notes, `error` and `splash` to the first form
  /// (which had no `version`); 3 added cached steps (`state` `cached`, `refresh`) and the
  /// `main` wait reason.
  public static let formatVersion = 3

  /// The report as a JSON value with the documented keys, in the documented order.
  public var json: JSONValue {
    func seconds(_ duration: Duration?) -> JSONValue {
      duration.map { JSONValue(.number($0.seconds)) } ?? nil
    }
    func text(_ string: String?) -> JSONValue {
      string.map { JSONValue(.string($0)) } ?? nil
    }
    func waitsJSON(_ waits: [Wait]) -> JSONValue {
      JSONValue(
        .array(
          waits.map { wait in
            JSONValue(
              .object([
                JSONMember(key: "reason", value: text(wait.reason.rawValue)),
                JSONMember(key: "start", value: seconds(wait.start)),
                JSONMember(key: "end", value: seconds(wait.end)),
                JSONMember(
                  key: "heldBy",
                  value: JSONValue(.array(wait.heldBy.map { JSONValue(.string($0)) }))),
              ]))
          }))
    }
    func workJSON(_ work: [Work]) -> JSONValue {
      JSONValue(
        .array(
          work.map { work in
            JSONValue(
              .object([
                JSONMember(key: "attempt", value: JSONValue(integer: work.attempt)),
                JSONMember(key: "start", value: seconds(work.start)),
                JSONMember(key: "end", value: seconds(work.end)),
              ]))
          }))
    }
    func refreshJSON(_ refresh: Refresh?) -> JSONValue {
      guard let refresh else { return nil }
      return JSONValue(
        .object([
          JSONMember(key: "state", value: text(refresh.state.rawValue)),
          JSONMember(key: "start", value: seconds(refresh.start)),
          JSONMember(key: "end", value: seconds(refresh.end)),
          JSONMember(key: "attempts", value: JSONValue(integer: refresh.attempts)),
          JSONMember(key: "error", value: text(refresh.error)),
          JSONMember(key: "ready", value: seconds(refresh.ready)),
          JSONMember(key: "waits", value: waitsJSON(refresh.waits)),
          JSONMember(key: "work", value: workJSON(refresh.work)),
        ]))
    }
    return JSONValue(
      .object([
        JSONMember(key: "version", value: JSONValue(integer: Self.formatVersion)),
        JSONMember(key: "manifest", value: text(manifest)),
        JSONMember(key: "name", value: text(name)),
        JSONMember(key: "outcome", value: text(outcome.rawValue)),
        JSONMember(key: "route", value: text(route?.name)),
        JSONMember(key: "error", value: text(error)),
        JSONMember(key: "duration", value: seconds(duration)),
        JSONMember(
          key: "milestones",
          value: JSONValue(
            .object(milestones.map { JSONMember(key: $0.name, value: seconds($0.time)) }))),
        JSONMember(
          key: "splash",
          value: splash.map { splash in
            JSONValue(
              .object([
                JSONMember(key: "contentAt", value: seconds(splash.contentAt)),
                JSONMember(key: "skeletonFrom", value: seconds(splash.skeletonFrom)),
              ]))
          } ?? nil),
        JSONMember(
          key: "criticalPath", value: JSONValue(.array(criticalPath.map { JSONValue(.string($0)) }))
        ),
        JSONMember(
          key: "criticalChains",
          value: JSONValue(
            .array(
              criticalChains.map { chain in
                JSONValue(
                  .object([
                    JSONMember(key: "milestone", value: text(chain.milestone)),
                    JSONMember(
                      key: "links",
                      value: JSONValue(
                        .array(
                          chain.links.map { link in
                            JSONValue(
                              .object([
                                JSONMember(key: "step", value: text(link.step)),
                                JSONMember(key: "heldVia", value: text(link.heldVia?.rawValue)),
                                JSONMember(key: "start", value: seconds(link.start)),
                                JSONMember(key: "end", value: seconds(link.end)),
                                JSONMember(key: "wait", value: seconds(link.wait)),
                                JSONMember(key: "work", value: seconds(link.work)),
                              ]))
                          }))),
                  ]))
              }))),
        JSONMember(
          key: "steps",
          value: JSONValue(
            .array(
              steps.map { step in
                JSONValue(
                  .object([
                    JSONMember(key: "id", value: text(step.id)),
                    JSONMember(key: "plugin", value: text(step.plugin)),
                    JSONMember(key: "state", value: text(step.state.rawValue)),
                    JSONMember(key: "start", value: seconds(step.start)),
                    JSONMember(key: "end", value: seconds(step.end)),
                    JSONMember(key: "attempts", value: JSONValue(integer: step.attempts)),
                    JSONMember(key: "usedFallback", value: JSONValue(.bool(step.usedFallback))),
                    JSONMember(key: "error", value: text(step.error)),
                    JSONMember(
                      key: "notes",
                      value: JSONValue(.array(step.notes.map { JSONValue(.string($0)) }))),
                    JSONMember(key: "ready", value: seconds(step.ready)),
                    JSONMember(key: "waits", value: waitsJSON(step.waits)),
                    JSONMember(key: "work", value: workJSON(step.work)),
                    JSONMember(key: "refresh", value: refreshJSON(step.refresh)),
                  ]))
              }))),
      ]))
  }

  /// The report as pretty-printed JSON text.
  public var jsonText: String { JSONWriter.prettyPrinted(json) }

  /// Reads a report written by ``jsonText``.
  /// - Throws: ``ReportFormatError`` naming the first field that is missing or malformed.
  public init(jsonText: String) throws {
    let document: JSONDocument
    do {
      document = try JSONParser.parse(Array(jsonText.utf8))
    } catch {
      throw ReportFormatError(
        path: .root, message: "the report is not valid JSON: \(error.message)")
    }
    let root = document.root
    // Older forms read as far as they go; a newer one may mean something else by a key.
    if let version = root["version"] {
      guard let number = version.exactInteger(Int.self), number >= 1 else {
        throw ReportFormatError(path: .root.appending("version"), message: "missing or malformed")
      }
      guard number <= Self.formatVersion else {
        throw ReportFormatError(
          path: .root.appending("version"),
          message:
            "the report is format \(number), and this build reads formats up to \(Self.formatVersion); use a newer orchestrate"
        )
      }
    }
    func field<T>(_ path: JSONPath, _ read: (JSONValue) -> T?) throws -> T {
      guard let value = root.value(at: path), let result = read(value) else {
        throw ReportFormatError(path: path, message: "missing or malformed")
      }
      return result
    }
    func optionalSeconds(_ value: JSONValue) -> Duration?? {
      if value.kind == .null { return .some(nil) }
      if case .number(let number) = value.kind, let duration = DurationText.seconds(number) {
        return duration
      }
      return nil
    }
    func optionalString(_ value: JSONValue) -> String?? {
      if value.kind == .null { return .some(nil) }
      return value.stringValue.map { $0 }
    }
    func seconds(_ value: JSONValue) -> Duration? {
      if case .number(let number) = value.kind { return DurationText.seconds(number) }
      return nil
    }
    func integer(_ value: JSONValue) -> Int? { value.exactInteger(Int.self) }
    func waits(at path: JSONPath) throws -> [Wait] {
      try (root.value(at: path)?.elements ?? []).indices.map { wait in
        let waitPath = path.appending(wait)
        return Wait(
          reason: try field(waitPath.appending("reason")) {
            $0.stringValue.flatMap(WaitReason.init(rawValue:))
          },
          start: try field(waitPath.appending("start"), seconds),
          end: try field(waitPath.appending("end"), seconds),
          heldBy: root.value(at: waitPath.appending("heldBy"))?.elements?.compactMap(
            \.stringValue) ?? [])
      }
    }
    func work(at path: JSONPath) throws -> [Work] {
      try (root.value(at: path)?.elements ?? []).indices.map { work in
        let workPath = path.appending(work)
        return Work(
          attempt: try field(workPath.appending("attempt"), integer),
          start: try field(workPath.appending("start"), seconds),
          end: try field(workPath.appending("end"), seconds))
      }
    }
    func state(_ value: JSONValue) -> StepState? {
      value.stringValue.flatMap(StepState.init(rawValue:))
    }
    func refresh(at path: JSONPath) throws -> Refresh? {
      guard let value = root.value(at: path), value.kind != .null else { return nil }
      return Refresh(
        state: try field(path.appending("state"), state),
        start: try field(path.appending("start"), optionalSeconds),
        end: try field(path.appending("end"), optionalSeconds),
        attempts: try field(path.appending("attempts"), integer),
        error: try field(path.appending("error"), optionalString),
        ready: root.value(at: path.appending("ready")).flatMap(optionalSeconds) ?? nil,
        waits: try waits(at: path.appending("waits")), work: try work(at: path.appending("work")))
    }
    let stepsPath = JSONPath.root.appending("steps")
    let stepValues = try field(stepsPath) { $0.elements }
    var steps: [Step] = []
    for index in stepValues.indices {
      let path = stepsPath.appending(index)
      var step =
        Step(
          id: try field(path.appending("id")) { $0.stringValue },
          plugin: try field(path.appending("plugin")) { $0.stringValue },
          state: try field(path.appending("state"), state),
          start: try field(path.appending("start"), optionalSeconds),
          end: try field(path.appending("end"), optionalSeconds),
          attempts: try field(path.appending("attempts"), integer),
          usedFallback: try field(path.appending("usedFallback")) { value in
            if case .bool(let bool) = value.kind { return bool }
            return nil
          },
          error: try field(path.appending("error"), optionalString),
          // Reports written before notes existed have none.
          notes: root.value(at: path.appending("notes"))?.elements?.compactMap(\.stringValue) ?? [],
          // Reports written before wait reasons have no ready time, waits or work.
          ready: root.value(at: path.appending("ready")).flatMap(optionalSeconds) ?? nil,
          waits: try waits(at: path.appending("waits")), work: try work(at: path.appending("work")))
      // Reports written before cached steps have no refresh.
      step.refresh = try refresh(at: path.appending("refresh"))
      steps.append(step)
    }
    let milestoneMembers = try field(.root.appending("milestones")) { $0.members }
    var milestones: [Milestone] = []
    for member in milestoneMembers {
      milestones.append(
        Milestone(
          name: member.key,
          time: try field(
            JSONPath.root.appending("milestones").appending(member.key), optionalSeconds)))
    }
    self.init(
      manifest: try field(.root.appending("manifest")) { $0.stringValue },
      name: try field(.root.appending("name")) { $0.stringValue },
      outcome: try field(.root.appending("outcome")) {
        $0.stringValue.flatMap(LaunchOutcome.init(rawValue:))
      },
      route: try field(.root.appending("route"), optionalString).map(LaunchRoute.init),
      duration: try field(.root.appending("duration")) { value in
        if case .number(let number) = value.kind { return DurationText.seconds(number) }
        return nil
      },
      milestones: milestones,
      criticalPath: try field(.root.appending("criticalPath")) { value in
        value.elements.flatMap { elements in
          let ids = elements.compactMap(\.stringValue)
          return ids.count == elements.count ? ids : nil
        }
      },
      steps: steps,
      // Reports written before these existed have neither.
      error: root["error"]?.stringValue,
      splash: root["splash"].flatMap { value in
        guard value.members != nil else { return nil }
        return SplashTiming(
          contentAt: value["contentAt"].flatMap(optionalSeconds) ?? nil,
          skeletonFrom: value["skeletonFrom"].flatMap(optionalSeconds) ?? nil)
      })
    // Reports written before critical chains have none.
    let chainsPath = JSONPath.root.appending("criticalChains")
    criticalChains = try (root["criticalChains"]?.elements ?? []).indices.map { chain in
      let chainPath = chainsPath.appending(chain)
      let linksPath = chainPath.appending("links")
      return CriticalChain(
        milestone: try field(chainPath.appending("milestone"), optionalString),
        links: try field(linksPath) { $0.elements }.indices.map { link in
          let linkPath = linksPath.appending(link)
          return CriticalChain.Link(
            step: try field(linkPath.appending("step")) { $0.stringValue },
            heldVia: try field(linkPath.appending("heldVia")) { value -> CriticalChain.Hold?? in
              if value.kind == .null { return .some(nil) }
              return value.stringValue.flatMap(CriticalChain.Hold.init(rawValue:)).map { $0 }
            },
            start: try field(linkPath.appending("start"), seconds),
            end: try field(linkPath.appending("end"), seconds),
            wait: try field(linkPath.appending("wait"), seconds),
            work: try field(linkPath.appending("work"), seconds))
        })
    }
  }
}

/// A report file that does not have the shape ``LaunchReport/jsonText`` writes.
public struct ReportFormatError: Error, Sendable, CustomStringConvertible {
  /// Where in the report.
  public var path: JSONPath
  /// What is wrong.
  public var message: String

  /// `steps[2].state: missing or malformed`.
  public var description: String { "\(path): \(message)" }
}
