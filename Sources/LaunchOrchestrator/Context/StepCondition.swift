/// A step's `when`: facts of the launch's context that must all hold for the step to run.
/// A key left out holds whatever the context says.
package struct StepCondition: Sendable, Equatable {
  /// The launch reasons the step runs for.
  package var reasons: [String]?
  /// Whether the step runs only on the first launch (`true`) or never on it (`false`).
  package var firstLaunch: Bool?
  /// The same for the first launch after an upgrade.
  package var afterUpgrade: Bool?
  /// The same for a prewarmed launch.
  package var prewarmed: Bool?
  /// The same for a launch in safe mode.
  package var safeMode: Bool?

  package init(
    reasons: [String]? = nil, firstLaunch: Bool? = nil, afterUpgrade: Bool? = nil,
    prewarmed: Bool? = nil, safeMode: Bool? = nil
  ) {
    self.reasons = reasons
    self.firstLaunch = firstLaunch
    self.afterUpgrade = afterUpgrade
    self.prewarmed = prewarmed
    self.safeMode = safeMode
  }

  /// Why the step does not run in `context`, naming the first key (in the order of the
  /// manifest reference's table) that does not hold; `nil` when every key holds.
  package func skipReason(in context: LaunchContext) -> String? {
    if let reasons, !reasons.contains(context.reason.rawValue) {
      return "condition: reason is \(context.reason.rawValue)"
    }
    if let firstLaunch, firstLaunch != context.isFirstLaunch {
      return firstLaunch ? "condition: not the first launch" : "condition: first launch"
    }
    if let afterUpgrade, afterUpgrade != context.isFirstLaunchAfterUpgrade {
      return afterUpgrade
        ? "condition: not the first launch after an upgrade"
        : "condition: first launch after an upgrade"
    }
    if let prewarmed, prewarmed != context.isPrewarmed {
      return prewarmed ? "condition: not prewarmed" : "condition: prewarmed"
    }
    if let safeMode, safeMode != context.isSafeMode {
      // The words the app's safe-mode notice and the report share.
      return safeMode ? "condition: not in safe mode" : "safe mode"
    }
    return nil
  }
}

/// A step's `once`: how often it runs at most, by the launch record.
package enum RunOnce: String, Sendable, CaseIterable {
  /// Once after the app is installed (once per data folder).
  case perInstall
  /// Once for each app version.
  case perVersion
}

/// The manifest's `safeMode`: when a launch runs in safe mode.
package struct SafeModePolicy: Sendable, Equatable {
  /// How many launches in a row must have started and never reached the first screen.
  package var after: Int

  package init(after: Int = 2) {
    self.after = after
  }
}
