/// The command line of `orchestrate compare`.
package struct CompareOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "compare",
    abstract: "Compares a launch report with another, or with the median of a history folder.",
    discussion: """
      Shows, per milestone (when it was reached) and per step (how long it ran), the report's \
      time, the baseline's, and the change. A baseline folder is one 'orchestrate run \
      --history' keeps: its runs that succeeded or were degraded give a median per milestone \
      and per step, and their spread gives the noise: the median absolute deviation (MAD) of \
      the runs, times 3 × 1.4826 (about three standard deviations, but robust to one odd run), \
      and at least 1ms. A change larger than that is flagged 'slower' or 'faster'. With fewer \
      than 5 runs, or against a single report, nothing is flagged: one run cannot say what is \
      noise. Exits 0 when it compared; 64 when the report named is a folder; 65 when a file is \
      not a report; 66 when one cannot be read.
      """)

  @Argument("report", help: "The report to judge: a --report file or one history entry.")
  package var report: String

  @Argument(
    "baseline",
    help: "What to compare it with: another report, or a history folder (its medians).")
  package var baseline: String

  package init() {}
}
