import Foundation
import LaunchOrchestrator

/// `orchestrate graph <manifest>`: the launch DAG as Graphviz dot or Mermaid.
struct GraphCommand: Command {
  let options: GraphOptions
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let plan = try ManifestLoading(registry: registry, console: console).load(options.manifest)
    console.text(options.format == .dot ? dot(plan) : mermaid(plan))
    return .success
  }

  /// A node of the drawn graph: a step, a milestone or a signal the app sends.
  private enum Node {
    case step(Int)
    case milestone(Int)
    case signal(Int)
  }

  /// What an edge means, which decides how it is drawn.
  private enum EdgeKind {
    case dependsOn, after, reachesMilestone, releasesDeferred, releasesWaiting
  }

  /// Every edge of the drawing, in the order both formats print them.
  private func edges(_ plan: LaunchPlan) -> [(from: Node, to: Node, kind: EdgeKind)] {
    var edges: [(from: Node, to: Node, kind: EdgeKind)] = []
    for step in plan.steps {
      edges += step.dependsOn.map { (.step($0), .step(step.index), .dependsOn) }
      edges += step.after.map { (.step($0), .step(step.index), .after) }
      edges += step.waitFor.map { (.signal($0), .step(step.index), .releasesWaiting) }
    }
    for milestone in plan.milestones {
      edges += milestone.steps.map { (.step($0), .milestone(milestone.index), .reachesMilestone) }
      edges += milestone.deferredSteps.map {
        (.milestone(milestone.index), .step($0), .releasesDeferred)
      }
    }
    return edges
  }

  private func dot(_ plan: LaunchPlan) -> String {
    func quoted(_ text: String) -> String {
      let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
        of: "\"", with: "\\\""
      )
      .replacingOccurrences(of: "\n", with: "\\n")
      return "\"" + escaped + "\""
    }
    func name(_ node: Node) -> String {
      switch node {
      case .step(let index): quoted(plan.steps[index].id)
      case .milestone(let index): quoted("milestone:" + plan.milestones[index].name)
      case .signal(let index): quoted("signal:" + plan.signals[index])
      }
    }
    var lines = [
      "digraph \(quoted(plan.name)) {", "  rankdir=LR;",
      "  node [shape=box, style=rounded, fontname=Helvetica];",
    ]
    for step in plan.steps {
      let bold = step.priority >= .high ? ", penwidth=2" : ""
      // An on-demand step is outside the launch until the app ensures it: drawn dashed.
      let onDemand = step.trigger == .onDemand
      let label = "\(step.id)\n\(step.plugin) · \(step.priority)\(onDemand ? "\non demand" : "")"
      lines.append(
        "  \(name(.step(step.index))) [label=\(quoted(label))\(bold)\(onDemand ? ", style=\"rounded,dashed\"" : "")];"
      )
    }
    for (index, signal) in plan.signals.enumerated() {
      lines.append("  \(name(.signal(index))) [label=\(quoted(signal)), shape=cds];")
    }
    for milestone in plan.milestones {
      lines.append(
        "  \(name(.milestone(milestone.index))) [label=\(quoted(milestone.name)), shape=diamond];")
    }
    for edge in edges(plan) {
      let style =
        switch edge.kind {
        case .dependsOn: ""
        case .after: " [style=dashed]"
        case .reachesMilestone, .releasesDeferred: " [style=dotted]"
        case .releasesWaiting: " [style=dashed, label=\"waitFor\"]"
        }
      lines.append("  \(name(edge.from)) -> \(name(edge.to))\(style);")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  private func mermaid(_ plan: LaunchPlan) -> String {
    // Mermaid node ids must be plain; labels carry the real names.
    func name(_ node: Node) -> String {
      switch node {
      case .step(let index): "s\(index)"
      case .milestone(let index): "m\(index)"
      case .signal(let index): "g\(index)"
      }
    }
    // A node is one line: a newline in a name would end it and start a forged one. Labels are
    // HTML to Mermaid (`<br/>` breaks them): a `<` in a name would open a tag.
    func label(_ text: String) -> String {
      TerminalText.escaped(text).replacingOccurrences(of: "\"", with: "#quot;")
        .replacingOccurrences(of: "<", with: "#lt;").replacingOccurrences(of: ">", with: "#gt;")
    }
    var lines = ["flowchart LR"]
    for step in plan.steps {
      let onDemand = step.trigger == .onDemand ? "<br/>on demand" : ""
      lines.append(
        "  \(name(.step(step.index)))[\"\(label(step.id))<br/>\(label(step.plugin)) · \(step.priority)\(onDemand)\"]"
      )
    }
    for (index, signal) in plan.signals.enumerated() {
      lines.append("  \(name(.signal(index)))>\"\(label(signal))\"]")
    }
    for milestone in plan.milestones {
      lines.append("  \(name(.milestone(milestone.index))){{\"\(label(milestone.name))\"}}")
    }
    for edge in edges(plan) {
      let arrow =
        switch edge.kind {
        case .dependsOn: "-->"
        case .after: "-.->"
        case .reachesMilestone: "-.-"
        case .releasesDeferred: "-. deferUntil .->"
        case .releasesWaiting: "-. waitFor .->"
        }
      lines.append("  \(name(edge.from)) \(arrow) \(name(edge.to))")
    }
    return lines.joined(separator: "\n")
  }
}
