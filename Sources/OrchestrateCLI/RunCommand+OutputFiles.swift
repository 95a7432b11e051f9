import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

extension RunCommand {
  /// The files `run` writes after the launch (`--report`, `--trace`), checked before it
  /// starts so that a launch never runs only to find that its results cannot be kept, or
  /// that keeping them would destroy something.
  ///
  /// A target is refused when it is the manifest, the other output (however spelled: `..`,
  /// symbolic links, hard links), a folder, a device, a FIFO or a socket, or a link to
  /// nothing. A symbolic link to a regular file is written through (the link stays). `-` is
  /// standard output. The writing itself is ``SafeFiles/writeAtomically(_:to:)``: atomic,
  /// keeping the file's permissions.
  struct OutputFiles {
    /// Where one output goes.
    enum Target {
      case standardOutput
      /// `url` as given; `linkTarget` when it is a symbolic link, the file written.
      case file(URL, linkTarget: URL?)
    }

    /// What is written.
    enum Kind: String {
      case report, trace
    }

    /// One file asked for, as given and where it goes.
    struct Output {
      var kind: Kind
      var option: ArgumentDeclaration
      var path: String
      var target: Target
    }

    /// The outputs asked for, `--report` first.
    private(set) var outputs: [Output] = []

    /// Checks the `--report` and `--trace` targets against each other and the manifest.
    /// - Throws: a ``CLIError`` naming the target and why it is refused.
    init(_ options: RunOptions) throws(CLIError) {
      let asked = [
        (Kind.report, options.report, options.$report), (.trace, options.trace, options.$trace),
      ].compactMap { kind, path, option in path.map { (kind, $0, option) } }
      let toStandardOutput = asked.filter { $0.1 == "-" }.map(\.2.name)
      if toStandardOutput.count > 1 {
        throw .usage(
          "'\(toStandardOutput.joined(separator: " -' and '")) -' both ask for standard output; send one of them to a file.",
          command: RunOptions.spec)
      }
      if let option = toStandardOutput.first, options.json {
        throw .usage(
          "'\(option) -' and '\(options.$json.name)' both print on standard output; use one of them.",
          command: RunOptions.spec)
      }
      let manifest = FileIdentity(path: options.manifest)
      var claimed: [(output: Output, identity: FileIdentity)] = []
      for (kind, path, option) in asked {
        guard path != "-" else {
          outputs.append(Output(kind: kind, option: option, path: path, target: .standardOutput))
          continue
        }
        let (target, written) = try Self.check(path, for: option)
        let output = Output(kind: kind, option: option, path: path, target: target)
        outputs.append(output)
        // Its folder was there a moment ago; if it has gone, the write will say so.
        guard let identity = FileIdentity(path: written.path) else { continue }
        if let manifest, identity == manifest {
          throw .usage(
            "'\(option.name) \(path)' is the manifest '\(options.manifest)'; writing there would destroy it. Name another file.",
            command: RunOptions.spec)
        }
        if let other = claimed.first(where: { $0.identity == identity })?.output {
          throw .usage(
            "'\(option.name) \(path)' is the same file as '\(other.option.name) \(other.path)'; one would overwrite the other. Name two different files.",
            command: RunOptions.spec)
        }
        claimed.append((output, identity))
      }
    }

    /// What people should know before the launch: the links that are written through.
    var notes: [String] {
      outputs.compactMap { output in
        guard case .file(_, .some(let written)) = output.target else { return nil }
        return
          "Note: '\(output.option.name) \(output.path)' is a symbolic link; its target '\(written.path)' will be written, and the link kept."
      }
    }

    /// Writes the report and the trace that were asked for; both are tried even when one
    /// fails.
    func write(_ report: LaunchReport, console: Console) throws(CLIError) {
      var failure: CLIError?
      for output in outputs {
        let text =
          switch output.kind {
          case .report: report.jsonText
          case .trace: JSONWriter.prettyPrinted(report.chromeTrace)
          }
        switch output.target {
        // Both are JSON: names that must not reach a terminal raw get JSON's escapes.
        case .standardOutput: console.data(Data(TerminalText.escapedJSON(text).utf8))
        case .file(let url, _):
          do {
            try SafeFiles.writeAtomically(Data(text.utf8), to: url)
          } catch {
            failure =
              failure
              ?? CLIError(
                message: "Cannot write the \(output.kind.rawValue) to '\(output.path)': \(error)",
                exitCode: .cannotCreate)
          }
        }
      }
      if let failure { throw failure }
    }

    /// The target of `path`, and the file that will be written: the final target of a link.
    private static func check(
      _ path: String, for option: ArgumentDeclaration
    ) throws(CLIError) -> (Target, written: URL) {
      let url = URL(fileURLWithPath: path)
      let folder = url.deletingLastPathComponent().path
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory),
        isDirectory.boolValue
      else {
        throw .usage(
          "The folder for '\(option.name) \(path)' does not exist; create '\(folder)' first.",
          command: RunOptions.spec)
      }
      let written: URL
      do {
        written = try SafeFiles.checkReplaceable(url)
      } catch {
        throw CLIError(
          message: "Refusing '\(option.name) \(path)' before the launch: \(error).",
          exitCode: .cannotCreate)
      }
      let isLink = written.standardizedFileURL.path != url.standardizedFileURL.path
      return (.file(url, linkTarget: isLink ? written : nil), written)
    }
  }

  /// Which file a path names, however it is spelled: the canonical path of its folder and
  /// its name, and the device and inode when it exists (which also catches hard links).
  struct FileIdentity: Equatable {
    var canonicalPath: String
    var node: Node?

    struct Node: Equatable {
      var device: UInt64
      var inode: UInt64
    }

    /// `nil` when the folder of `path` does not exist.
    init?(path: String) {
      let url = URL(fileURLWithPath: path).standardizedFileURL
      var info = stat()
      if stat(url.path, &info) == 0, let resolved = Self.realPath(url.path) {
        canonicalPath = resolved
        node = Node(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return
      }
      guard let folder = Self.realPath(url.deletingLastPathComponent().path) else { return nil }
      canonicalPath = folder + "/" + url.lastPathComponent
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
      if let left = lhs.node, let right = rhs.node { return left == right }
      return lhs.canonicalPath == rhs.canonicalPath
    }

    private static func realPath(_ path: String) -> String? {
      guard let resolved = realpath(path, nil) else { return nil }
      defer { free(resolved) }
      return String(cString: resolved)
    }
  }
}
