import Foundation
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The files a command writes at its end (`run --report`/`--trace`/`--otlp`, `stats --svg`,
/// `export -o`), checked before it starts so that it never works only to find that its
/// results cannot be kept, or that keeping them would destroy something. One declaration of
/// the rules, so that every command that writes a file keeps the same promise
/// (docs/reliability.md).
///
/// A target is refused when it is a file the command reads or writes (``refuse(_:)``,
/// ``refuseHardLinks(to:owner:)``), another output (however spelled: `..`, symbolic links,
/// hard links), a regular file the user may not write (by its permission bits, as the shell
/// judges them, also for root), a folder, a block device or a socket, or a link to nothing.
/// A symbolic link to a regular file is written through (the link stays). `-` is standard
/// output, and so is any name of the file standard output already is (`/dev/stdout`,
/// `/dev/fd/1`); a terminal, another character device or a FIFO is written in place, never
/// renamed over. A regular file is written as ``SafeFiles/writeAtomically(_:to:followingLinks:)``
/// writes one: atomic, keeping the file's permissions, and by pieces for a long output
/// (``stream(_:console:_:)``), into the temporary file that takes its place at the end.
struct OutputFiles {
  /// Where one output goes.
  enum Target {
    case standardOutput
    /// `url` as given; `linkTarget` when it is a symbolic link, the file written.
    case file(URL, linkTarget: URL?)
    /// A file this process already writes through `descriptor` (1 or 2): written there.
    case stream(Int32)
    /// A terminal, another character device or a FIFO: opened and written in place.
    case inPlace(URL)
  }

  /// What is written.
  enum Kind: String {
    case report, trace, chart
    case otlp = "OpenTelemetry trace"
  }

  /// One file asked for, as given and where it goes.
  struct Output {
    var kind: Kind
    var option: ArgumentDeclaration
    var path: String
    var target: Target
  }

  /// The outputs asked for, in the order given.
  private(set) var outputs: [Output] = []
  /// The file each output writes, to compare with the files the command uses.
  private(set) var claimed: [(output: Output, identity: FileIdentity)] = []
  /// The command whose usage line follows a refusal.
  let command: CommandSpec
  /// When a refusal happens, for its message: `before the launch`.
  let moment: String

  /// Checks the targets asked for against each other.
  /// - Parameters:
  ///   - asked: each output's kind, path (`nil` when not asked for) and option.
  ///   - json: the option that prints JSON on standard output when it is given, which `-`
  ///     would mix with.
  /// - Throws: a ``CLIError`` naming the target and why it is refused.
  init(
    _ asked: [(Kind, String?, ArgumentDeclaration)], json: ArgumentDeclaration?,
    command: CommandSpec, moment: String
  ) throws(CLIError) {
    self.command = command
    self.moment = moment
    let asked = asked.compactMap { kind, path, option in path.map { (kind, $0, option) } }
    let toStandardOutput = asked.filter { $0.1 == "-" }.map(\.2.name)
    if toStandardOutput.count > 1 {
      throw .usage(
        "'\(toStandardOutput.joined(separator: " -' and '")) -' both ask for standard output; send one of them to a file.",
        command: command)
    }
    if let option = toStandardOutput.first, let json {
      throw .usage(
        "'\(option) -' and '\(json.name)' both print on standard output; use one of them.",
        command: command)
    }
    for (kind, path, option) in asked {
      guard path != "-" else {
        outputs.append(Output(kind: kind, option: option, path: path, target: .standardOutput))
        continue
      }
      let (target, written) = try check(path, for: option)
      let output = Output(kind: kind, option: option, path: path, target: target)
      outputs.append(output)
      if case .stream = target { continue }
      // Its folder was there a moment ago; if it has gone, the write will say so.
      guard let identity = FileIdentity(path: written.path) else { continue }
      if let other = claimed.first(where: { $0.identity == identity })?.output {
        throw .usage(
          "'\(option.name) \(path)' is the same file as '\(other.option.name) \(other.path)'; one would overwrite the other. Name two different files.",
          command: command)
      }
      claimed.append((output, identity))
    }
  }

  /// Whether an output is standard output itself (`-`), so that the command's other printing
  /// goes to stderr.
  var usesStandardOutput: Bool {
    outputs.contains {
      if case .standardOutput = $0.target { return true }
      return false
    }
  }

  /// What people should know before the command works: the links that are written through.
  var notes: [String] {
    outputs.compactMap { output in
      guard case .file(_, .some(let written)) = output.target else { return nil }
      return
        "Note: '\(output.option.name) \(output.path)' is a symbolic link; its target '\(written.path)' will be written, and the link kept."
    }
  }

  /// Refuses an output that is one of `used`, or inside one that is a folder, however either
  /// is spelled.
  /// - Parameter used: each path and the phrase that says who uses it
  ///   (`which the launch uses ('path' of step 'store')`).
  /// - Throws: a usage ``CLIError`` naming the output and the path it would destroy or join.
  func refuse(_ used: [(path: String, owner: String)]) throws(CLIError) {
    guard !claimed.isEmpty else { return }
    for (path, owner) in used {
      guard let usedIdentity = FileIdentity(path: path) else { continue }
      var isFolder: ObjCBool = false
      let folder =
        FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
      for (output, identity) in claimed
      where identity == usedIdentity
        || (folder && identity.canonicalPath.hasPrefix(usedIdentity.canonicalPath + "/"))
      {
        // A file not there yet destroys nothing: it would be mixed in with what the folder
        // holds (read as one of the reports, taken for a migration, removed as an image).
        let why =
          folder && identity.node == nil
          ? "a new file there would be mixed in with what that folder holds. Name a file outside it."
          : "writing there would destroy it. Name another file."
        throw .usage(
          "'\(output.option.name) \(output.path)' is \(folder ? "in" : "the file") '\(path)', \(owner); \(why)",
          command: command)
      }
    }
  }

  /// Refuses an output that exists and is one of `files` by its device and inode: a hard
  /// link to an input found inside a folder, which no path comparison sees. Only a target
  /// that exists can be one, so `files` (a million reports) are looked at only then.
  func refuseHardLinks(to files: [String], owner: String) throws(CLIError) {
    let existing = claimed.compactMap { claim in claim.identity.node.map { (claim.output, $0) } }
    guard !existing.isEmpty else { return }
    for file in files {
      var info = stat()
      guard stat(file, &info) == 0 else { continue }
      let node = FileIdentity.Node(
        device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(info.st_ino))
      if let (output, _) = existing.first(where: { $0.1 == node }) {
        throw .usage(
          "'\(output.option.name) \(output.path)' is the file '\(file)', \(owner); writing there would destroy it. Name another file.",
          command: command)
      }
    }
  }

  /// Writes each output's text; every output is tried even when one fails, and the error
  /// names each that failed.
  /// - Parameter text: what `output` holds.
  func write(_ text: (Output) -> String, console: Console) throws(CLIError) {
    var problems: [String] = []
    for output in outputs {
      let problem = problem(streaming: output, console: console) { sink throws(Sink.Failure) in
        try sink.write(text(output))
      }
      if let problem { problems.append(Self.message(problem, writing: output)) }
    }
    guard problems.isEmpty else {
      throw CLIError(message: problems.joined(separator: " "), exitCode: .cannotCreate)
    }
  }

  /// Writes `output` as ``write(_:console:)`` does, with the text `body` hands its sink piece
  /// by piece as it makes it: an output larger than what should be held in memory at once
  /// (`export otlp` of a day of reports). A regular file is written to the temporary file
  /// that takes its place only once `body` returns; when a write fails, `body` is stopped by
  /// the sink's error, and the file is left as it was.
  func stream(
    _ output: Output, console: Console, _ body: (inout Sink) throws(Sink.Failure) -> Void
  ) throws(CLIError) {
    if let problem = problem(streaming: output, console: console, body) {
      throw CLIError(message: Self.message(problem, writing: output), exitCode: .cannotCreate)
    }
  }

  /// Where a written output's text goes: gathered into pieces of about a megabyte, each sent
  /// as one write, and escaped first as JSON escapes what a terminal would act on when it
  /// goes to one (to standard output always, as ``Console/json(_:)`` prints).
  struct Sink {
    /// Why a piece could not be written: the first failure, which ends the output.
    struct Failure: Error, CustomStringConvertible {
      let description: String
    }

    /// The pieces are sent once they hold this many bytes.
    static let pieceSize = 1 << 20

    private let escapes: Bool
    private let send: ([UInt8]) throws(Failure) -> Void
    private var pending: [UInt8] = []

    fileprivate init(escapes: Bool, send: @escaping ([UInt8]) throws(Failure) -> Void) {
      self.escapes = escapes
      self.send = send
    }

    /// Adds `text` to the output.
    mutating func write(_ text: String) throws(Failure) {
      pending += (escapes ? TerminalText.escapedJSON(text) : text).utf8
      if pending.count >= Self.pieceSize { try flush() }
    }

    /// Sends what is gathered.
    fileprivate mutating func flush() throws(Failure) {
      guard !pending.isEmpty else { return }
      try send(pending)
      pending.removeAll(keepingCapacity: true)
    }
  }

  /// Writes `output` with what `body` hands its sink; the reason it could not, if it could
  /// not.
  private func problem(
    streaming output: Output, console: Console,
    _ body: (inout Sink) throws(Sink.Failure) -> Void
  ) -> String? {
    /// Runs `body` with a sink that sends its pieces with `send`, and sends what is left.
    func run(escapes: Bool, _ send: @escaping ([UInt8]) throws(Sink.Failure) -> Void)
      throws(Sink.Failure)
    {
      var sink = Sink(escapes: escapes, send: send)
      try body(&sink)
      try sink.flush()
    }
    do {
      switch output.target {
      // JSON and SVG: names that must not reach a terminal raw get JSON's escapes.
      case .standardOutput:
        try run(escapes: true) { console.data(Data($0)) }
      case .file(let url, _):
        try SafeFiles.writeAtomically(to: url) { write in
          try withoutActuallyEscaping(write) { write in
            try run(escapes: false) { bytes throws(Sink.Failure) in
              do {
                try bytes.withUnsafeBytes(write)
              } catch {
                throw Sink.Failure(description: "\(error)")
              }
            }
          }
        }
      case .stream(let descriptor):
        try run(escapes: isatty(descriptor) != 0) { bytes throws(Sink.Failure) in
          if let problem = Self.write(bytes, to: descriptor) {
            throw Sink.Failure(description: problem)
          }
        }
      case .inPlace(let url):
        // Opened as the shell opens `>`, without creating or truncating a file that is not
        // one: a FIFO waits for its reader, as it would for the shell, and as in the shell a
        // Ctrl-C (a SIGTERM, a closed terminal) ends the wait, and the process: the launch
        // is over, and its handler, which ignores them from then on, is gone.
        let failure = InterruptHandler.withDefaultActions { () -> Sink.Failure? in
          let descriptor = open(url.path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
          guard descriptor >= 0 else {
            return Sink.Failure(description: String(cString: strerror(errno)))
          }
          defer { close(descriptor) }
          do throws(Sink.Failure) {
            try run(escapes: isatty(descriptor) != 0) { bytes throws(Sink.Failure) in
              if let problem = Self.write(bytes, to: descriptor) {
                throw Sink.Failure(description: problem)
              }
            }
          } catch {
            return error
          }
          return nil
        }
        if let failure { throw failure }
      }
    } catch {
      return "\(error)"
    }
    return nil
  }

  /// `Cannot write the report to 'path': problem.`
  private static func message(_ problem: String, writing output: Output) -> String {
    let stop = problem.hasSuffix(".") ? "" : "."
    return "Cannot write the \(output.kind.rawValue) to '\(output.path)': \(problem)\(stop)"
  }

  /// Writes `bytes` whole to `descriptor`; the reason it could not, if it could not.
  private static func write(_ bytes: [UInt8], to descriptor: Int32) -> String? {
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes {
        systemWrite(descriptor, $0.baseAddress, $0.count)
      }
      if count < 0 {
        if errno == EINTR { continue }
        return String(cString: strerror(errno))
      }
      offset += count
    }
    return nil
  }

  /// The target of `path`, and the file that will be written: the final target of a link.
  private func check(
    _ path: String, for option: ArgumentDeclaration
  ) throws(CLIError) -> (Target, written: URL) {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    var folderInfo = stat()
    let found = stat(folder, &folderInfo) == 0
    guard found, folderInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else {
      // A target that cannot be written, as for `--history` (73), not a usage mistake. A
      // folder that is there but out of reach is not said to be missing.
      let code = found ? ENOTDIR : errno
      let why =
        code == EACCES || code == ELOOP
        ? "cannot be reached (\(String(cString: strerror(code)))); check the folders on its path"
        : "does not exist; create '\(folder)' first"
      throw CLIError(
        message: "The folder for '\(option.name) \(path)' \(why).", exitCode: .cannotCreate)
    }
    var info = stat()
    if stat(path, &info) == 0 {
      // A name of what this process already writes to (`/dev/stdout`, or the file stdout
      // was sent to): written through that descriptor, after what was printed, never
      // opened anew from its start or renamed over.
      for descriptor: Int32 in [1, 2] {
        var stream = stat()
        if fstat(descriptor, &stream) == 0, stream.st_dev == info.st_dev,
          stream.st_ino == info.st_ino
        {
          return (.stream(descriptor), url)
        }
      }
      let type = info.st_mode & mode_t(S_IFMT)
      if type == mode_t(S_IFCHR) || type == mode_t(S_IFIFO) {
        // Written in place, so not through `checkReplaceable` below, which checks the links
        // of a file renamed over: never through another user's link planted in a folder
        // everyone may write to.
        do {
          try SafeFiles.checkLinksFollowable(url)
        } catch {
          throw CLIError(
            message: "Refusing '\(option.name) \(path)' \(moment): \(error).",
            exitCode: .cannotCreate)
        }
        return (.inPlace(url), url)
      }
      if type == mode_t(S_IFREG), !Self.isWritableByItsMode(info) {
        throw CLIError(
          message:
            "Refusing '\(option.name) \(path)' \(moment): it is write-protected (mode \(Self.modeText(info.st_mode))), and the shell would not replace it either; make it writable or name another file.",
          exitCode: .cannotCreate)
      }
    }
    let written: URL
    do {
      written = try SafeFiles.checkReplaceable(url)
    } catch {
      throw CLIError(
        message: "Refusing '\(option.name) \(path)' \(moment): \(error).",
        exitCode: .cannotCreate)
    }
    let isLink = written.standardizedFileURL.path != url.standardizedFileURL.path
    return (.file(url, linkTarget: isLink ? written : nil), written)
  }

  /// Whether the permission bits that apply to this process (the owner's when it owns the
  /// file, else the group's when it is in the file's group, else everyone's) allow writing.
  /// Root is held to them too: a file someone made read-only is not replaced by a report.
  private static func isWritableByItsMode(_ info: stat) -> Bool {
    if info.st_uid == geteuid() { return info.st_mode & mode_t(S_IWUSR) != 0 }
    var groups = [gid_t](repeating: 0, count: Int(NGROUPS_MAX) + 1)
    let count = getgroups(Int32(groups.count), &groups)
    if info.st_gid == getegid() || groups.prefix(max(0, Int(count))).contains(info.st_gid) {
      return info.st_mode & mode_t(S_IWGRP) != 0
    }
    return info.st_mode & mode_t(S_IWOTH) != 0
  }

  /// `r--r--r--`.
  private static func modeText(_ mode: mode_t) -> String {
    let letters = Array("rwxrwxrwx")
    return String(
      (0..<9).map { index in mode & mode_t(1 << (8 - index)) != 0 ? letters[index] : "-" })
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
      node = Node(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(info.st_ino))
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

/// `write(2)`, named apart from the methods called `write`.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  #if canImport(Darwin)
    Darwin.write(descriptor, buffer, count)
  #else
    Glibc.write(descriptor, buffer, count)
  #endif
}
