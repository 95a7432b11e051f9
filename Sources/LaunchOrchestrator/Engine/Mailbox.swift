/// A many-producer queue without a consumer task: whoever posts to an idle mailbox becomes
/// its handler, and handles the messages, batch by batch, until none are left.
///
/// Messages are handled one batch at a time and in order, and the thread that finds work
/// does it: a step that finishes starts its dependents itself, with no hop to another task.
/// A message posted while its handler runs (say, from a cancellation handler the handler
/// triggered) is queued for the next batch, never handled re-entrantly.
///
/// The mailbox also keeps the handler's own value (`Owned`): a handler takes it when it
/// starts handling and gives it back when it lets go, through the lock the mailbox takes
/// anyway, moving it, never copying it. Only the handler reaches it, so it needs no lock of
/// its own, and the handler can act on it (cancel the tasks it holds, say) while holding none.
final class Mailbox<Message: Sendable, Owned: Sendable>: Sendable {
  private struct State {
    var messages: [Message] = []
    var isHandling = false
    var isClosed = false
    /// The handler's value, here while no one handles messages.
    var owned: Owned?
    /// An empty buffer with room, left by the last handler for the next: `messages` and the
    /// handler's batch trade buffers, so a steady flow of messages allocates nothing.
    var spare: [Message] = []
  }

  private let state: Locked<State>

  /// A mailbox whose handlers share `owned`.
  init(owning owned: Owned) {
    state = Locked(State(owned: owned))
  }

  /// Adds `message`; returns whether the caller has become the handler, which it is when no
  /// one else was handling messages. `false` also when the mailbox is closed: the message is
  /// dropped. The new handler must call ``handle(posting:with:whenIdle:)`` without a message,
  /// here or on a task it starts; until it does, later posts only queue, so order is kept. A
  /// poster that handles where it is posts through that call instead, which takes its batch
  /// in the same lock.
  func enqueue(_ message: Message) -> Bool {
    state.withLock { state in
      guard !state.isClosed else { return false }
      state.messages.append(message)
      guard !state.isHandling else { return false }
      state.isHandling = true
      return true
    }
  }

  /// Handles the messages with `body`, a batch at a time, until none are left, or until
  /// `body` returns `false`, which closes the mailbox: the messages still queued and any
  /// posted later are dropped. `body` and `idle` hold no lock of the mailbox's, and get the
  /// handlers' value.
  ///
  /// With a `message`, adds it first, and handles only if no one else was handling messages;
  /// the batch and the value are taken in the lock that adds it. Without one, the caller is
  /// the handler ``enqueue(_:)`` made.
  ///
  /// When the messages run out, the handler calls `idle` before it lets go, still as the
  /// only handler; what is posted meanwhile is handled, and `idle` called again, before it
  /// returns. Work that can wait for a lull (waking a consumer) belongs there.
  ///
  /// - Returns: `nil` when another handler takes `message`, or the mailbox is closed and
  ///   drops it; otherwise whether this call closed the mailbox.
  func handle(
    posting message: Message?, with body: (inout Owned, [Message]) -> Bool,
    whenIdle idle: (inout Owned) -> Void = { _ in }
  ) -> Bool? {
    // Swapped in and out, never copied: a copy would retain every reference the value holds,
    // and leave the next change to copy its arrays whole.
    var owned: Owned?
    var batch: [Message] = []
    let isHandler = state.withLock { state in
      if let message {
        guard !state.isClosed else { return false }
        guard !state.isHandling else {
          state.messages.append(message)
          return false
        }
        // No one handles, so nothing is queued: the batch is this message alone, in the
        // spare buffer.
        assert(state.messages.isEmpty, "messages queued with no one to handle them")
        state.isHandling = true
        swap(&batch, &state.spare)
        batch.append(message)
      } else {
        precondition(
          state.isHandling && state.owned != nil,
          "handle(posting: nil) is for the handler enqueue(_:) made, once")
        swap(&batch, &state.messages)
        swap(&state.messages, &state.spare)
      }
      swap(&owned, &state.owned)
      return true
    }
    guard isHandler else { return nil }
    while true {
      let keepsOpen = body(&owned!, batch)
      // One by one, keeping the buffer: `removeAll(keepingCapacity:)` destroys through the
      // run time's generic witness, on every batch.
      while !batch.isEmpty { batch.removeLast() }
      guard keepsOpen else {
        state.withLock { state in
          state.isClosed = true
          state.isHandling = false
          state.messages.removeAll()
          swap(&owned, &state.owned)
        }
        return true
      }
      // The next batch, or else a lull: `idle`, then the next batch or the end.
      var calledIdle = false
      while !takeNextBatch(into: &batch, handing: &owned, afterIdle: calledIdle) {
        if calledIdle { return false }
        idle(&owned!)
        calledIdle = true
      }
    }
  }

  /// Swaps the queued messages into `batch` and returns `true`; with none queued, returns
  /// `false`, and after `idle` also lets go of the role, leaving the value and the emptied
  /// batch's buffer for the next handler.
  private func takeNextBatch(
    into batch: inout [Message], handing owned: inout Owned?, afterIdle: Bool
  ) -> Bool {
    state.withLock { state in
      if !state.messages.isEmpty {
        swap(&batch, &state.messages)
        return true
      }
      if afterIdle {
        state.isHandling = false
        swap(&owned, &state.owned)
        swap(&batch, &state.spare)
      }
      return false
    }
  }
}
