/// A many-producer queue without a consumer task: whoever posts to an idle mailbox becomes
/// its handler, and handles the messages, batch by batch, until none are left.
///
/// Messages are handled one batch at a time and in order, and the thread that finds work
/// does it: a step that finishes starts its dependents itself, with no hop to another task.
/// A message posted while its handler runs (say, from a cancellation handler the handler
/// triggered) is queued for the next batch, never handled re-entrantly.
///
/// The mailbox also keeps the handler's own value (`Owned`): it goes to each handler with
/// the role and comes back when the handler lets go, through the lock the mailbox takes
/// anyway. Only the handler reaches it, so it needs no lock of its own, and the handler can
/// act on it (cancel the tasks it holds, say) while holding none.
final class Mailbox<Message: Sendable, Owned: Sendable>: Sendable {
  private struct State {
    var messages: [Message] = []
    var isHandling = false
    var isClosed = false
    /// The handler's value, here while no one handles messages.
    var owned: Owned?
  }

  private let state: Locked<State>

  /// A mailbox whose handlers share `owned`.
  init(owning owned: Owned) {
    state = Locked(State(owned: owned))
  }

  /// Adds `message`; returns whether the caller has become the handler, which it is when no
  /// one else was handling messages. The new handler must call ``handle(with:whenIdle:)``,
  /// here or on a task it starts: meanwhile others only queue, so order is kept.
  func enqueue(_ message: Message) -> Bool {
    state.withLock { state in
      guard !state.isClosed else { return false }
      state.messages.append(message)
      guard !state.isHandling else { return false }
      state.isHandling = true
      return true
    }
  }

  /// As the handler, handles the messages with `body`, a batch at a time, until none are
  /// left, or until `body` returns `false`, which closes the mailbox: later messages are
  /// dropped. `body` and `idle` hold no lock of the mailbox's, and get the handlers' value.
  ///
  /// When the messages run out, the handler calls `idle` before it lets go, still as the
  /// only handler; what is posted meanwhile is handled before it returns. Work that can wait
  /// for a lull (waking a consumer) belongs there.
  ///
  /// - Returns: Whether this call closed the mailbox.
  func handle(
    with body: (inout Owned, [Message]) -> Bool, whenIdle idle: (inout Owned) -> Void = { _ in }
  ) -> Bool {
    // Two buffers trade places, so a steady flow of messages allocates nothing.
    var batch: [Message] = []
    // Swapped in and out, never copied: a copy would retain every reference it holds.
    var owned: Owned?
    var calledIdle = false
    while true {
      let next: Next = state.withLock { state in
        if owned == nil { swap(&owned, &state.owned) }
        if !state.messages.isEmpty {
          swap(&batch, &state.messages)
          return .handle
        }
        if calledIdle {
          state.isHandling = false
          swap(&owned, &state.owned)
          return .stop
        }
        return .idle
      }
      switch next {
      case .handle:
        let keepsOpen = body(&owned!, batch)
        batch.removeAll(keepingCapacity: true)
        calledIdle = false
        if !keepsOpen {
          state.withLock { state in
            state.isClosed = true
            state.isHandling = false
            state.messages.removeAll()
            swap(&owned, &state.owned)
          }
          return true
        }
      case .idle:
        idle(&owned!)
        calledIdle = true
      case .stop:
        return false
      }
    }
  }

  private enum Next {
    case handle, idle, stop
  }
}
