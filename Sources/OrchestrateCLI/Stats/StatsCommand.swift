import Foundation
import LaunchJSON
import LaunchOrchestrator

/// `orchestrate stats FILES-OR-FOLDERS...`: the figures of a fleet's launches.
struct StatsCommand: Command {
  let options: StatsOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    // The chart's target is judged before any report is read: a million reports are not
    // read only to find that the chart cannot be kept, or would replace one of them.
    let outputs = try OutputFiles(
      [(.chart, options.svg, options.$svg)], json: options.json ? options.$json : nil,
      command: StatsOptions.spec, moment: "before reading any report")
    // With `--svg -` the chart is standard output's only content; the figures go to stderr.
    let console = outputs.usesStandardOutput ? console.outputOnStandardError : console
    let (items, passedOver) = try StatsReader.items(for: options.paths)
    try outputs.refuse(options.paths.map { ($0, "which 'stats' reads") })
    try outputs.refuseHardLinks(to: StatsReader.files(items), owner: "which 'stats' reads")
    for note in outputs.notes { console.err(note) }
    var stats = StatsReader(grouping: options.grouping).read(items)
    for (index, other) in passedOver.enumerated() {
      stats.skip(other, at: FirstSeen(item: items.count + index, offset: 0, position: 0))
    }
    let summary = StatsSummary(stats: stats, grouping: options.grouping)
    let broken = try check(summary)
    if options.json {
      console.text(JSONWriter.prettyPrinted(summary.json))
    } else {
      console.out(lines: StatsText.lines(summary))
    }
    // A chart that cannot be written does not hide the broken limits: they are printed, and
    // the exit code is the chart's (73), which ExitCode.meanings orders after a broken
    // limit's (3): the run did not do all it was asked.
    var chartFailure: CLIError?
    if options.svg != nil {
      do {
        try outputs.write({ _ in StatsChart(summary: summary).svg }, console: console)
        if !options.json, let svg = options.svg, svg != "-" { console.out("chart: \(svg)") }
      } catch {
        chartFailure = error
      }
    }
    for line in broken { console.err("Error: \(line)") }
    if let chartFailure { throw chartFailure }
    return broken.isEmpty ? .success : .budgetExceeded
  }

  /// The limits broken, each with its value, on all reports and on each group.
  /// - Throws: a ``CLIError`` when a limit names what no report has, or no report was read.
  private func check(_ summary: StatsSummary) throws(CLIError) -> [String] {
    guard !options.limits.isEmpty else { return [] }
    guard summary.stats.all.reports > 0 else {
      throw CLIError(
        message:
          "No report could be read from \(options.paths.map { "'\($0)'" }.joined(separator: ", ")), so the limits cannot be checked.",
        exitCode: .missingInput)
    }
    let all = summary.stats.all
    let names = Array(all.milestones.keys) + Array(all.steps.keys)
    var broken: [String] = []
    for limit in options.limits {
      if let name = limit.name, !names.contains(name) {
        let hint = Suggestions.didYouMean(name, in: names)
        throw CLIError.usage(
          "The limit '\(limit.text)' names '\(name)', which no report has as a milestone or step.\(hint)",
          command: StatsOptions.spec)
      }
      if case .time(let name, _, true) = limit.subject, all.steps[name] == nil {
        throw CLIError.usage(
          "The limit '\(limit.text)' asks for the wait of '\(name)', which is a milestone, not a step.",
          command: StatsOptions.spec)
      }
      for (label, group) in summary.labelledGroups {
        guard let (value, estimated) = limit.value(in: group), limit.isBroken(by: value) else {
          continue
        }
        broken.append(
          "'\(limit.text)' is broken: \(limit.subjectText) is \(estimated ? "about " : "")\(limit.format(value)) (\(label), \(Grammar.count(group.reports, "report")))."
        )
      }
    }
    return broken
  }
}

/// The gathered figures with their groups in order, for the text, the JSON and the chart.
struct StatsSummary {
  var stats: FleetStats
  var grouping: StatsGrouping?

  /// The groups' names, sorted.
  var groupNames: [String] {
    grouping.map { $0.sorted(Array(stats.groups.keys)) } ?? []
  }

  /// `all reports`, then `version 1.9.0` and so on.
  var labelledGroups: [(label: String, group: StatsGroup)] {
    [("all reports", stats.all)]
      + groupNames.map { ("\(grouping!.rawValue) \($0)", stats.groups[$0]!) }
  }

  /// The figures as JSON.
  var json: JSONValue {
    [
      "reports": JSONValue(integer: stats.all.reports),
      "filesRead": JSONValue(integer: stats.filesRead),
      "skipped": JSONValue(integer: stats.skipped),
      "skippedExamples": JSONValue(.array(stats.skippedExamples.map { JSONValue(.string($0)) })),
      "exactUpTo": JSONValue(integer: QuantileSketch.exactLimit),
      "relativeAccuracy": JSONValue(.number(QuantileSketch.relativeAccuracy)),
      "by": grouping.map { JSONValue(.string($0.rawValue)) } ?? nil,
      "all": Self.json(stats.all),
      "groups": JSONValue(
        .array(
          groupNames.map { name in
            var value = Self.json(stats.groups[name]!)
            if case .object(let members) = value.kind {
              value = JSONValue(
                .object([JSONMember(key: "name", value: JSONValue(.string(name)))] + members))
            }
            return value
          })),
    ]
  }

  private static func json(_ group: StatsGroup) -> JSONValue {
    func number(_ value: Double?) -> JSONValue { value.map { JSONValue(.number($0)) } ?? nil }
    func percentiles(_ series: QuantileSketch, _ statistics: [StatsLimit.Statistic]) -> [JSONMember]
    {
      let values = series.values(atPercentiles: statistics.map(\.percentile))
      return zip(statistics, values).map { JSONMember(key: $0.rawValue, value: number($1)) }
    }
    let outcomes = LaunchOutcome.allCases.map {
      JSONMember(key: $0.rawValue, value: JSONValue(integer: group.outcomes[$0, default: 0]))
    }
    return [
      "reports": JSONValue(integer: group.reports),
      "outcomes": JSONValue(.object(outcomes)),
      "failureRate": number(group.share(.failed)),
      "routedShare": number(group.share(.routed)),
      "cancelledShare": number(group.share(.cancelled)),
      "degradedShare": number(group.share(.degraded)),
      "backgroundCompletion": number(group.backgroundCompletion),
      "deferredStarted": JSONValue(integer: group.deferredStarted),
      "deferredSucceeded": JSONValue(integer: group.deferredSucceeded),
      "milestones": JSONValue(
        .array(
          group.orderedMilestones.map { name, milestone in
            JSONValue(
              .object(
                [
                  JSONMember(key: "name", value: JSONValue(.string(name))),
                  JSONMember(key: "reached", value: JSONValue(integer: milestone.times.count)),
                  JSONMember(key: "missed", value: JSONValue(integer: milestone.missed)),
                ] + percentiles(milestone.times, [.p50, .p90, .p99, .max]) + [
                  JSONMember(key: "estimated", value: JSONValue(.bool(!milestone.times.isExact)))
                ]))
          })),
      "steps": JSONValue(
        .array(
          group.orderedSteps.map { id, step in
            [
              "id": JSONValue(.string(id)),
              "ran": JSONValue(integer: step.durations.count),
              "notStarted": JSONValue(integer: step.notStarted),
              "duration": JSONValue(
                .object(percentiles(step.durations, [.p50, .p90, .p99, .max]))),
              "wait": JSONValue(.object(percentiles(step.waits, [.p50, .p90, .p99, .max]))),
              "estimated": JSONValue(.bool(!step.durations.isExact || !step.waits.isExact)),
            ]
          })),
    ]
  }
}
