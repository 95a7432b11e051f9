import LaunchOrchestrator

/// A critical chain as text, like systemd-analyze critical-chain: the last link first, each
/// with when it started (`@`), how long it took (`+`), and what it waited for before.
enum CriticalChainText {
  /// The chain shown by `run` and `blame`: `interactive`'s, else the first milestone's, else
  /// (when `launchEnd`) the launch end's.
  static func preferred(
    in report: LaunchReport, launchEnd: Bool = true
  ) -> LaunchReport.CriticalChain? {
    report.criticalChain(to: "interactive")
      ?? report.criticalChains.first { $0.milestone != nil }
      ?? (launchEnd ? report.criticalChains.first : nil)
  }

  /// What the chain is to: `'interactive' at 1.250s` or `the launch's end at 2.000s`.
  static func target(of chain: LaunchReport.CriticalChain) -> String {
    let end = chain.links.last.map { TimeText.seconds($0.end) } ?? "0.000s"
    return chain.milestone.map { "'\($0)' at \(end)" } ?? "the launch's end at \(end)"
  }

  /// The heading, then one indented line per link, the last link first: `books @0.040s
  /// +0.005s (slot freed by 'store', then waited 0.010s)`.
  static func render(_ chain: LaunchReport.CriticalChain) -> [String] {
    var lines = ["critical chain to \(target(of: chain)):"]
    for (depth, link) in chain.links.enumerated().reversed() {
      var line =
        "\(String(repeating: "  ", count: chain.links.count - depth))\(link.step) @\(TimeText.seconds(link.start)) +\(TimeText.seconds(link.end - link.start))"
      var reasons: [String] = []
      if depth > 0, let via = link.heldVia {
        let previous = chain.links[depth - 1].step
        switch via {
        case .dependency: reasons.append("after '\(previous)'")
        case .slot: reasons.append("slot freed by '\(previous)'")
        case .deferral: reasons.append("deferred until '\(previous)' ended")
        }
      }
      if link.wait > .zero {
        reasons.append(
          "\(reasons.isEmpty ? "waited" : "then waited") \(TimeText.seconds(link.wait))")
      }
      if !reasons.isEmpty { line += " (\(reasons.joined(separator: ", ")))" }
      lines.append(line)
    }
    return lines
  }
}
