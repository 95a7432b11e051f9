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
/// step of the manifest, and of at most ``otherOnceLimit`` steps it does not name, its last
/// ``versionLimit`` versions, so reading it at every launch costs the same on the thousandth
/// launch as on the second.
package struct LaunchRecord: Codable, Equatable, Sendable {
  /// One launch: its number, the app version it ran, the process that ran it, how far it got.
  package struct Launch: Codable, Equatable, Sendable {
    package var number: Int
    package var version: String?
    /// The process, so that a launch still running in another process at this moment is not
    /// taken for one that died.
    package var process: Int32?
    /// When that process started (``ProcessIdentity/start``), so that a process the system
    /// gave its number to since is not taken for it. Absent in records written before it (or
    /// rewritten by a build before it), where the number alone says.
    package var processStart: String?
    package var state: State

    /// The process that ran it; `nil` when the record does not say.
    package var owner: ProcessIdentity? {
      process.map { ProcessIdentity(number: $0, start: processStart) }
    }
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
  /// Run-once steps kept that the manifest launching does not name: an app extension's that
  /// shares the manifest's name, a build the user went back from. Far more than either has,
  /// while steps renamed over the years cannot grow the record past its size limit.
  package static let otherOnceLimit = 32

  package var format = Self.currentFormat
  /// Launches started, ever (since the record was started).
  package var launchCount = 0
  /// The last launches, oldest first.
  package var recent: [Launch] = []
  /// The highest app version a launch was given, whether or not it reached its first screen.
  /// Absent in records written before it, and then the highest among ``recent``.
  package var newestVersion: String?
  /// The highest app version a launch reached its first screen or its end with: past the
  /// recent launches, the version the app ran before (``previousVersion(process:isAlive:)``),
  /// and going back up to it after a downgrade is no upgrade. A launch that died before its
  /// first screen leaves it as it was. Absent in records written before it, and then
  /// ``newestVersion`` for a record that holds more launches than ``recent`` (its builds kept
  /// no other), and nothing past ``recent`` for one that holds them all.
  package var reachedVersion: String?
  /// Whether the install ran before the record was kept: the launch that started the record
  /// found the app's data there, or the app said so (``LaunchContext/init(reason:isPrewarmed:existingInstall:)``).
  /// No launch is then the first, and one given a version while no launch the record holds
  /// reached its first screen or its end with one is the first after an upgrade. Absent when
  /// not, and in records written before it.
  package var existingInstall: Bool?
  /// For each run-once step that succeeded, the versions it succeeded in, oldest first (`""`
  /// when the app gave none).
  package var once: [String: [String]] = [:]
  /// For each step in ``once``, the launch count when it last succeeded: of the steps a
  /// manifest does not name, those that went longest without succeeding are forgotten first.
  /// Absent in records written before it, and then taken as 0.
  package var onceLast: [String: Int]?
  /// The run-once steps a launch is running now, claimed before it started them so that a
  /// launch starting meanwhile leaves them to it; released when the step succeeded, failed or
  /// was not run, and ignored once the claiming process has died. Absent in records written
  /// before claims.
  package var claims: [String: Claim]?

  /// A launch's claim on a run-once step.
  package struct Claim: Codable, Equatable, Sendable {
    /// The process running the step.
    package var process: Int32
    /// The launch, in that process, that runs it.
    package var launch: Int
    /// The app version it runs in (`""` when the app gave none).
    package var version: String
    /// When the process started, as ``Launch/processStart``: absent in claims written before
    /// it, where the number alone says.
    package var processStart: String?

    /// The process running the step.
    package var owner: ProcessIdentity { ProcessIdentity(number: process, start: processStart) }
  }

  /// The most launches a record counts, far beyond any app's: a larger count is damage.
  package static let countLimit = 1_000_000_000
  /// The most run-once steps a record keeps, far beyond any manifest's.
  package static let onceLimit = 10_000
  /// The longest version a record keeps.
  package static let versionLength = 256
  /// The longest process start a record keeps: far longer than any system's
  /// (``ProcessIdentity/start(of:)``).
  package static let startLength = 128

  package init() {}

  /// What is out of range in a record read from a file, which nothing this package writes
  /// produces: `nil` when every number and list is in range.
  package var damage: String? {
    guard (0...Self.countLimit).contains(launchCount) else {
      return "counts \(launchCount) launches, outside 0...\(Self.countLimit)"
    }
    guard recent.count <= Self.recentLimit else {
      return "lists \(recent.count) recent launches, more than \(Self.recentLimit)"
    }
    for launch in recent {
      guard (1...max(1, launchCount)).contains(launch.number) else {
        return "holds launch number \(launch.number), outside 1...\(launchCount)"
      }
      if let process = launch.process, process <= 0 {
        return "holds process \(process) for launch \(launch.number)"
      }
      if let version = launch.version, version.utf8.count > Self.versionLength {
        return "holds a version longer than \(Self.versionLength) bytes"
      }
      if let start = launch.processStart, start.utf8.count > Self.startLength {
        return "holds a process start longer than \(Self.startLength) bytes"
      }
    }
    for version in [newestVersion, reachedVersion] {
      if let version, version.utf8.count > Self.versionLength {
        return "holds a version longer than \(Self.versionLength) bytes"
      }
    }
    guard once.count <= Self.onceLimit else {
      return "lists \(once.count) run-once steps, more than \(Self.onceLimit)"
    }
    for (step, versions) in once {
      guard versions.count <= Self.versionLimit else {
        return "lists \(versions.count) versions for step '\(step)', more than \(Self.versionLimit)"
      }
      guard versions.allSatisfy({ $0.utf8.count <= Self.versionLength }) else {
        return "holds a version longer than \(Self.versionLength) bytes"
      }
    }
    guard (onceLast?.count ?? 0) <= Self.onceLimit else {
      return "lists \(onceLast?.count ?? 0) run-once steps, more than \(Self.onceLimit)"
    }
    for (step, launch) in onceLast ?? [:] where !(0...launchCount).contains(launch) {
      return "holds launch \(launch) for step '\(step)', outside 0...\(launchCount)"
    }
    guard (claims?.count ?? 0) <= Self.onceLimit else {
      return "lists \(claims?.count ?? 0) claims, more than \(Self.onceLimit)"
    }
    for (step, claim) in claims ?? [:] {
      guard claim.process > 0, (1...max(1, launchCount)).contains(claim.launch) else {
        return "holds a claim on step '\(step)' by process \(claim.process), launch \(claim.launch)"
      }
      guard claim.version.utf8.count <= Self.versionLength else {
        return "holds a version longer than \(Self.versionLength) bytes"
      }
      guard (claim.processStart?.utf8.count ?? 0) <= Self.startLength else {
        return "holds a process start longer than \(Self.startLength) bytes"
      }
    }
    return nil
  }

  /// The facts of the launch that would start now with `version`: `context` with the
  /// record's part filled in. `process` is the running process, whose own launches are not
  /// counted as dead; `existingInstall` says the install ran before the record was kept, as
  /// ``existingInstall`` does once it is kept.
  package func facts(
    for context: LaunchContext, version: String?, safeModeAfter: Int?, process: ProcessIdentity,
    existingInstall: Bool = false, isAlive: (ProcessIdentity) -> Bool = { $0.isAlive }
  ) -> LaunchContext {
    func died(_ launch: Launch) -> Bool { self.died(launch, process: process, isAlive: isAlive) }
    let ranBefore = existingInstall || self.existingInstall == true
    var facts = context
    // The app's word on an install the record does not know is taken: the facts say the rest.
    facts.existingInstall = nil
    // The first launch until one reached its first screen or its end: a first launch killed
    // or crashed before it leaves the next the first, or what only the first launch does
    // (onboarding, sample data) would never be done. Past the recent launches the record
    // does not know how the others went: not the first. An install that ran before the
    // record has had its first launch.
    facts.isFirstLaunch =
      !ranBefore && launchCount <= recent.count && recent.allSatisfy(died)
    // Higher than the version before, and new: the same version spelled otherwise (`1.0`,
    // `1.0.0`), an older one (a downgrade, see ``downgrade(to:process:isAlive:)``), or going
    // back up to one launched before (2.0, 1.9, then 2.0 again) is no upgrade. Launches that
    // died before their first screen are as if they never ran: the first launch of 2.0 killed
    // before it leaves the next launch of 2.0 (or 3.0) the first after the upgrade from 1.0,
    // or what only an upgrade does (a migration, a cache purge) would never be done.
    if !facts.isFirstLaunch, let version {
      if let previous = previousVersion(process: process, isAlive: isAlive) {
        facts.isFirstLaunchAfterUpgrade =
          VersionOrder.compare(version, previous) > 0
          && !hasReached(version, process: process, isAlive: isAlive)
      } else {
        // An install that ran before the record, at a version it never knew: the first
        // launch given one that gets to its first screen ends the upgrade.
        facts.isFirstLaunchAfterUpgrade = ranBefore
      }
    }
    // A record read from a file is in range (``damage``); one built in memory may not be.
    let (next, overflow) = launchCount.addingReportingOverflow(1)
    facts.launchNumber = overflow ? 0 : next
    if let after = safeModeAfter, after > 0, recent.count >= after {
      facts.isSafeMode = recent.suffix(after).allSatisfy(died)
    }
    return facts
  }

  /// Whether `launch` died before its first screen: it started, nothing more was recorded,
  /// and its process is gone. A launch of `process` (the running one), or of one still
  /// running (another launch at this moment), did not die.
  private func died(
    _ launch: Launch, process: ProcessIdentity, isAlive: (ProcessIdentity) -> Bool
  ) -> Bool {
    guard launch.state == .started else { return false }
    guard let owner = launch.owner else { return true }
    return !owner.isSame(as: process) && !isAlive(owner)
  }

  /// The app version the app ran before the launch that would start now in `process`: that
  /// of the last launch given one that did not die before its first screen (it reached it or
  /// its end, or runs now in another process); past the recent launches, the highest version
  /// one reached its first screen with (``reachedVersion``). A launch given none (a tool, an
  /// extension without `AppInfo`) says nothing of the app's version, and one that died is
  /// passed over: after 1.0, then 2.0 killed before its first screen, it is 1.0. `nil` when
  /// the record knows none.
  package func previousVersion(
    process: ProcessIdentity, isAlive: (ProcessIdentity) -> Bool = { $0.isAlive }
  ) -> String? {
    recent.last { $0.version != nil && !died($0, process: process, isAlive: isAlive) }?.version
      ?? reachedBefore
  }

  /// The launches given a version that died before their first screen since the one that
  /// ran ``previousVersion(process:isAlive:)``, oldest first: those it passes over.
  package func passedOver(
    process: ProcessIdentity, isAlive: (ProcessIdentity) -> Bool = { $0.isAlive }
  ) -> [Launch] {
    let since = recent.lastIndex {
      $0.version != nil && !died($0, process: process, isAlive: isAlive)
    }
    return recent[(since.map { $0 + 1 } ?? 0)...].filter { $0.version != nil }
  }

  /// The version the app ran before (``previousVersion(process:isAlive:)``) when `version`
  /// is older than it: the app was downgraded. `nil` otherwise.
  package func downgrade(
    to version: String?, process: ProcessIdentity = .current,
    isAlive: (ProcessIdentity) -> Bool = { $0.isAlive }
  ) -> String? {
    guard let version, let last = previousVersion(process: process, isAlive: isAlive),
      VersionOrder.compare(version, last) < 0
    else { return nil }
    return last
  }

  /// The highest version a launch reached its first screen or its end with, past the recent
  /// launches as far as the record knows (``reachedVersion``).
  private var reachedBefore: String? {
    reachedVersion ?? (launchCount > recent.count ? newestVersion : nil)
  }

  /// Whether a launch that did not die before its first screen was given `version`, as far
  /// as the record knows: one of the recent launches, or the highest version reached.
  private func hasReached(
    _ version: String, process: ProcessIdentity, isAlive: (ProcessIdentity) -> Bool
  ) -> Bool {
    let same = { (other: String?) in other.map { VersionOrder.compare($0, version) == 0 } ?? false }
    return same(reachedBefore)
      || recent.contains { same($0.version) && !died($0, process: process, isAlive: isAlive) }
  }

  /// The highest version a launch was given, as far as the record knows.
  private var highestVersion: String? {
    if let newestVersion { return newestVersion }
    return recent.lazy.compactMap(\.version).max { VersionOrder.compare($0, $1) < 0 }
  }

  /// Adds a started launch of `process` and returns its number; `existingInstall` when the
  /// launch found the install ran before the record was kept (kept only by a record that
  /// holds no launch yet).
  package mutating func begin(
    version: String?, process: ProcessIdentity, existingInstall: Bool = false
  ) -> Int {
    if existingInstall, launchCount == 0 { self.existingInstall = true }
    if let version {
      let highest = highestVersion
      newestVersion =
        highest.map { VersionOrder.compare(version, $0) > 0 } ?? true ? version : highest
    }
    launchCount = min(launchCount, Self.countLimit - 1) + 1
    recent.append(
      Launch(
        number: launchCount, version: version, process: process.number,
        processStart: process.start, state: .started))
    if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    return launchCount
  }

  /// Marks launch `number` as having got to `state`, unless it got further already.
  package mutating func mark(_ number: Int, _ state: State) {
    guard let index = recent.lastIndex(where: { $0.number == number }) else { return }
    if recent[index].state == .started || state == .firstScreen { recent[index].state = state }
    // Its version is one the app got past a launch with; the recent launches that did too
    // are counted in a record written before ``reachedVersion`` was kept.
    if recent[index].version != nil, recent[index].state != .started {
      let reached = recent.lazy.filter { $0.state != .started }.compactMap(\.version)
      reachedVersion = ([reachedBefore].compactMap { $0 } + reached).max {
        VersionOrder.compare($0, $1) < 0
      }
    }
  }

  /// The version run-once step `step` succeeded in that makes it done now: any for
  /// `perInstall`, and for `perVersion` in a launch given no version (as per install);
  /// `version` for `perVersion`; `nil` when it is not done.
  package func doneVersion(of step: String, _ once: RunOnce, version: String?) -> String?? {
    guard let versions = self.once[step], !versions.isEmpty else { return nil }
    guard once == .perVersion, let version else { return .some(versions.first { !$0.isEmpty }) }
    return versions.contains { VersionOrder.same($0, version) } ? .some(version) : nil
  }

  /// The launch that holds a live claim on run-once step `step` in `version`, other than
  /// launch `launch` of process `process`: a claim of a dead process, or of a launch of this
  /// process that is over, holds nothing.
  package func claimant(
    of step: String, _ once: RunOnce, version: String?, process: ProcessIdentity, launch: Int,
    isRunning: (Claim) -> Bool
  ) -> Claim? {
    guard let claim = claims?[step] else { return nil }
    if claim.owner.isSame(as: process), claim.launch == launch { return nil }
    // Without a version, as per install: any version's claim holds.
    if once == .perVersion, let version, !VersionOrder.same(claim.version, version) { return nil }
    return isRunning(claim) ? claim : nil
  }

  /// Claims run-once step `step` for launch `launch` of process `process`.
  package mutating func claim(
    _ step: String, version: String?, process: ProcessIdentity, launch: Int
  ) {
    var all = claims ?? [:]
    all[step] = Claim(
      process: process.number, launch: launch, version: version ?? "",
      processStart: process.start)
    claims = all
  }

  /// Releases the claims of launch `launch` of process `process` on `steps` (every step when
  /// `nil`).
  package mutating func release(
    process: ProcessIdentity, launch: Int, steps: Set<String>? = nil
  ) {
    guard var all = claims else { return }
    all = all.filter { step, claim in
      !(claim.owner.isSame(as: process) && claim.launch == launch
        && (steps?.contains(step) ?? true))
    }
    claims = all.isEmpty ? nil : all
  }

  /// Records that run-once step `step` succeeded with `version`.
  package mutating func recordOnce(_ step: String, version: String?) {
    var versions = once[step] ?? []
    let current = version ?? ""
    versions.removeAll { VersionOrder.same($0, current) }
    versions.append(current)
    if versions.count > Self.versionLimit {
      versions.removeFirst(versions.count - Self.versionLimit)
    }
    once[step] = versions
    var last = onceLast ?? [:]
    last[step] = launchCount
    onceLast = last
  }

  /// Keeps what the record says of run-once steps bounded by the manifest launching, whose
  /// run-once steps are `steps`, not by the record's history: of the steps it does not name,
  /// the ``otherOnceLimit`` that succeeded last are kept (another manifest of the same name,
  /// an app extension's or a build the user went back from, runs them: forgotten, they would
  /// run again), and their claims while `isRunning` says the claimant runs.
  package mutating func keepOnce(of steps: Set<String>, isRunning: (Claim) -> Bool) {
    let last = onceLast ?? [:]
    let others = once.keys.filter { !steps.contains($0) }
    if others.count > Self.otherOnceLimit {
      // The longest without a success first; by name among equals, so every process forgets
      // the same ones.
      let forgotten = others.sorted { (last[$0] ?? 0, $0) < (last[$1] ?? 0, $1) }
        .prefix(others.count - Self.otherOnceLimit)
      for step in forgotten { once[step] = nil }
    }
    let kept = last.filter { once[$0.key] != nil }
    onceLast = kept.isEmpty ? nil : kept
    if let all = claims {
      // A claim on a step the manifest names is taken over when a launch of it claims the
      // step; one on a step it does not name, once its launch is over, would stay for good.
      let kept = all.filter { steps.contains($0.key) || isRunning($0.value) }
      claims = kept.isEmpty ? nil : kept
    }
  }
}

/// The file a manifest's ``LaunchRecord`` lives in:
/// `<data folder>/.orchestrate-launches/<manifest name>.json`, locked while it changes
/// (`.<manifest name>.json.lock` beside it) and replaced whole, so two processes launching at
/// once each add their launch and neither loses the other's.
///
/// Its folder holds nothing else (a record per manifest and their locks). Nothing about it
/// fails a launch: a damaged record is moved aside and started afresh, and a record that
/// cannot be written is a note in the report.
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

  /// The folder the record is in.
  package var folder: URL { url.deletingLastPathComponent() }

  /// The lock file writers of the record hold.
  package var lockURL: URL { SharedFile(url: url).lockURL }

  /// The record as it is, without changing anything and without its lock (a record is only
  /// ever replaced whole, so a read sees one whole record): a missing one is empty, and a
  /// damaged one reads as empty with a note saying so; `record` is `nil` when the record
  /// cannot be used at all (its folder is a file or a symbolic link, or it cannot be read).
  package func read() -> (record: LaunchRecord?, notes: [String]) {
    if let problem = folderProblem() { return (nil, [problem]) }
    switch load() {
    case .success(let record): return (record ?? LaunchRecord(), [])
    case .failure(let problem) where problem.isDamage:
      return (LaunchRecord(), ["the launch record \(problem); it reads as empty"])
    case .failure(let problem): return (nil, ["the launch record \(problem)"])
    }
  }

  /// What an ``update(waiting:_:)`` did.
  package struct Update<T> {
    /// What `change` returned; `nil` when it did not run: the record was locked for all of
    /// the wait, or cannot be kept.
    package var value: T?
    /// What went wrong, as sentences without their end.
    package var notes: [String]
    /// Whether the record stayed locked by another process for all of the wait.
    package var wasBusy = false
    /// Whether `change` ran and the record it changed was written: when it ran and this is
    /// false, nothing it changed is kept (the last note says why).
    package var wasWritten = false
  }

  /// Errors each write of the record at a path throws instead of writing: a test's stand-in
  /// for a disk that fills or a folder that turns read-only, which a test running as root
  /// meets no other way.
  package static let writeFaults = Locked<[String: any Error & Sendable]>([:])

  /// Reads the record holding its lock, lets `change` change it, and writes it back
  /// atomically. Waits at most `wait` for the lock, so that the record never holds up a
  /// launch; `change` does not run when the lock stayed taken, or the record cannot be kept
  /// (its folder is a file or a symbolic link), or a newer build of the app wrote it, or it
  /// cannot be read (left as it is). A damaged record is moved aside and `change` starts from
  /// an empty one. Nothing here throws: what went wrong is in the notes.
  package func update<T>(waiting wait: Duration, _ change: (inout LaunchRecord) -> T) -> Update<T> {
    var notes: [String] = []
    var written = false
    if let problem = folderProblem() { return Update(value: nil, notes: [problem]) }
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      return Update(
        value: nil,
        notes: [
          "the launch record's folder '\(folder.path)' cannot be created (\(Self.describe(error))); the record was not kept"
        ])
    }
    if let problem = folderProblem() { return Update(value: nil, notes: [problem]) }
    var result: T?
    let shared = SharedFile(url: url)
    do {
      try shared.withWriteLock(timeout: wait, unusable: .refuse, stopsWhenCancelled: false) {
        var record: LaunchRecord
        switch load() {
        case .success(let found):
          record = found ?? LaunchRecord()
        case .failure(let problem) where !problem.isDamage:
          // Another build's, which the app may go back to (a beta rolled back), or one that
          // cannot be read now (permissions, an I/O error, a folder in its place): kept as it
          // is, and this launch keeps none. Set aside, it would make this launch the first.
          notes.append("the launch record \(problem); it was left as it is, and not kept")
          return
        case .failure(let problem):
          record = LaunchRecord()
          notes.append(setAside(because: problem.description))
        }
        let value = change(&record)
        do {
          try write(record)
          written = true
        } catch {
          notes.append(
            "the launch record '\(url.path)' could not be written (\(Self.describe(error)))")
        }
        result = value
      }
    } catch let failure as StepFailure where failure == shared.busy(for: wait) {
      return Update(
        value: nil,
        notes: [
          "the launch record '\(url.path)' stayed locked by another process for \(DurationText.format(wait))"
        ], wasBusy: true)
    } catch {
      // The lock cannot be taken (a folder at its name, too many open files): said as the
      // lock says it.
      return Update(value: nil, notes: ["\(error)"])
    }
    return Update(value: result, notes: notes, wasWritten: written)
  }

  /// Why the record's folder cannot hold it: it is a file, or a symbolic link (not followed:
  /// the record stays in the data folder); `nil` when it is a folder or missing.
  private func folderProblem() -> String? {
    var info = stat()
    guard lstat(folder.path, &info) == 0 else { return nil }
    let type = info.st_mode & mode_t(S_IFMT)
    if type == mode_t(S_IFDIR) { return nil }
    let what = type == mode_t(S_IFLNK) ? "a symbolic link, which is not followed" : "a file"
    return
      "the launch record's folder '\(folder.path)' is \(what); the record was not kept (move it away to keep launch records)"
  }

  /// An error in words: the system's message for a file error, never a dump of its fields.
  package static func describe(_ error: any Error) -> String {
    let bridged = error as NSError
    if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain
    {
      return String(cString: strerror(Int32(underlying.code)))
    }
    if bridged.domain == NSPOSIXErrorDomain {
      return String(cString: strerror(Int32(bridged.code)))
    }
    if bridged.domain == NSCocoaErrorDomain {
      switch CocoaError.Code(rawValue: bridged.code) {
      case .fileWriteOutOfSpace: return "the disk is full"
      case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
      case .fileWriteVolumeReadOnly: return "the volume is read-only"
      case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or folder"
      case .fileWriteFileExists: return "a file is in the way"
      default: return "the file system refused (code \(bridged.code))"
      }
    }
    // A write ``SafeFiles`` refused says itself (the system's reason, naming the folder or
    // the disk, and what to do): bridged, it would say "The operation could not be
    // completed" and its type's name.
    if let failure = error as? StepFailure { return failure.message }
    return bridged.localizedDescription
  }

  private func write(_ record: LaunchRecord) throws {
    if let fault = Self.writeFaults.withLock({ $0[url.path] }) { throw fault }
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
        "the launch record \(problem), and could not be moved aside (\(Self.describe(error))); it was started afresh"
    }
  }

  /// The record, `nil` when there is none yet, or what is wrong with it.
  private func load() -> Result<LaunchRecord?, RecordProblem> {
    let snapshot: SharedFile.Snapshot
    do {
      snapshot = try SharedFile(url: url).read(limit: Self.maximumSize)
    } catch {
      return .failure(RecordProblem("'\(url.path)' cannot be read (\(error))", isDamage: false))
    }
    guard snapshot.exists else { return .success(nil) }
    guard let bytes = snapshot.bytes else {
      return .failure(RecordProblem("is larger than \(Self.maximumSize / 1024) KiB"))
    }
    let record = try? JSONDecoder().decode(LaunchRecord.self, from: bytes)
    // Only a record that is not this build's is read again, for its format alone: a newer
    // layout may not read as this build's at all.
    if record?.format != LaunchRecord.currentFormat,
      let format = (try? JSONDecoder().decode(FormatOnly.self, from: bytes))?.format,
      format > LaunchRecord.currentFormat
    {
      return .failure(
        RecordProblem(
          "'\(url.path)' was written by a newer build of the app (format \(format), this build reads \(LaunchRecord.currentFormat))",
          isDamage: false, isNewer: true))
    }
    guard let record else {
      return .failure(RecordProblem("is damaged (it does not read as a launch record)"))
    }
    guard record.format == LaunchRecord.currentFormat else {
      return .failure(
        RecordProblem(
          "has another layout (format \(record.format), this build reads \(LaunchRecord.currentFormat))"
        ))
    }
    if let damage = record.damage {
      return .failure(RecordProblem("is damaged (it \(damage))"))
    }
    return .success(record)
  }

  private struct RecordProblem: Error, CustomStringConvertible {
    var description: String
    /// Whether the record's content is wrong (set aside and started afresh), rather than the
    /// file unreadable.
    var isDamage = true
    /// Whether a newer build wrote it: left as it is, never set aside.
    var isNewer = false
    init(_ description: String, isDamage: Bool = true, isNewer: Bool = false) {
      self.description = description
      self.isDamage = isDamage
      self.isNewer = isNewer
    }
  }

  /// A record's `format` alone, whatever the rest of its layout.
  private struct FormatOnly: Decodable {
    var format: Int?
  }
}
