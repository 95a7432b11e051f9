import Foundation
import LaunchOrchestrator

extension OutputFiles {
  /// The `--report`, `--trace` and `--otlp` targets of `run`, checked against each other
  /// and the manifest.
  /// - Throws: a ``CLIError`` naming the target and why it is refused.
  init(_ options: RunOptions) throws(CLIError) {
    try self.init(
      [
        (.report, options.report, options.$report), (.trace, options.trace, options.$trace),
        (.otlp, options.otlp, options.$otlp),
      ], json: options.json ? options.$json : nil, command: RunOptions.spec,
      moment: "before the launch")
    if let manifest = FileIdentity(path: options.manifest),
      let output = claimed.first(where: { $0.identity == manifest })?.output
    {
      throw .usage(
        "'\(output.option.name) \(output.path)' is the manifest '\(options.manifest)'; writing there would destroy it. Name another file.",
        command: RunOptions.spec)
    }
  }

  /// Writes the report and the traces that were asked for; all are tried even when one
  /// fails.
  func write(_ report: LaunchReport, console: Console) throws(CLIError) {
    try write(
      { output in
        switch output.kind {
        case .report: report.jsonText
        case .trace: JSONWriter.prettyPrinted(report.chromeTrace)
        case .otlp:
          JSONWriter.compact(
            OTLPTrace.request([OTLPTrace.Launch(report: report, fallbackStart: Date())])) + "\n"
        case .chart: ""
        }
      }, console: console)
  }

  /// Refuses, before the launch runs, an output that names a file the launch reads or
  /// writes: a path any step's parameters give (a store with its `-wal`, `-shm` and
  /// `-journal`, a queue, a state file, a file in a migrations or images folder), the
  /// cache's folder, and the `--history` folder.
  /// - Throws: a usage ``CLIError`` naming the output and the step's parameter.
  func refuseFiles(of plan: LaunchPlan, registry: PluginRegistry, history: String?)
    throws(CLIError)
  {
    guard !claimed.isEmpty else { return }
    var used: [(path: String, owner: String)] = []
    for (index, step) in plan.manifest.steps.enumerated() {
      guard let descriptor = registry.descriptor(for: step.plugin) else { continue }
      for parameter in descriptor.parameters where parameter.type == .path {
        guard let value = step.params?[parameter.name]?.stringValue ?? parameter.defaultValue
        else { continue }
        let owner = "'\(parameter.name)' of step '\(plan.manifest.steps[index].id)'"
        for base in [plan.dataDirectory, plan.manifestDirectory] {
          let resolved = StepContext.resolve(value, against: base).path
          used.append((resolved, owner))
          for suffix in Self.companionSuffixes { used.append((resolved + suffix, owner)) }
        }
      }
    }
    used.append((plan.cacheDirectory.path, "the launch's cache"))
    if let history { used.append((history, "'--history'")) }
    try refuse(used.map { ($0.path, "which the launch uses (\($0.owner))") })
  }

  /// The files SQLite and the plugins keep beside a file they use.
  private static let companionSuffixes = [
    "-wal", "-shm", "-journal", ".damaged", ".recovering", ".bak",
  ]
}
