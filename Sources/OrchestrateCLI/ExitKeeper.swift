import Synchronization

/// Holds what a command built and has finished with, so that the process's exit reclaims it
/// instead of the command freeing it piece by piece.
///
/// `orchestrate plan` on a 10,000-step manifest spends a few milliseconds, after printing,
/// releasing the plan, the forecast and the table's rows object by object; the process exits
/// right after, and the system takes its memory back at once (clang's `-disable-free` does
/// the same). Only ``Orchestrate/main(registry:environment:)``, which exits, binds a keeper:
/// a command that ``Orchestrate/run(arguments:registry:environment:)`` runs in its caller's
/// process frees its values as it returns, as any function does.
///
/// What is kept is never deinitialised: a plugin's object made when its step is prepared,
/// and held by the plan, does not run its `deinit` when `plan` or `validate` exits. The
/// built-in plugins open what they close (a connection, a folder) when their step runs.
final class ExitKeeper: Sendable {
  /// The keeper of the process that is about to exit, if any.
  @TaskLocal static var current: ExitKeeper?

  private let kept = Mutex<(any Sendable)?>(nil)

  /// Hands `values` to the exit when a keeper is bound, in place of the values handed
  /// before, which are freed now: a command that hands values more than once holds the
  /// last, not all of them.
  static func keep(_ values: some Sendable) {
    guard let current else { return }
    // The previous values come out of the lock and are freed here, outside it.
    _ = current.kept.withLock { kept in
      defer { kept = values }
      return kept
    }
  }
}
