import LaunchOrchestrator

/// A clock that moves only when a test tells it to, so timing semantics are tested without
/// real sleeps.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    let id: Int
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [Sleeper] = []
    var nextID = 0
    var cancelledIDs: Set<Int> = []
  }

  private let state = Locked(State())

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }

  /// The deadlines of everyone sleeping, earliest first.
  var sleeperDeadlines: [Duration] {
    state.withLock { $0.sleepers.map(\.deadline.offset).sorted() }
  }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let resumeNow: Result<Void, any Error>? = state.withLock { state in
          if state.cancelledIDs.remove(id) != nil { return .failure(CancellationError()) }
          if deadline <= state.now { return .success(()) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return nil
        }
        if let resumeNow { continuation.resume(with: resumeNow) }
      }
    } onCancel: {
      let sleeper: Sleeper? = state.withLock { state in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
          state.cancelledIDs.insert(id)
          return nil
        }
        return state.sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward by `duration`, waking everyone whose deadline has come.
  func advance(by duration: Duration) {
    let due: [Sleeper] = state.withLock { state in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
      state.sleepers.removeAll { $0.deadline <= now }
      return due
    }
    for sleeper in due { sleeper.continuation.resume() }
  }

  /// Moves time forward to `offset` since the clock's start.
  func advance(to offset: Duration) {
    advance(by: offset - now.offset)
  }

  /// Waits (really, briefly polling) until `count` sleepers are waiting.
  func waitForSleepers(_ count: Int) async {
    while state.withLock({ $0.sleepers.count }) < count {
      await Task.yield()
      try? await Task.sleep(for: .milliseconds(1))
    }
  }
}
