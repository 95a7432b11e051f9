/// The attempts a session's launches abandoned whose code still runs (a plugin that ignored its
/// cancellation past the grace period), so that a later launch of the session (a retry, a new
/// run) starts none of those steps beside them: two migrations of one store at once, two
/// rewrites of one queue.
///
/// A launch adds the attempts it abandons and says when each ends; a launch that starts
/// watches those still running, and hears as each ends. Nothing is called while its lock is
/// held.
final class AbandonedAttempts: Sendable {
  /// An abandoned attempt still running.
  struct Entry: Sendable {
    /// The number the session gave it.
    let id: Int
    /// Its step's id.
    let step: String
    /// Which attempt, and why it was let go of.
    let attempt: LaunchScheduler.AbandonedAttempt
  }

  /// A launch waiting for entries to end: `tell` hears each id as it ends.
  private struct Watcher {
    var pending: Set<Int>
    let tell: @Sendable (Entry) -> Void
  }

  private struct State {
    var running: [Int: Entry] = [:]
    var nextID = 0
    var watchers: [Int: Watcher] = [:]
    var nextWatcher = 0
  }

  private let state = Locked(State())

  /// Adds an attempt of step `step` a launch let go of while it still runs; returns the number
  /// to say its end with.
  func add(step: String, attempt: LaunchScheduler.AbandonedAttempt) -> Int {
    state.withLock { state in
      defer { state.nextID += 1 }
      state.running[state.nextID] = Entry(id: state.nextID, step: step, attempt: attempt)
      return state.nextID
    }
  }

  /// The attempt numbered `id` ended: the launches waiting for it hear so.
  func end(_ id: Int) {
    let told = state.withLock { state -> [(Entry, @Sendable (Entry) -> Void)] in
      guard let entry = state.running.removeValue(forKey: id) else { return [] }
      var told: [(Entry, @Sendable (Entry) -> Void)] = []
      for (key, watcher) in state.watchers where watcher.pending.contains(id) {
        told.append((entry, watcher.tell))
        state.watchers[key]?.pending.remove(id)
        if state.watchers[key]?.pending.isEmpty == true { state.watchers[key] = nil }
      }
      return told
    }
    for (entry, tell) in told { tell(entry) }
  }

  /// The attempts still running, for a launch about to start, which hears through `tell` as
  /// each of them ends, until it has heard of all or calls ``unwatch(_:)`` with the number
  /// returned; `nil` when none runs (nothing is watched).
  func watch(
    _ tell: @escaping @Sendable (Entry) -> Void
  ) -> (watcher: Int, running: [Entry])? {
    state.withLock { state in
      guard !state.running.isEmpty else { return nil }
      defer { state.nextWatcher += 1 }
      state.watchers[state.nextWatcher] = Watcher(pending: Set(state.running.keys), tell: tell)
      return (state.nextWatcher, state.running.values.sorted { $0.id < $1.id })
    }
  }

  /// Stops telling the launch that watched as `watcher`.
  func unwatch(_ watcher: Int) {
    state.withLock { _ = $0.watchers.removeValue(forKey: watcher) }
  }
}
