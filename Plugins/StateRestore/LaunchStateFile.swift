import Foundation
import LaunchJSON
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The small JSON file in the launch's data folder where an app saves where the user was, for
/// `state.restore` to hand back at the next launch.
///
/// Save when the screen disappears or the scene leaves the foreground, not on every scroll
/// event: scroll callbacks fire 60-120 times a second, and each save flushes a file to disk.
///
/// ```swift
/// let stateFile = LaunchStateFile(dataDirectory: data)
/// var state = RestoredState()
/// try state.set(topResultID, for: "scrollAnchor")
/// try stateFile.save(state)
/// ```
public struct LaunchStateFile: Sendable {
  /// Where the state lives when a manifest names no `file`, relative to the data folder.
  public static let defaultPath = ".state/launch-state.json"
  /// The largest state file, in bytes, that is saved or restored (64 KiB): an id and a tab
  /// name take a few dozen; a list of results belongs in the store.
  public static let maximumSize = 64 * 1024

  /// The state file.
  public let url: URL

  /// The state file at `url`.
  public init(url: URL) {
    self.url = url
  }

  /// The state file at `path` in the launch's data folder: the folder the app passed to
  /// `ManifestLoader.load(url:dataDirectory:)`, and the same `file` the manifest's
  /// `state.restore` step names.
  public init(dataDirectory: URL, path: String = LaunchStateFile.defaultPath) {
    url = StepContext.resolve(path, against: dataDirectory)
  }

  /// Replaces the saved state with `state`, atomically: a reader, a crash or another process
  /// saving at the same moment sees the old file or a new one, never a torn one (the last
  /// save wins). Creates the file's folder when needed. Through a symbolic link, writes the
  /// file the link leads to, creating it when there is none (in a folder that exists): the
  /// link stays.
  ///
  /// - Throws: ``StepFailure`` naming the file when the state is over ``maximumSize`` (the
  ///   file is left as it was) or the file cannot be written.
  public func save(_ state: RestoredState) throws {
    let text = state.jsonText
    let size = text.utf8.count
    guard size <= Self.maximumSize else {
      throw StepFailure(
        "cannot save the launch state to '\(url.path)': it would be \(size) bytes, over the"
          + " \(Self.maximumSize)-byte limit, so the file was left as it was; save ids and"
          + " choices, not the data they point to")
    }
    try FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    // Through a link to nothing the file is created where the link leads: the app's way to its
    // state (into a shared container, say), whose target `state.restore` may have moved aside.
    // Under the file's write lock, as `state.restore` moves an unreadable file aside only
    // under it (see ``SharedFile``): a save is never moved aside for what it replaced.
    let file = try SafeFiles.checkReplaceable(url, creatingLinkTarget: true)
    // The app's save waits for its turn even from a task that was cancelled (a view's task
    // that ended): what the user did is kept.
    try SharedFile(url: file).withWriteLock(stopsWhenCancelled: false) {
      // A store named where the state goes would lose its data: its WAL left without it.
      guard !Self.isSQLiteDatabase(file) else {
        throw StepFailure(
          "cannot save the launch state to '\(url.path)': it is a SQLite database, not a state"
            + " file, so it was left as it was; save the state to a file of its own")
      }
      try SafeFiles.writeAtomically(Data(text.utf8), to: file)
    }
  }

  /// Replaces the saved state with the app's own `Encodable` value, whose properties become
  /// the keys (``RestoredState/decode(as:)`` reads it back).
  ///
  /// - Throws: ``StepFailure`` when `value` does not encode as a JSON object, and as
  ///   ``save(_:)-(RestoredState)`` does.
  public func save<T: Encodable>(_ value: T) throws {
    let data = try JSONEncoder().encode(value)
    guard let document = try? JSONParser.parse(Array(data)),
      let members = document.root.members
    else {
      throw StepFailure(
        "cannot save the launch state to '\(url.path)': \(T.self) does not encode as a JSON"
          + " object, so the file was left as it was; save a struct with a property per value")
    }
    try save(RestoredState(object: members))
  }

  /// Whether `file` begins as a SQLite database does: a store named where the state goes,
  /// which moved aside or replaced would lose what its WAL holds.
  static func isSQLiteDatabase(_ file: URL) -> Bool {
    let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 16)
    return read(descriptor, &header, header.count) == header.count
      && header == Array("SQLite format 3\u{0}".utf8)
  }

  /// What `state.restore` found where the state goes: a SQLite database, left as it is.
  private struct NotAStateFile: Error {}

  /// How many times the state is read again when the app saved it between the reading and
  /// moving it aside, before it is left as it is.
  static let maximumReads = 5

  /// How long `state.restore` waits for the state's write lock, which a save holds, before it
  /// leaves an unreadable file as it is.
  static let lockWait = Duration.seconds(5)

  /// Reads the state, never failing: a missing file is empty state, and a file that cannot be
  /// used is empty state with the file moved aside (byte for byte, beside it) so that the next
  /// save does not replace what could be recovered. The notes say what happened. Through a
  /// symbolic link, the file it leads to is moved aside and the link stays.
  ///
  /// A file is moved aside only when it is still exactly the one judged unusable (see
  /// ``SharedFile``); one the app saved meanwhile is read again.
  func restore() -> (state: RestoredState, notes: [String]) {
    let file: URL
    do {
      // A folder, FIFO or device is refused before it is read (reading a FIFO would block).
      // A link to nothing is no state yet, as a missing file: the first save creates its
      // target (or a save after one unreadable was moved aside from under the link).
      file = try SafeFiles.checkReplaceable(url, creatingLinkTarget: true, forReading: true)
    } catch {
      return (RestoredState(), ["\(error); started from empty state and left it as it was"])
    }
    for _ in 0..<Self.maximumReads {
      if let result = restore(SharedFile(url: file)) { return result }
    }
    return (
      RestoredState(),
      [
        "the saved state '\(url.path)' changed \(Self.maximumReads) times while it was read (the app"
          + " is saving it); started from empty state and left it as it was"
      ]
    )
  }

  /// One reading of the state; `nil` when the file changed before it could be moved aside.
  private func restore(_ shared: SharedFile) -> (state: RestoredState, notes: [String])? {
    let snapshot: SharedFile.Snapshot
    do {
      // Read through one descriptor that neither follows a link nor waits on a FIFO: the
      // check of the path could be stale by now.
      snapshot = try shared.read(limit: Self.maximumSize)
    } catch let problem as SafeFiles.ReadProblem {
      switch problem.reason {
      case .notRegular, .tooLarge:
        return (RestoredState(), ["\(problem); started from empty state and left it as it was"])
      case .unreadable(let why):
        return (
          RestoredState(),
          [
            "cannot read the saved state '\(url.path)' (\(why)); started from empty state and"
              + " left the file as it was"
          ]
        )
      }
    } catch {
      return (RestoredState(), ["\(error); started from empty state and left it as it was"])
    }
    guard snapshot.exists else {
      return (RestoredState(), ["no saved state at '\(url.path)'; started from empty state"])
    }
    guard let data = snapshot.bytes else {
      return moveAside(
        "it is \(snapshot.size) bytes, over the \(Self.maximumSize)-byte limit", shared, snapshot)
    }
    let bytes = Array(data)
    // An empty file (truncated by a tool or by hand) is named as such: clearer than a syntax
    // error at line 1, column 1.
    guard !bytes.isEmpty else { return moveAside("it is empty", shared, snapshot) }
    let document: JSONDocument
    do {
      document = try JSONParser.parse(bytes)
    } catch {
      let position = SourceText(bytes: bytes).position(of: error.offset)
      return moveAside(
        "it is not valid JSON: \(error.message) at line \(position.line), column \(position.column)",
        shared, snapshot)
    }
    guard let members = document.root.members else {
      return moveAside(
        "it holds \(document.root.typeDescription), not a JSON object", shared, snapshot)
    }
    if let repeated = document.duplicateKeys.first {
      return moveAside(
        "it has the key '\(repeated.key)' twice, so which one counts is ambiguous", shared,
        snapshot)
    }
    return (RestoredState(object: members), [])
  }

  /// Moves the file aside when it is still the one judged; `nil` when it is not.
  private func moveAside(
    _ reason: String, _ shared: SharedFile, _ snapshot: SharedFile.Snapshot
  ) -> (state: RestoredState, notes: [String])? {
    // The file judged, not a link to it: the link is the app's way to its state, which saves
    // write through; moving it would leave the unreadable bytes where the link led and the
    // next save writing a plain file in the link's place.
    let file = shared.url
    do {
      var busy = false
      let whenBusy = { () -> URL? in
        busy = true
        return nil
      }
      let aside = try shared.withWriteLock(timeout: Self.lockWait, whenBusy: whenBusy) {
        () throws -> URL? in
        guard shared.isUnchanged(since: snapshot, limit: Self.maximumSize) else { return nil }
        guard !Self.isSQLiteDatabase(file) else { throw NotAStateFile() }
        return try SafeFiles.moveAside(file, label: "unreadable")
      }
      // A save in progress, or stuck: contention, said as the app saving it meanwhile is.
      if busy {
        return (
          RestoredState(),
          [
            "the saved state '\(url.path)' was unreadable (\(reason)), and stayed locked by another"
              + " writer (the app?) for \(Self.lockWait.manifestText); started from empty state and"
              + " left it as it was"
          ]
        )
      }
      guard let aside else { return nil }
      // `file` is `url`'s path itself unless a link was followed to it.
      let moved =
        file.path == url.path
        ? "moved it aside to '\(aside.lastPathComponent)'"
        : "moved the file it links to, '\(file.path)', aside to '\(aside.lastPathComponent)'"
          + " (the link stays)"
      return (
        RestoredState(),
        [
          "the saved state '\(url.path)' was unreadable (\(reason)); \(moved) and started from"
            + " empty state"
        ]
      )
    } catch is NotAStateFile {
      return (
        RestoredState(),
        [
          "the saved state '\(url.path)' is a SQLite database, not a state file (is 'file' a"
            + " store's path?); started from empty state and left it as it was"
        ]
      )
    } catch {
      return (
        RestoredState(),
        [
          "the saved state '\(url.path)' was unreadable (\(reason)) and could not be moved aside"
            + " (\(error)); started from empty state"
        ]
      )
    }
  }
}
