import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Why the app launched, as the app says it, and what the package's launch record makes of
/// this launch: the first, the first after an upgrade, which one, in safe mode.
///
/// The app hands its part to the launch in the environment; left out, a launch is a tap on
/// the app's icon, not prewarmed:
///
/// ```swift
/// environment[LaunchContext.self] = LaunchContext(reason: .notification, isPrewarmed: false)
/// ```
///
/// Steps run or not by it (`when`, `once`); the report and ``LaunchSession/context`` carry
/// it with the record's facts filled in.
public struct LaunchContext: Sendable, Equatable {
  /// Why the app launched: one of the static values, or any other name the app uses (a
  /// manifest's `when.reason` lists names).
  public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The name manifests use.
    public var rawValue: String

    /// The reason called `rawValue`.
    public init(rawValue: String) {
      self.rawValue = rawValue
    }

    /// The user tapped the app's icon: an ordinary launch, and the default.
    public static let userTap = Reason(rawValue: "userTap")
    /// The user opened a notification.
    public static let notification = Reason(rawValue: "notification")
    /// The app was opened with a URL (a link, a universal link, a file).
    public static let url = Reason(rawValue: "url")
    /// The user chose a home screen quick action.
    public static let shortcut = Reason(rawValue: "shortcut")
    /// The system woke the app for background work (a refresh, a push, a download).
    public static let backgroundTask = Reason(rawValue: "backgroundTask")
    /// An app extension or widget launched the app's code.
    public static let `extension` = Reason(rawValue: "extension")

    /// The name.
    public var description: String { rawValue }

    /// The reasons this package names.
    package static let known: [Reason] = [
      .userTap, .notification, .url, .shortcut, .backgroundTask, .extension,
    ]

    /// The known reason `name` is likely a typo of: one that differs from it only by case, or
    /// by a few letters; `nil` for a known reason or a name unlike any.
    package static func nearKnown(_ name: String) -> String? {
      let names = known.map(\.rawValue)
      guard !names.contains(name) else { return nil }
      return Suggestions.closest(to: name, in: names)
    }
  }

  /// Why the app launched.
  public var reason: Reason
  /// Whether the system launched the app ahead of use (iOS prewarming): no user is waiting,
  /// and protected data such as the keychain may be unavailable.
  public var isPrewarmed: Bool
  /// Whether no launch before this one got to its first screen or to its end, by the launch
  /// record: the first launch after the install, or one after first launches that were
  /// killed or crashed before their first screen (what only the first launch does, such as
  /// onboarding, is not lost with them). Never for an install that ran before the record was
  /// kept (`existingInstall`).
  public package(set) var isFirstLaunch = false
  /// Whether the app's version is higher than the one it ran before: that of the last launch
  /// that got to its first screen or to its end (a launch of a new version killed before its
  /// first screen leaves the next the first after the upgrade).
  public package(set) var isFirstLaunchAfterUpgrade = false
  /// Which launch this is, counting from 1; 0 when the launch record could not be read.
  public package(set) var launchNumber = 0
  /// Whether the launch runs in safe mode: the manifest's `safeMode.after` launches before it
  /// started and never reached the first screen (the app died or was killed).
  public package(set) var isSafeMode = false

  /// Whether the install ran before the launch record was kept, as the app knows it; read
  /// only by a launch whose record holds no launch, then handed on to none.
  package var existingInstall: Bool?

  /// The app's part of the context; the launch fills in the rest from its record.
  ///
  /// - Parameter existingInstall: Whether the app ran on this device before the launch record
  ///   was kept, as the app knows it (its own data, a setting it saved): the update that
  ///   first ships a manifest with `when`, `once` or `safeMode` meets users who have data,
  ///   and no record. `true`: the launch is not the first, and is the first after an upgrade;
  ///   `false`: a new install; `nil` (the default): a new install unless a file one of the
  ///   manifest's steps keeps (a store) is in the data folder already. Read only while the
  ///   record holds no launch; the record says it from then on.
  public init(reason: Reason = .userTap, isPrewarmed: Bool = false, existingInstall: Bool? = nil) {
    self.reason = reason
    self.isPrewarmed = isPrewarmed
    self.existingInstall = existingInstall
  }

  /// A context with every fact given, for rehearsals and tests.
  package init(
    reason: Reason, isPrewarmed: Bool, isFirstLaunch: Bool, isFirstLaunchAfterUpgrade: Bool,
    launchNumber: Int, isSafeMode: Bool
  ) {
    self.init(reason: reason, isPrewarmed: isPrewarmed)
    self.isFirstLaunch = isFirstLaunch
    self.isFirstLaunchAfterUpgrade = isFirstLaunchAfterUpgrade
    self.launchNumber = launchNumber
    self.isSafeMode = isSafeMode
  }
}

extension LaunchContext {
  /// The kind of launch, for keeping unlike launches apart in comparisons: `ordinary` (a
  /// tap, not prewarmed, neither first nor after an upgrade, not in safe mode), else its
  /// unusual facts (`reason notification, first launch`). The launch number is no part of it.
  package var kind: String {
    var facts: [String] = []
    if reason != .userTap { facts.append("reason \(reason.rawValue)") }
    if isPrewarmed { facts.append("prewarmed") }
    if isFirstLaunch { facts.append("first launch") }
    if isFirstLaunchAfterUpgrade { facts.append("first launch after an upgrade") }
    if isSafeMode { facts.append("safe mode") }
    return facts.isEmpty ? "ordinary" : facts.joined(separator: ", ")
  }
}

extension LaunchReport {
  /// The kind of launch the report is of (``LaunchContext/kind``); `ordinary` for a report
  /// without a context.
  package var launchKind: String { context?.kind ?? "ordinary" }
}

extension LaunchPlan {
  /// Whether a step has a `when` or a `once`, or the manifest a `safeMode`.
  package var usesContext: Bool { !contextSteps.isEmpty || manifest.safeMode != nil }

  /// The context the next launch would have by the record in the data folder, read without
  /// changing it, for the app's part `context` and `version`; a record that cannot be used
  /// gives the facts of a launch whose record is unknown (``LaunchContext/unknown(_:)``).
  package func nextContext(_ context: LaunchContext, version: String?) -> (
    context: LaunchContext, notes: [String]
  ) {
    let (record, notes) = LaunchRecordFile(dataDirectory: dataDirectory, manifestName: name).read()
    guard let record else { return (LaunchContext.unknown(context), notes) }
    let facts = facts(by: record, given: context, version: version, process: .current)
    return (facts.context, notes + facts.notes)
  }

  /// The facts of the launch that would start now in `process` by `record`, for the app's
  /// part `given` and `version` (``LaunchRecord/facts(for:version:safeModeAfter:process:existingInstall:isAlive:)``),
  /// with the notes they call for: an install that ran before the record, a downgrade, an
  /// upgrade whose launches died before their first screen. `existingInstall` says whether
  /// the launch found that the install ran before the record, for the record to keep.
  package func facts(
    by record: LaunchRecord, given: LaunchContext, version: String?, process: ProcessIdentity
  ) -> (context: LaunchContext, notes: [String], existingInstall: Bool) {
    // Only while the record holds no launch: looked for on a first launch, never again; and
    // only for a manifest whose steps or safe mode the context changes (`plan` of one that
    // uses none has nothing to say about it).
    let evidence =
      usesContext && record.launchCount == 0 ? existingInstallEvidence(given) : nil
    let facts = record.facts(
      for: given, version: version, safeModeAfter: manifest.safeMode?.after, process: process,
      existingInstall: evidence != nil)
    var notes: [String] = []
    if let evidence {
      notes.append(
        "the launch record holds no launch, and \(evidence): this install ran before the record was kept, so this launch is not the first"
          + (facts.isFirstLaunchAfterUpgrade ? ", and is the first after an upgrade" : ""))
    }
    if let last = record.downgrade(to: version, process: process) {
      notes.append(LaunchContext.downgradeNote(from: last, to: version))
    }
    let passedOver = record.passedOver(process: process)
    if facts.isFirstLaunchAfterUpgrade, !passedOver.isEmpty,
      let previous = record.previousVersion(process: process)
    {
      notes.append(LaunchContext.passedOverNote(passedOver, previous: previous))
    }
    return (facts, notes, evidence != nil)
  }

  /// What says the install ran before its launch record was kept, in words: the app's word
  /// (``LaunchContext/existingInstall``), or else a file one of the manifest's steps keeps
  /// (a path parameter declared `rewritesFile`: `store.init`'s store, `queue.validate`'s
  /// queue, `state.restore`'s state) already in the data folder, since the record is written
  /// before any step runs, and a new install's first launch finds none. `nil` for a new
  /// install. A few `lstat`s, and only for a launch whose record holds no launch.
  private func existingInstallEvidence(_ given: LaunchContext) -> String? {
    if let said = given.existingInstall {
      return said ? "the app says the install ran before (existingInstall)" : nil
    }
    for parameter in manifest.pathParameters(registry: registry)
    where parameter.rewritesFile && !parameter.isInherited {
      var info = stat()
      let url = StepContext.resolve(parameter.written, against: dataDirectory)
      if lstat(url.path, &info) == 0 {
        return "the data folder holds '\(parameter.written)' (the \(parameter.owner(in: manifest)))"
      }
    }
    return nil
  }
}

extension LaunchContext {
  /// The facts of a launch whose record could not be used (its folder is a file, it cannot
  /// be read): not the first launch, not after an upgrade, launch 0, not in safe mode. The
  /// safe side: a step for the first launch or an upgrade does not run on a guess, and
  /// nothing is skipped for safe mode.
  package static func unknown(_ given: LaunchContext) -> LaunchContext {
    LaunchContext(reason: given.reason, isPrewarmed: given.isPrewarmed)
  }

  /// The note for a launch that is the first after the upgrade from `previous` although
  /// later launches, `passedOver`, were given a version: they died before their first screen.
  package static func passedOverNote(
    _ passedOver: [LaunchRecord.Launch], previous: String
  ) -> String {
    var versions: [String] = []
    for version in passedOver.compactMap(\.version) where !versions.contains(version) {
      versions.append(version)
    }
    let launches = passedOver.count == 1 ? "1 launch" : "\(passedOver.count) launches"
    let its = passedOver.count == 1 ? "its" : "their"
    return
      "\(launches) of \(versions.joined(separator: ", ")) since \(previous) never reached \(its) first screen (killed or crashed); this launch is the first after the upgrade from \(previous)"
  }

  /// The note for a launch of an older version than the one the app ran before.
  package static func downgradeNote(from last: String, to version: String?) -> String {
    "the app was downgraded from \(last) to \(version ?? "?"); this is not an upgrade, and run-once steps already done in \(version ?? "?") are not run again"
  }
}
