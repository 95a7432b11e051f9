/// The command line of `orchestrate blame`.
package struct BlameOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "blame",
    abstract: "Lists the steps that delayed a milestone of a launch report, the worst first.",
    discussion: """
      A step's delay is the time it held the milestone's critical chain: from the end of the \
      link before it (the launch's start for the first) to its own end, so its own work plus \
      whatever it waited for after the link before ended (a slot, a delay, a backoff). The \
      delays add up to the milestone's time; steps off the chain delayed it by nothing and are \
      not listed. The chain follows, as 'orchestrate run' prints it. The milestone is 'interactive', else the report's first reached milestone, \
      else the launch's end. Exits 0 when it listed; 64 when the milestone is not in the \
      report; 65 when the file is not a report or predates critical chains; 66 when it cannot \
      be read.
      """)

  @Argument("report", help: "A report written by 'orchestrate run --report'.")
  package var report: String

  @Option(
    "--milestone", valueName: "name", help: "Blame this milestone instead of 'interactive'.")
  package var milestone: String?

  package init() {}
}
