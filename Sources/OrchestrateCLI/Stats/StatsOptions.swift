/// The command line of `orchestrate stats`.
package struct StatsOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "stats",
    abstract:
      "Summarises any number of launch reports: percentiles, failure rates, groups, a chart.",
    discussion: """
      Reads report files (--report, a LaunchReportStore's folder, a --history folder, uploaded \
      files) and JSON Lines files ('.jsonl' or '.ndjson', one report per line), through folders and their \
      subfolders. Prints per milestone how many launches reached it and its p50, p90, p99 and \
      maximum; per step its duration and wait (from ready to start) p50 and p90; the failure \
      rate, the shares of routed, cancelled and degraded launches, and the background \
      completion rate (deferred steps that succeeded among those that started). Percentiles \
      are nearest-rank, exact for series of up to 16,384 values and estimated beyond, within \
      0.5% (marked '~'). Files that are not reports are counted and skipped.

      Exits 0 when it summarised; 3 when a --fail-if limit is broken (each named with its \
      value); 64 for a wrong command line, a limit naming a milestone or step no report \
      has, or an --svg file that is an input; 66 when a path does not exist, or no report \
      could be read for the limits; 73 when the --svg file cannot be written or may not be \
      replaced (the broken limits are still printed).
      """)

  @Arguments("files-or-folders", help: "Report files, JSON Lines files and folders of them.")
  package var paths: [String]

  @Option(
    "--by", valueName: "key",
    help:
      "Split every figure into groups: by 'version' (the app's), 'reason', 'arm', 'device' or 'firstLaunch'.",
    parse: .oneOf)
  package var grouping: StatsGrouping?

  @Option(
    "--svg", valueName: "file",
    help:
      "Write a chart of each milestone's times per group (box plots on one time axis); '-' for standard output."
  )
  package var svg: String?

  @RepeatedOption(
    "--fail-if", valueName: "limit",
    help:
      "Exit 3 when a figure breaks this limit ('>' above, '<' below): 'interactive.p90>2s', 'store.wait.p90>100ms', 'failureRate>0.1%', 'backgroundCompletion<95%'.",
    parse: .statsLimit)
  package var limits: [StatsLimit]

  @Flag("--json", help: "Print the figures as JSON.")
  package var json: Bool

  package init() {}
}
