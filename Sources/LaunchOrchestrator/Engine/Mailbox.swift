/// A many-producer queue without a consumer task: whoever posts to an idle mailbox becomes
/// its handler, and handles the messages, batch by batch, until none are left.
///
/// Messages are handled one batch at a time and in order, and the thread that finds work
/// does it: a step that finishes starts its dependents itself, with no hop to another task.
/// A message posted while its handler runs (say, from a cancellation handler the handler
/// triggered) is queued for the next batch, never handled re-entrantly.
final class Mailbox<Message: Sendable>: Sendable {
  private struct State {
    var messages: [Message] = []
    var isHandling = false
    var isClosed = false
  }

  private let state = Locked(State())

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
  /// dropped.
  ///
  /// When the messages run out, the handler calls `idle` before it lets go, still as the
  /// only handler; what is posted meanwhile is handled before it returns. Work that can wait
  /// for a lull (waking a consumer) belongs there.
  ///
  /// - Returns: Whether this call closed the mailbox.
  func handle(with body: ([Message]) -> Bool, whenIdle idle: () -> Void = {}) -> Bool {
    // Two buffers trade places, so a steady flow of messages allocates nothing.
    var batch: [Message] = []
    var calledIdle = false
    while true {
      let next: Next = state.withLock { state in
        if !state.messages.isEmpty {
          swap(&batch, &state.messages)
          return .handle
        }
        if calledIdle {
          state.isHandling = false
          return .stop
        }
        return .idle
      }
      switch next {
      case .handle:
        let keepsOpen = body(batch)
        batch.removeAll(keepingCapacity: true)
        calledIdle = false
        if !keepsOpen {
          state.withLock { state in
            state.isClosed = true
            state.isHandling = false
            state.messages.removeAll()
          }
          return true
        }
      case .idle:
        idle()
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
