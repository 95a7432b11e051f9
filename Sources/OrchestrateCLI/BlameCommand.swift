import LaunchOrchestrator

/// `orchestrate blame <report>`: the steps on a milestone's critical chain, by how long each
/// held it back.
struct BlameCommand: Command {
  let options: BlameOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let (report, _) = try TimesSource.readRun(options.report, for: options.$report.synopsis)
    ExitKeeper.keep(report)
    guard !report.criticalChains.isEmpty else {
      throw CLIError(
        message:
          "The report '\(options.report)' has no critical chains: it was written by an older orchestrate or no step ran; run the launch again with 'orchestrate run --report'.",
        exitCode: .invalidManifest)
    }
    let chain: LaunchReport.CriticalChain
    if let name = options.milestone {
      guard let found = report.criticalChain(to: name) else {
        let reached = report.criticalChains.compactMap(\.milestone)
        let known =
          reached.isEmpty
          ? "it reached no milestone"
          : "its reached milestones are \(reached.map { "'\($0)'" }.joined(separator: ", "))"
        throw CLIError(
          message:
            "The report '\(options.report)' has no critical chain to '\(name)': \(known).",
          exitCode: .usage)
      }
      chain = found
    } else {
      guard let preferred = CriticalChainText.preferred(in: report) else { return .success }
      chain = preferred
    }
    console.out("What delayed \(CriticalChainText.target(of: chain)):")
    let links = Dictionary(
      chain.links.map { ($0.step, $0) }, uniquingKeysWith: { first, _ in first })
    var rows = [["delay", "step", "work", "waited", "held via"]]
    for share in chain.blame {
      guard let link = links[share.step] else { continue }
      rows.append([
        TimeText.seconds(share.delay), share.step, TimeText.seconds(link.work),
        TimeText.seconds(link.wait), link.heldVia?.rawValue ?? "-",
      ])
    }
    for line in Table.render(rows, rightAligned: [0, 2, 3]) { console.out("  \(line)") }
    console.out("")
    for line in CriticalChainText.render(chain) { console.out(line) }
    return .success
  }
}
