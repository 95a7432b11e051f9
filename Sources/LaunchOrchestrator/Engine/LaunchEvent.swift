/// One state change of a launch, stamped with the time since the launch started.
public struct LaunchEvent: Sendable, Equatable {
  /// What happened.
  public enum Kind: Sendable, Equatable {
    /// An attempt of a step began.
    case started(step: String, attempt: Int)
    /// A running step reported how far along it is.
    case progress(step: String, fraction: Double?, message: String?)
    /// A running step wrote a log line, or the launch noted something about a step: its
    /// output served from the cache, or its wait for an earlier attempt of it, abandoned and
    /// still running, to end.
    case log(step: String, message: String)
    /// A step finished successfully.
    case succeeded(step: String, usedFallback: Bool)
    /// A step failed its last attempt.
    case failed(step: String, error: String)
    /// A step's last attempt hit its timeout.
    case timedOut(step: String, timeout: Duration)
    /// An attempt failed and another (or the fallback) follows after `delay`.
    case retrying(step: String, nextAttempt: Int, error: String, delay: Duration, fallback: Bool)
    /// A step never started.
    case skipped(step: String, reason: String)
    /// A step's output was served from the cache; the step runs behind to refresh it.
    case cached(step: String)
    /// The refresh of a cached step succeeded, and its new output replaced the cached one.
    case refreshed(step: String)
    /// The refresh of a cached step did not succeed; the cached output stays.
    case refreshFailed(step: String, error: String)
    /// A step was running when the launch ended.
    case cancelled(step: String)
    /// A step's output was taken from the launch's previous run (``LaunchSession/retry()``):
    /// it succeeded then, and does not run again.
    case reused(step: String)
    /// The app paused the launch (or the process was suspended): no step starts until it
    /// resumes, and deadlines stop.
    case paused
    /// The launch resumed after `pausedFor` of real time; every deadline moved by as much.
    case resumed(pausedFor: Duration)
    /// The app sent a signal the manifest declares (`signals`); steps waiting for it may start.
    case signalled(name: String)
    /// Every step of a milestone has finished.
    case milestone(name: String)
    /// A step ended the launch with a route.
    case routed(route: LaunchRoute, step: String)
    /// The launch is over.
    case finished(outcome: LaunchOutcome)
  }

  /// The time since the launch started.
  public var time: Duration
  /// What happened.
  public var kind: Kind

  /// Creates an event.
  package init(time: Duration, kind: Kind) {
    self.time = time
    self.kind = kind
  }
}

/// How a launch ended.
public enum LaunchOutcome: String, Sendable, Equatable, CaseIterable {
  /// Every step succeeded.
  case succeeded
  /// The launch ran to its end, but `continue` steps failed or were skipped.
  case degraded
  /// An `abort` step failed.
  case failed
  /// A step ended the launch with a route.
  case routed
  /// The launch was cancelled from outside.
  case cancelled
}

/// How a step ended.
public enum StepState: String, Sendable, Equatable, CaseIterable {
  /// It succeeded (possibly through its fallback).
  case succeeded
  /// Its last attempt failed.
  case failed
  /// Its last attempt ran out of time.
  case timedOut
  /// It never started.
  case skipped
  /// It was running when the launch ended.
  case cancelled
  /// Its output was served from the cache at once; ``LaunchReport/Step/refresh`` says how
  /// running it again behind went.
  case cached
}
