/// The command line of `orchestrate graph`.
package struct GraphOptions: CommandOptions {
  /// The drawing's language.
  package enum Format: String, CaseIterable, Sendable {
    case dot, mermaid
  }

  package static let configuration = CommandConfiguration(
    name: "graph", abstract: "Draws the launch graph as Graphviz dot or Mermaid.",
    discussion: """
      Solid edges are hard dependencies (dependsOn), dashed ones ordering only (after), dotted \
      ones milestones: a step feeds the milestone, the milestone releases deferred steps. \
      Each step shows its plugin and priority.
      """)

  @Argument("manifest", help: "The launch manifest (JSON).")
  package var manifest: String

  @Option(
    "--format", valueName: "dot|mermaid", help: "The output format (default: dot).", parse: .oneOf)
  package var format: Format = .dot

  package init() {}
}
