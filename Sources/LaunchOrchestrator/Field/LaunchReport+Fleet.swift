import Foundation

extension LaunchReport {
  /// Fills in what a fleet slices launches by: the app's version and build and the labels
  /// from `environment`, and the time from the process's start to `start`, the launch's.
  mutating func stamp(environment: LaunchEnvironment, start: ProcessStart.Mark) {
    app = environment[AppInfo.self]
    labels = environment[LaunchLabels.self]
    sinceProcessStart = start.sinceProcessStart
    startedAt = start.date
  }
}
