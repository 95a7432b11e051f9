import Foundation
import LaunchOrchestrator

/// `orchestrate graph <manifest>`: the launch DAG as Graphviz dot or Mermaid.
struct GraphCommand: Command {
  static let spec = CommandSpec(
    name: "graph", abstract: "Draws the launch graph as Graphviz dot or Mermaid.",
    discussion: """
      Solid edges are hard dependencies (dependsOn), dashed ones ordering only (after), dotted \
      ones milestones: a step feeds the milestone, the milestone releases deferred steps. \
      Each step shows its plugin and priority.
      """,
    arguments: [.init(name: "manifest", help: "The launch manifest (JSON).")],
    options: [
      .init(name: "--format", valueName: "dot|mermaid", help: "The output format (default: dot).")
    ])

  let arguments: ParsedArguments
  let registry: PluginRegistry
  let console: Console

  func execute() async throws(CLIError) -> ExitCode {
    let path = try Self.singleManifest(arguments)
    let format = arguments.value("--format") ?? "dot"
    guard ["dot", "mermaid"].contains(format) else {
      let hint =
        Suggestions.closest(to: format, in: ["dot", "mermaid"]).map { " Did you mean '\($0)'?" }
        ?? ""
      throw .usage(
        "Unknown format '\(format)' for '--format'.\(hint) Use 'dot' or 'mermaid'.",
        command: Self.spec)
    }
    let plan = try ManifestLoading(registry: registry, console: console).load(path)
    console.out(format == "dot" ? dot(plan) : mermaid(plan))
    return .success
  }

  private func dot(_ plan: LaunchPlan) -> String {
    func quoted(_ text: String) -> String {
      let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
        of: "\"", with: "\\\""
      )
      .replacingOccurrences(of: "\n", with: "\\n")
      return "\"" + escaped + "\""
    }
    var lines = [
      "digraph \(quoted(plan.name)) {", "  rankdir=LR;",
      "  node [shape=box, style=rounded, fontname=Helvetica];",
    ]
    for step in plan.steps {
      let bold = step.priority >= .high ? ", penwidth=2" : ""
      lines.append(
        "  \(quoted(step.id)) [label=\(quoted("\(step.id)\n\(step.plugin) · \(step.priority)"))\(bold)];"
      )
    }
    for milestone in plan.milestones {
      lines.append(
        "  \(quoted("milestone:" + milestone.name)) [label=\(quoted(milestone.name)), shape=diamond];"
      )
    }
    for step in plan.steps {
      for dependency in step.dependsOn {
        lines.append("  \(quoted(plan.steps[dependency].id)) -> \(quoted(step.id));")
      }
      for dependency in step.after {
        lines.append("  \(quoted(plan.steps[dependency].id)) -> \(quoted(step.id)) [style=dashed];")
      }
    }
    for milestone in plan.milestones {
      let node = quoted("milestone:" + milestone.name)
      for step in milestone.steps {
        lines.append("  \(quoted(plan.steps[step].id)) -> \(node) [style=dotted];")
      }
      for step in milestone.deferredSteps {
        lines.append("  \(node) -> \(quoted(plan.steps[step].id)) [style=dotted];")
      }
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  private func mermaid(_ plan: LaunchPlan) -> String {
    // Mermaid node ids must be plain; labels carry the real names.
    func node(_ index: Int) -> String { "s\(index)" }
    func label(_ text: String) -> String { text.replacingOccurrences(of: "\"", with: "#quot;") }
    var lines = ["flowchart LR"]
    for step in plan.steps {
      lines.append(
        "  \(node(step.index))[\"\(label(step.id))<br/>\(label(step.plugin)) · \(step.priority)\"]")
    }
    for milestone in plan.milestones {
      lines.append("  m\(milestone.index){{\"\(label(milestone.name))\"}}")
    }
    for step in plan.steps {
      for dependency in step.dependsOn {
        lines.append("  \(node(dependency)) --> \(node(step.index))")
      }
      for dependency in step.after {
        lines.append("  \(node(dependency)) -.-> \(node(step.index))")
      }
    }
    for milestone in plan.milestones {
      for step in milestone.steps { lines.append("  \(node(step)) -.- m\(milestone.index)") }
      for step in milestone.deferredSteps {
        lines.append("  m\(milestone.index) -. deferUntil .-> \(node(step))")
      }
    }
    return lines.joined(separator: "\n")
  }
}
