import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What the package remembers of a manifest's launches between them: how many started, the
/// last few (their app version, and whether each reached the first screen), and which
/// run-once steps succeeded in which version.
///
/// Bounded whatever the app's age: the last ``recentLimit`` launches, and for each run-once
/// step of the manifest its last ``versionLimit`` versions, so reading it at every launch
/// costs the same on the thousandth launch as on the second.
package struct LaunchRecord: Codable, Equatable, Sendable {
  /// One launch: its number, the app version it ran, the process that ran it, how far it got.
  package struct Launch: Codable, Equatable, Sendable {
    package var number: Int
    package var version: String?
    /// The process, so that a launch still running in another process at this moment is not
    /// taken for one that died.
    package var process: Int32?
    package var state: State
  }

  /// How far a launch got.
  package enum State: String, Codable, Sendable {
    /// It started; nothing more was recorded (still running, or the process died).
    case started
    /// It reached the first screen.
    case firstScreen
    /// It ended without reaching the first screen, in a process that lived to say so (a
    /// route, a failure, a cancellation): not a crash.
    case ended
  }

  /// The layout's version; a record of another layout is set aside and started afresh.
  package static let currentFormat = 1
  /// Launches kept: more than any `safeMode.after` may ask for.
  package static let recentLimit = 16
  /// Versions kept per run-once step.
  package static let versionLimit = 8

  package var format = Self.currentFormat
  /// Launches started, ever (since the record was started).
  package var launchCount = 0
  /// The last launches, oldest first.
  package var recent: [Launch] = []
  /// For each run-once step that succeeded, the versions it succeeded in, oldest first (`""`
  /// when the app gave none).
  package var once: [String: [String]] = [:]

  package init() {}

  /// The facts of the launch that would start now with `version`: `context` with the
  /// record's part filled in. `process` is the running process, whose own launches are not
  /// counted as dead.
  package func facts(
    for context: LaunchContext, version: String?, safeModeAfter: Int?, process: Int32,
    isAlive: (Int32) -> Bool = LaunchRecord.isAlive
  ) -> LaunchContext {
    var facts = context
    facts.isFirstLaunch = launchCount == 0
    let last = recent.last?.version
    facts.isFirstLaunchAfterUpgrade =
      !facts.isFirstLaunch && version != nil && last != nil
      && last != version
    facts.launchNumber = launchCount + 1
    if let after = safeModeAfter, after > 0, recent.count >= after {
      facts.isSafeMode = recent.suffix(after).allSatisfy { launch in
        guard launch.state == .started else { return false }
        guard let owner = launch.process else { return true }
        // A launch of this process, or of one still running (another launch at this
        // moment), did not die.
        return owner != process && !isAlive(owner)
      }
    }
    return facts
  }

  /// Adds a started launch and returns its number.
  package mutating func begin(version: String?, process: Int32) -> Int {
    launchCount += 1
    recent.append(Launch(number: launchCount, version: version, process: process, state: .started))
    if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    return launchCount
  }

  /// Marks launch `number` as having got to `state`, unless it got further already.
  package mutating func mark(_ number: Int, _ state: State) {
    guard let index = recent.lastIndex(where: { $0.number == number }) else { return }
    if recent[index].state == .started || state == .firstScreen { recent[index].state = state }
  }

  /// The version run-once step `step` succeeded in that makes it done now: any for
  /// `perInstall`, `version` for `perVersion`; `nil` when it is not done.
  package func doneVersion(of step: String, _ once: RunOnce, version: String?) -> String?? {
    guard let versions = self.once[step], let first = versions.first else { return nil }
    switch once {
    case .perInstall: return .some(first.isEmpty ? nil : first)
    case .perVersion:
      let current = version ?? ""
      return versions.contains(current) ? .some(version) : nil
    }
  }

  /// Records that run-once step `step` succeeded with `version`.
  package mutating func recordOnce(_ step: String, version: String?) {
    var versions = once[step] ?? []
    let current = version ?? ""
    versions.removeAll { $0 == current }
    versions.append(current)
    if versions.count > Self.versionLimit {
      versions.removeFirst(versions.count - Self.versionLimit)
    }
    once[step] = versions
  }

  /// Forgets run-once steps the manifest no longer has, so the record stays bounded by the
  /// manifest, not by its history.
  package mutating func keepOnce(only steps: Set<String>) {
    once = once.filter { steps.contains($0.key) }
  }

  /// Whether process `process` is running.
  package static func isAlive(_ process: Int32) -> Bool {
    process > 0 && (kill(process, 0) == 0 || errno == EPERM)
  }
}

/// The file a manifest's ``LaunchRecord`` lives in:
/// `<data folder>/.orchestrate-launches/<manifest name>.json`, locked while it changes
/// (`.<manifest name>.json.lock` beside it) and replaced whole, so two processes launching at
/// once each add their launch and neither loses the other's.
///
/// Its folder holds nothing else (a record per manifest and their locks), so the listing an
/// atomic write makes to clean up after a killed writer stays small whatever the data folder
/// holds. Nothing about it fails a launch: a damaged record is moved aside and started
/// afresh, and a record that cannot be written is a note in the report.
package struct LaunchRecordFile: Sendable {
  /// The folder, under the data folder, that holds every manifest's record.
  package static let folderName = ".orchestrate-launches"
  /// The largest record read: a bounded record is a few kilobytes.
  package static let maximumSize = 64 << 10

  /// The record file.
  package let url: URL

  /// The record of the manifest called `manifestName` whose data folder is `dataDirectory`.
  package init(dataDirectory: URL, manifestName: String) {
    url = dataDirectory.appendingPathComponent(Self.folderName, isDirectory: true)
      .appendingPathComponent(OutputCache.fileName(manifestName) + ".json", isDirectory: false)
  }

  /// The record as it is, without changing anything: a missing one is empty, and a damaged
  /// one reads as empty with a note saying so.
  package func read() -> (record: LaunchRecord, notes: [String]) {
    switch load() {
    case .success(let record): return (record ?? LaunchRecord(), [])
    case .failure(let problem): return (LaunchRecord(), ["the launch record \(problem)"])
    }
  }

  /// Reads the record holding its lock, lets `change` change it, and writes it back
  /// atomically; returns what `change` returned and notes about what went wrong, which never
  /// stop the launch: a damaged record is moved aside and `change` starts from an empty one.
  package func update<T>(_ change: (inout LaunchRecord) -> T) -> (T, notes: [String]) {
    var notes: [String] = []
    let folder = url.deletingLastPathComponent()
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      notes.append(
        "the launch record could not be kept: cannot create '\(folder.path)' (\(error.localizedDescription))"
      )
    }
    var result: T?
    do {
      // Long enough for many processes launching at once to take their turns; a record
      // still locked after it is left alone rather than hold up the launch further.
      try SharedFile(url: url).withWriteLock(timeout: .seconds(10)) {
        var record: LaunchRecord
        switch load() {
        case .success(let found):
          record = found ?? LaunchRecord()
        case .failure(let problem):
          record = LaunchRecord()
          notes.append(setAside(because: problem.description))
        }
        result = change(&record)
        try write(record)
      }
    } catch {
      notes.append("the launch record was not updated: \(error)")
    }
    if let result { return (result, notes) }
    // The lock or the write failed before `change` ran: it runs on the record as read, so
    // the launch still gets its facts.
    var record = read().record
    return (change(&record), notes)
  }

  private func write(_ record: LaunchRecord) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    try SafeFiles.writeAtomically(encoder.encode(record), to: url, followingLinks: false)
  }

  /// Moves a damaged record aside (never deleting it: it is evidence of what went wrong)
  /// and says so.
  private func setAside(because problem: String) -> String {
    do {
      let moved = try SafeFiles.moveAside(url, label: "damaged")
      return
        "the launch record \(problem); it was moved aside to '\(moved.lastPathComponent)' and started afresh"
    } catch {
      return
        "the launch record \(problem), and could not be moved aside (\(error)); it was started afresh"
    }
  }

  /// The record, `nil` when there is none yet, or what is wrong with it.
  private func load() -> Result<LaunchRecord?, RecordProblem> {
    let snapshot: SharedFile.Snapshot
    do {
      snapshot = try SharedFile(url: url).read(limit: Self.maximumSize)
    } catch {
      return .failure(RecordProblem("cannot be read (\(error))"))
    }
    guard snapshot.exists else { return .success(nil) }
    guard let bytes = snapshot.bytes else {
      return .failure(RecordProblem("is larger than \(Self.maximumSize / 1024) KiB"))
    }
    guard let record = try? JSONDecoder().decode(LaunchRecord.self, from: bytes) else {
      return .failure(RecordProblem("is damaged (it does not read as a launch record)"))
    }
    guard record.format == LaunchRecord.currentFormat else {
      return .failure(
        RecordProblem(
          "has another layout (format \(record.format), this build reads \(LaunchRecord.currentFormat))"
        ))
    }
    return .success(record)
  }

  private struct RecordProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }
}
