import Foundation
import LaunchJSON
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// `queue.validate`: drops persisted enrichment-queue entries whose work no longer exists in
/// the store, and rewrites the queue file atomically.
///
/// The queue is a JSON array of objects, each with an integer `workId`; the entries it keeps
/// stay byte for byte as written (numbers, escapes, layout), only the dropped ones are cut
/// out. A missing queue is an empty one; an unreadable one is moved aside, never lost; a key
/// repeated within an entry fails the step and leaves the file alone. A queue the app keeps
/// changing, or keeps locked for all of the step's wait (5 s), is left as it is for the next
/// launch, and the step succeeds saying so (see ``QueueFile``). The rewrite follows a
/// symbolic link to its file, keeps its permissions and owner, and keeps the original as
/// `<file>.bak` until the new file is in place (see ``SafeFiles/writeAtomically(_:to:)``).
public struct QueueValidationStep: StepPlugin {
  /// The kind name.
  public static let kind = "queue.validate"
  /// What the step does.
  public static let summary =
    "Drops enrichment-queue entries whose work no longer exists in the store; rewrites the queue atomically."
  /// It needs the store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    /// The queue's original bytes are kept beside it, as `<file>.bak`, while it is rewritten.
    @Parameter(
      "The queue file: a JSON array of entries with an integer 'workId'; relative to the data folder.",
      isPath: true, rewritesFile: true, companions: [".bak"])
    var path = "enrichment-queue.json"

    /// The queue at its default path.
    public init() {}
  }

  private let path: String

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) {
    path = parameters.path
  }

  /// File and SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// The largest queue read: a persisted upload queue of many thousand entries is a few MB.
  static let maximumSize = 256 << 20

  /// How many times the queue is read again when the app changed it between the reading and
  /// the rewrite, before the step leaves it as it is.
  static let maximumReads = 5

  /// How long the step waits for the queue's write lock, which the app holds while it writes
  /// the queue, before it leaves the queue as it is.
  static let lockWait = Duration.seconds(5)

  /// Validates the queue against the store.
  public func run(_ context: StepContext) async throws -> QueueValidationResult {
    let url = context.resolve(path)
    if Self.isLinkToNothing(url) {
      context.log(
        "no queue at \(url.path) (a symbolic link to a file that does not exist); nothing to validate"
      )
      return QueueValidationResult(kept: 0, dropped: 0, movedAside: nil)
    }
    // A link is followed to the file it names; a folder, FIFO or device is refused before it
    // is read (reading a FIFO would block the launch).
    let file = try SafeFiles.checkReplaceable(url)
    let shared = SharedFile(url: file)
    let store = try context.input(StoreHandle.self)
    for _ in 0..<Self.maximumReads {
      try Task.checkCancellation()
      if let result = try validate(shared, shownAs: url, against: store, context) {
        return result
      }
    }
    context.log(
      "the queue changed \(Self.maximumReads) times while it was validated (the app is writing it);"
        + " left it as it was, to be validated at the next launch")
    return QueueValidationResult(kept: 0, dropped: 0, movedAside: nil)
  }

  /// The result of a step that found the queue's lock held for all of its wait: the app is
  /// writing the queue, which is contention, not a failure; the queue stays as it is.
  private func leftLocked(_ context: StepContext) -> QueueValidationResult {
    context.log(
      "the queue stayed locked by another writer (the app?) for \(Self.lockWait.manifestText);"
        + " left it as it was, to be validated at the next launch")
    return QueueValidationResult(kept: 0, dropped: 0, movedAside: nil)
  }

  /// Reads, judges and, when the queue is still what was judged, rewrites it; `nil` when the
  /// app changed it meanwhile.
  private func validate(
    _ shared: SharedFile, shownAs url: URL, against store: StoreHandle, _ context: StepContext
  ) throws -> QueueValidationResult? {
    let file = shared.url
    let snapshot: SharedFile.Snapshot
    do {
      // Read through one descriptor that neither follows a link nor waits on a FIFO: the
      // check of the path could be stale by now.
      snapshot = try shared.read(limit: Self.maximumSize)
    } catch {
      throw StepFailure("\(error); the queue was left as it was")
    }
    guard snapshot.exists else {
      context.log("no queue at \(url.path); nothing to validate")
      return QueueValidationResult(kept: 0, dropped: 0, movedAside: nil)
    }
    guard let data = snapshot.bytes else {
      throw StepFailure(
        "'\(file.path)' is over the \(Self.maximumSize)-byte limit; the queue was left as it was")
    }
    let bytes = Array(data)
    let queue: Queue
    do {
      queue = try Queue(bytes)
    } catch {
      // The file itself, not a link to it: the link is the app's way to its queue, and
      // moving it would leave the app writing a new queue where no launch looks.
      var busy = false
      let whenBusy = { () -> URL? in
        busy = true
        return nil
      }
      let aside = try shared.withWriteLock(timeout: Self.lockWait, whenBusy: whenBusy) {
        () throws -> URL? in
        guard shared.isUnchanged(since: snapshot, limit: Self.maximumSize) else { return nil }
        // A store named where the queue goes: moved aside, it would leave its WAL behind.
        guard !Self.isSQLiteDatabase(file) else {
          throw StepFailure(
            "the queue '\(url.path)' is a SQLite database, not a queue (is 'path' a store's"
              + " path?); it was left as it was")
        }
        return try SafeFiles.moveAside(file, label: "unreadable")
      }
      if busy { return leftLocked(context) }
      guard let aside else { return nil }
      let shown = file == url ? aside.lastPathComponent : aside.path
      context.log("the queue was unreadable (\(error.reason)); moved it aside to \(shown)")
      return QueueValidationResult(kept: 0, dropped: 0, movedAside: aside)
    }
    if let repeated = queue.repeatedKeys.first {
      let position = SourceText(bytes: bytes).position(of: repeated.offset)
      let more = queue.repeatedKeys.count > 1 ? " (and \(queue.repeatedKeys.count - 1) more)" : ""
      throw StepFailure(
        "the queue '\(url.path)' has the key '\(repeated.key)' twice in one entry at line "
          + "\(position.line), column \(position.column)\(more); which one counts is ambiguous, so "
          + "the queue was left as it was; remove the repeated key and run again")
    }
    if let reason = store.newStoreReason { return keepingAll(queue, reason, context) }

    let connection = try store.connect()
    var existing: Set<Int64> = []
    let ids = Array(Set(queue.workIds))
    do {
      for start in stride(from: 0, to: ids.count, by: 500) {
        let chunk = ids[start..<min(start + 500, ids.count)]
        let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
        existing.formUnion(
          try connection.query(
            "SELECT id FROM works WHERE id IN (\(marks))", chunk.map { .integer($0) }
          ) {
            $0.integer(0)
          })
      }
    } catch let error as SQLiteError where error.message.hasPrefix("no such table") {
      // A store of another schema (a music library): SQLite's words alone name no cause.
      throw StepFailure(
        "the \(store.schema.name) store '\(store.url.path)' has no works (\(error.message)); "
          + "queue.validate checks the queue against a store with a 'works' table, such as "
          + "the books schema's: depend on that store's step; the queue was left as it was")
    }
    let dropped = Set(queue.workIds.indices.filter { !existing.contains(queue.workIds[$0]) })
    let kept = queue.workIds.count - dropped.count
    guard !dropped.isEmpty else {
      context.log("all \(kept) queue entries are valid")
      return QueueValidationResult(kept: kept, dropped: 0, movedAside: nil)
    }
    // Read after the query: a store a launch beside this one recovered meanwhile is recorded
    // anew by then. A queue the app last wrote before the store became new names works the
    // store never had.
    if let reason = store.reasonToKeep(
      "the queue", modifiedAt: Self.modification(of: file) ?? .distantPast)
    {
      return keepingAll(queue, reason, context)
    }
    let text = try queue.removing(dropped, path: url)
    // Only the queue that was judged is replaced: an entry the app appended since is in a
    // file that was not judged, which is read again.
    var busy = false
    let whenBusy = { () -> Bool in
      busy = true
      return false
    }
    let replaced = try shared.withWriteLock(timeout: Self.lockWait, whenBusy: whenBusy) {
      () throws -> Bool in
      guard shared.isUnchanged(since: snapshot, limit: Self.maximumSize) else { return false }
      try Self.replace(file, with: text, originalBytes: bytes, shownAs: url)
      return true
    }
    if busy { return leftLocked(context) }
    guard replaced else { return nil }
    let entries = dropped.count == 1 ? "queue entry" : "queue entries"
    context.log("dropped \(dropped.count) \(entries) whose work no longer exists; kept \(kept)")
    return QueueValidationResult(kept: kept, dropped: dropped.count, movedAside: nil)
  }

  /// Keeps every entry of `queue`, since the store cannot judge it, for `reason`.
  private func keepingAll(_ queue: Queue, _ reason: String, _ context: StepContext)
    -> QueueValidationResult
  {
    context.log(
      "kept all \(queue.workIds.count) queue entries: \(reason); a work missing from the store"
        + " is no reason to drop an entry")
    return QueueValidationResult(kept: queue.workIds.count, dropped: 0, movedAside: nil)
  }

  /// Whether `file` begins as a SQLite database does.
  private static func isSQLiteDatabase(_ file: URL) -> Bool {
    let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 16)
    return read(descriptor, &header, header.count) == header.count
      && header == Array("SQLite format 3\u{0}".utf8)
  }

  /// When the file at `url` was last changed; `nil` when it cannot be read. A file replaced
  /// since it was read is caught before the rewrite, which acts only on the file it judged.
  private static func modification(of url: URL) -> Date? {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return nil }
    #if canImport(Darwin)
      let time = info.st_mtimespec
    #else
      let time = info.st_mtim
    #endif
    return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
  }

  /// Replaces `file` with `bytes`, keeping the original as `<file>.bak` until the new file is
  /// in place, so even a crash mid-way leaves the queue's old bytes on disk.
  private static func replace(
    _ file: URL, with bytes: [UInt8], originalBytes: [UInt8], shownAs url: URL
  ) throws {
    let backup = file.path + ".bak"
    try keep(file, as: backup, originalBytes: originalBytes, shownAs: url)
    do {
      try SafeFiles.writeAtomically(Data(bytes), to: file)
    } catch {
      // The original is still in place, so the copy is not needed.
      unlink(backup)
      throw error
    }
    unlink(backup)
  }

  /// Makes `backup` hold the original: a hard link (instant, same permissions and owner), or
  /// a private copy where the file system has no hard links. An existing `backup` is never
  /// replaced, unless it is another name of the queue file itself (a rewrite killed before
  /// it replaced anything): removing that name loses nothing.
  private static func keep(
    _ file: URL, as backup: String, originalBytes: [UInt8], shownAs url: URL
  ) throws {
    if link(file.path, backup) == 0 { return }
    var code = errno
    if code == EEXIST, isSameFile(backup, file.path), unlink(backup) == 0 {
      if link(file.path, backup) == 0 { return }
      code = errno
    }
    if code == EEXIST {
      throw StepFailure(
        "cannot rewrite the queue '\(url.path)': '\(backup)' already exists (the backup of an "
          + "interrupted rewrite, or a file of yours), and it is never replaced; compare the two, "
          + "keep what you need, remove '\(backup)' and run again")
    }
    let descriptor = open(backup, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw backupFailure(errno, file: file, backup: backup)
    }
    defer { close(descriptor) }
    let complete = originalBytes.withUnsafeBytes { buffer -> Bool in
      var offset = 0
      while offset < buffer.count, let base = buffer.baseAddress {
        let count = write(descriptor, base + offset, buffer.count - offset)
        if count < 0 {
          if errno == EINTR { continue }
          return false
        }
        offset += count
      }
      return fsync(descriptor) == 0
    }
    guard complete else {
      let failure = backupFailure(errno, file: file, backup: backup)
      unlink(backup)
      throw failure
    }
  }

  /// Whether `url` is a symbolic link whose final target does not exist: a queue the app
  /// has not written (again) yet, which is an empty one.
  private static func isLinkToNothing(_ url: URL) -> Bool {
    var info = stat()
    guard lstat(url.path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else {
      return false
    }
    return stat(url.path, &info) != 0 && errno == ENOENT
  }

  /// Whether the two paths name the same regular file (device and inode), without following
  /// a link at `backup`.
  private static func isSameFile(_ backup: String, _ path: String) -> Bool {
    var backupInfo = stat()
    var fileInfo = stat()
    guard lstat(backup, &backupInfo) == 0, stat(path, &fileInfo) == 0 else { return false }
    return backupInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
      && backupInfo.st_dev == fileInfo.st_dev && backupInfo.st_ino == fileInfo.st_ino
  }

  /// Why the backup could not be made, in the words ``SafeFiles`` uses for the same folder
  /// problems (not writable, full), or with the system's reason.
  private static func backupFailure(_ code: Int32, file: URL, backup: String) -> StepFailure {
    if let problem = SafeFiles.writeProblem(in: file.deletingLastPathComponent()) {
      return StepFailure(
        "cannot rewrite '\(file.path)': \(problem.reason), so the file was left as it was; "
          + problem.advice)
    }
    return StepFailure(
      "cannot rewrite '\(file.path)': cannot keep its original as '\(backup)' "
        + "(\(String(cString: strerror(code)))), so the file was left as it was")
  }
}

private struct QueueFormatProblem: Error {
  var reason: String
}

/// A parsed queue file: its bytes, where each entry starts, and each entry's work id.
private struct Queue {
  let bytes: [UInt8]
  let workIds: [Int64]
  let repeatedKeys: [JSONDocument.DuplicateKey]
  /// Where each entry's text starts, and where the root array's `[` and `]` are.
  private let starts: [Int]
  private let open: Int
  private let close: Int

  init(_ bytes: [UInt8]) throws(QueueFormatProblem) {
    let document: JSONDocument
    do {
      document = try JSONParser.parse(bytes)
    } catch {
      throw QueueFormatProblem(reason: "invalid JSON: \(error.message)")
    }
    let root = document.root
    guard let elements = root.elements else {
      throw QueueFormatProblem(
        reason: "expected an array of entries, found \(root.typeDescription)")
    }
    var workIds: [Int64] = []
    var starts: [Int] = []
    for (index, element) in elements.enumerated() {
      guard let workId = element["workId"]?.exactInteger(Int64.self), let start = element.offset
      else {
        throw QueueFormatProblem(reason: "entry \(index) has no integer 'workId'")
      }
      workIds.append(workId)
      starts.append(start)
    }
    // The parser accepts only whitespace after the root, so its last other byte is the `]`.
    guard let open = root.offset,
      let close = bytes.lastIndex(where: { !Self.isWhitespace($0) })
    else {
      throw QueueFormatProblem(reason: "expected an array of entries")
    }
    self.bytes = bytes
    self.workIds = workIds
    self.repeatedKeys = document.duplicateKeys
    self.starts = starts
    self.open = open
    self.close = close
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The first byte after entry `index`'s own text (before the whitespace and `,` or `]`
  /// that follow it).
  private func end(of index: Int) -> Int {
    var cursor = index + 1 < starts.count ? starts[index + 1] : close
    while Self.isWhitespace(bytes[cursor - 1]) { cursor -= 1 }
    if index + 1 < starts.count {
      // Step back over the `,` and the whitespace before it.
      cursor -= 1
      while Self.isWhitespace(bytes[cursor - 1]) { cursor -= 1 }
    }
    return cursor
  }

  /// The file's text without the entries at `dropped`; every other byte is copied as it was,
  /// so numbers, key order, escapes and layout stay exactly as written.
  func removing(_ dropped: Set<Int>, path url: URL) throws -> [UInt8] {
    let kept = starts.indices.filter { !dropped.contains($0) }
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    if let last = kept.last {
      let lastOfAll = starts.count - 1
      output += bytes[..<starts[0]]
      for index in kept.dropLast() {
        // The entry, then its own separator up to the next entry's start.
        output += bytes[starts[index]..<(index + 1 < starts.count ? starts[index + 1] : close)]
      }
      output += bytes[starts[last]..<end(of: last)]
      output += bytes[end(of: lastOfAll)...]
    } else {
      // Nothing is kept: the `[`, then what followed the last entry.
      output += bytes[...open]
      output += bytes[end(of: starts.count - 1)...]
    }
    // Whatever the layout, the result must be the kept entries and nothing else.
    guard let check = try? JSONParser.parse(output).root.elements, check.count == kept.count else {
      throw StepFailure(
        "cannot rewrite the queue '\(url.path)': removing entries would not leave valid JSON, "
          + "so the queue was left as it was; remove the entries of missing works by hand")
    }
    return output
  }
}

/// What `queue.validate` did.
public struct QueueValidationResult: Sendable, Equatable {
  /// Entries left in the queue.
  public var kept: Int
  /// Entries removed because their work is gone.
  public var dropped: Int
  /// Where an unreadable queue was moved.
  public var movedAside: URL?
}
