/// A many-producer queue without a consumer task: whoever posts to an idle mailbox handles
/// the messages, batch by batch, until none are left.
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

  /// Adds `message`. If no one is handling messages, handles them with `body` until none
  /// are left, or until `body` returns `false`, which closes the mailbox: later messages
  /// are dropped.
  ///
  /// - Returns: Whether this call closed the mailbox.
  @discardableResult
  func post(_ message: Message, handlingWith body: ([Message]) -> Bool) -> Bool {
    let handles = state.withLock { state in
      guard !state.isClosed else { return false }
      state.messages.append(message)
      guard !state.isHandling else { return false }
      state.isHandling = true
      return true
    }
    guard handles else { return false }
    // Two buffers trade places, so a steady flow of messages allocates nothing.
    var batch: [Message] = []
    while true {
      let hasBatch = state.withLock { state in
        guard !state.messages.isEmpty else {
          state.isHandling = false
          return false
        }
        swap(&batch, &state.messages)
        return true
      }
      guard hasBatch else { return false }
      let keepsOpen = body(batch)
      batch.removeAll(keepingCapacity: true)
      if !keepsOpen {
        state.withLock { state in
          state.isClosed = true
          state.isHandling = false
          state.messages.removeAll()
        }
        return true
      }
    }
  }
}
