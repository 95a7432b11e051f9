import Foundation
import LaunchJSON
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
  /// `-journal`, a queue, a state file, a file in a migrations or images folder) and the
  /// `.lock` file beside each that the app and the launch lock to write it, the cache's
  /// folder, the launch record with its lock and folder, and the `--history` folder. This is
  /// the one list of the files a launch uses.
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
          let resolved = StepContext.resolve(value, against: base)
          used.append((resolved.path, owner))
          for suffix in Self.companionSuffixes { used.append((resolved.path + suffix, owner)) }
          // The lock the app and the launch take to write a shared file: replacing it would
          // give the two of them different locks.
          used.append((SharedFile(url: resolved).lockURL.path, owner))
        }
      }
    }
    let record = LaunchRecordFile(dataDirectory: plan.dataDirectory, manifestName: plan.name)
    used += [
      (plan.cacheDirectory.path, "the launch's cache"),
      (record.folder.path, "the launch records"),
      (record.url.path, "the launch record"),
      (record.lockURL.path, "the launch record's lock"),
    ]
    if let history { used.append((history, "'--history'")) }
    try refuse(used.map { ($0.path, "which the launch uses (\($0.owner))") })
  }

  /// The files SQLite and the plugins keep beside a file they use.
  private static let companionSuffixes = [
    "-wal", "-shm", "-journal", ".damaged", ".recovering", ".bak",
  ]
}
