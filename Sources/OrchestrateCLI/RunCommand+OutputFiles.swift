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
  /// writes: a path any step's parameters give, or its fallback's (a store with its `-wal`,
  /// `-shm` and `-journal`, a queue, a state file, a file in a migrations or images folder),
  /// and the `.lock` file beside each that the app and the launch lock to write it, the
  /// cache's folder, the launch record with its lock and folder, and the `--history` folder.
  /// This is the one list of the files a launch uses. Beside each such file (beside the file
  /// a symbolic link leads to, for a linked one), the files its plugin declares it keeps there
  /// (`companions`: `library.sqlite-wal`, `library.sqlite.created`) are refused too, and so
  /// is any existing file whose name continues it (`library.sqlite.corrupt-20261123T101500`,
  /// `queue.json.unreadable-…`: the user's data moved aside).
  /// - Throws: a usage ``CLIError`` naming the output and the step's parameter.
  func refuseFiles(of plan: LaunchPlan, registry: PluginRegistry, history: String?)
    throws(CLIError)
  {
    guard !claimed.isEmpty else { return }
    var used: [(path: String, owner: String)] = []
    var kept: [(path: String, owner: String)] = []
    for parameter in plan.manifest.pathParameters(registry: registry) {
      let (path, owner) = (parameter.written, parameter.owner(in: plan.manifest))
      for base in [plan.dataDirectory, plan.manifestDirectory] {
        let resolved = StepContext.resolve(path, against: base)
        // Where the file is, a symbolic link followed: SQLite keeps a linked store's WAL,
        // journal and the plugins their markers beside the file the link leads to.
        var places = [resolved.path]
        let canonical = FileIdentity(path: resolved.path)?.canonicalPath
        if let canonical, canonical != resolved.path { places.append(canonical) }
        for place in places {
          used.append((place, owner))
          for suffix in parameter.companions { used.append((place + suffix, owner)) }
        }
        if let canonical { kept.append((canonical, owner)) }
        // The lock the app and the launch take to write a shared file: replacing it would
        // give the two of them different locks.
        used.append((SharedFile(url: resolved).lockURL.path, owner))
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
    try refuseNamesContinuing(kept)
  }

  /// Refuses an output that exists and whose name continues that of a file the launch uses,
  /// in its folder (`library.sqlite` and `library.sqlite.corrupt-20261123T101500`), however
  /// the output is spelled: the names SQLite and the plugins give the files they keep beside
  /// it, some of them the user's data moved aside. A folder's name is no file's to continue.
  /// - Parameter files: each used file's canonical path, and who uses it.
  private func refuseNamesContinuing(_ files: [(path: String, owner: String)])
    throws(CLIError)
  {
    let existing = claimed.filter { $0.identity.node != nil }
    guard !existing.isEmpty else { return }
    for (path, owner) in files {
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder),
        isFolder.boolValue
      {
        continue
      }
      for (output, identity) in existing {
        let written = identity.canonicalPath
        guard written.hasPrefix(path) else { continue }
        let rest = written.dropFirst(path.count)
        guard let first = rest.first, first == "-" || first == ".", !rest.contains("/")
        else { continue }
        throw .usage(
          "'\(output.option.name) \(output.path)' is named as a file kept beside '\(path)', which the launch uses (\(owner)); writing there could destroy it. Name another file.",
          command: command)
      }
    }
  }
}
