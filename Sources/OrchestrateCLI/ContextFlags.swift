import LaunchOrchestrator

/// The launch-context flags `run` and `plan` share, their help said once, and the context
/// they rehearse.
struct ContextFlags {
  static let reasonHelp =
    "Rehearse a launch for this reason ('notification', 'backgroundTask', ...) without touching the launch record."
  static let prewarmedHelp = "Rehearse a launch the system prewarmed."
  static let firstLaunchHelp = "Rehearse the first launch after the app is installed."
  static let afterUpgradeHelp = "Rehearse the first launch after an app upgrade."
  static let safeModeHelp = "Rehearse a launch in safe mode."

  var reason: String?
  var prewarmed: Bool
  var firstLaunch: Bool
  var afterUpgrade: Bool
  var safeMode: Bool

  /// Whether any flag was given: the launch is then rehearsed, and the record left alone.
  var isRehearsal: Bool { reason != nil || prewarmed || firstLaunch || afterUpgrade || safeMode }

  /// A warning when `--reason` names a reason a letter or a case away from a known one.
  var reasonWarning: String? {
    guard let reason, let known = LaunchContext.Reason.nearKnown(reason) else { return nil }
    return
      "Warning: '--reason \(reason)' is not a known launch reason; did you mean '\(known)'? (Other names are allowed, for reasons the app hands on itself.)"
  }

  /// Refuses flags that together describe a launch no record can give: a first launch has
  /// no launch before it, so it is never the first after an upgrade.
  func validate(
    firstLaunch firstOption: ArgumentDeclaration, afterUpgrade afterOption: ArgumentDeclaration
  )
    throws(CLIError)
  {
    if firstLaunch, afterUpgrade {
      throw .invalidValue(
        "'\(firstOption.name)' and '\(afterOption.name)' cannot be used together: the first launch after install has no earlier version to upgrade from. Rehearse one of them."
      )
    }
  }

  /// The context the flags rehearse: the one the record gives the next launch of `plan`
  /// (read, never written), each flag given over it; notes say what was wrong with the record.
  func context(for plan: LaunchPlan, version: String?) -> (LaunchContext, notes: [String]) {
    let given = LaunchContext(
      reason: reason.map(LaunchContext.Reason.init(rawValue:)) ?? .userTap,
      isPrewarmed: prewarmed)
    let (next, notes) = plan.nextContext(given, version: version)
    // A first launch has no launch before it: neither an upgrade nor a string of failures;
    // and a rehearsed upgrade or safe mode has launches before it, even where the record
    // holds none yet.
    let hasLaunchesBefore = afterUpgrade || safeMode
    let isFirstLaunch = firstLaunch || (!hasLaunchesBefore && next.isFirstLaunch)
    return (
      LaunchContext(
        reason: given.reason, isPrewarmed: prewarmed,
        isFirstLaunch: isFirstLaunch,
        isFirstLaunchAfterUpgrade: afterUpgrade || (!firstLaunch && next.isFirstLaunchAfterUpgrade),
        launchNumber: firstLaunch
          ? 1 : hasLaunchesBefore && next.isFirstLaunch ? 2 : next.launchNumber,
        isSafeMode: safeMode || (!firstLaunch && next.isSafeMode)),
      notes
    )
  }
}

extension LaunchContext {
  /// `reason notification, launch 3, first launch after an upgrade`, for summaries.
  var summary: String {
    var facts = ["reason \(reason.rawValue)"]
    if isPrewarmed { facts.append("prewarmed") }
    if launchNumber > 0 { facts.append("launch \(launchNumber)") }
    if isFirstLaunch { facts.append("first launch") }
    if isFirstLaunchAfterUpgrade { facts.append("first launch after an upgrade") }
    if isSafeMode { facts.append("safe mode") }
    return facts.joined(separator: ", ")
  }
}
