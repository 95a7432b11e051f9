import Foundation
import LaunchOrchestrator

extension RunCommand {
  /// The files `run` writes after the launch, checked before it starts.
  struct OutputFiles {
    var report: URL?
    var trace: URL?

    /// Checks the `--report` and `--trace` targets.
    /// - Throws: a usage error naming the target that cannot be written.
    init(_ options: RunOptions) throws(CLIError) {
      report = try Self.destination(options.report, for: options.$report)
      trace = try Self.destination(options.trace, for: options.$trace)
    }

    /// Writes the report and the trace that were asked for.
    func write(_ report: LaunchReport) throws(CLIError) {
      if let url = self.report { try Self.write(report.jsonText, to: url, what: "report") }
      if let url = trace {
        try Self.write(JSONWriter.prettyPrinted(report.chromeTrace), to: url, what: "trace")
      }
    }

    /// The file an option names, checked before the launch (not after it) to be in a folder
    /// that exists.
    private static func destination(
      _ path: String?, for option: ArgumentDeclaration
    ) throws(CLIError) -> URL? {
      guard let path else { return nil }
      let url = URL(fileURLWithPath: path)
      var isDirectory: ObjCBool = false
      let folder = url.deletingLastPathComponent().path
      guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
        isDirectory.boolValue
      else {
        throw .usage(
          "The folder for '\(option.name) \(path)' does not exist; create '\(folder)' first.",
          command: RunOptions.spec)
      }
      return url
    }

    private static func write(_ text: String, to url: URL, what: String) throws(CLIError) {
      do {
        try Data(text.utf8).write(to: url, options: .atomic)
      } catch {
        throw CLIError(
          message: "Cannot write the \(what) to '\(url.path)': \(error.localizedDescription)",
          exitCode: .cannotCreate)
      }
    }
  }
}
