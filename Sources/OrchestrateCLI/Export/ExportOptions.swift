import LaunchOrchestrator

/// The command line of `orchestrate export`.
package struct ExportOptions: CommandOptions {
  package static let configuration = CommandConfiguration(
    name: "export",
    abstract: "Writes launch reports in another tool's format: 'otlp' for OpenTelemetry.",
    discussion: """
      'otlp' writes an OTLP/JSON ExportTraceServiceRequest, which any OpenTelemetry \
      collector accepts (POST it to /v1/traces): one trace per launch, a root span for the \
      launch and a child span for each attempt of each step (and of each cached step's \
      refresh), milestones and pauses as events, attributes for the outcome, state, \
      priority, plugin, context and app version. Reads report files, history entries, \
      JSON Lines files and folders of them. Exits 0 when it wrote; 64 for a wrong command \
      line or an output that is an input; 65 when no report could be read; 66 when a path \
      does not exist; 73 when the output cannot be written or may not be replaced.
      """)

  @Argument("format", help: "The format: 'otlp'.")
  package var format: String

  @Arguments("reports", help: "Report files, history entries, JSON Lines files and folders.")
  package var reports: [String]

  @Option(
    "--output", valueName: "file", help: "Write to this file instead of standard output ('-').",
    short: "o")
  package var output: String?

  package init() {}

  package func validate() throws(CLIError) {
    guard format == "otlp" else {
      let hint = Suggestions.didYouMean(format, in: ["otlp"])
      throw .invalidValue(
        "Unknown format '\(format)' for 'export'.\(hint) The one format is 'otlp' (orchestrate export otlp <report> ...)."
      )
    }
  }
}
