/// A many-producer, single-consumer queue whose `next()` keeps delivering after the consuming
/// task is cancelled.
///
/// The engine needs that: cancelling a launch is itself a message the loop must still read,
/// while an `AsyncStream` iterator stops yielding once its task is cancelled.
final class Inbox<Message: Sendable>: Sendable {
  private struct State {
    var buffer: [Message] = []
    var head = 0
    var waiter: CheckedContinuation<Message, Never>?
  }

  private let state = Locked(State())

  /// Adds a message, waking the consumer if it waits.
  func post(_ message: Message) {
    let waiter: CheckedContinuation<Message, Never>? = state.withLock { state in
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      state.buffer.append(message)
      return nil
    }
    waiter?.resume(returning: message)
  }

  /// The oldest message if one is waiting, without suspending. Only the consumer may call this.
  func poll() -> Message? {
    state.withLock(Self.takeOldest)
  }

  /// The oldest message, waiting for one if there is none. Only one task may call this.
  func next() async -> Message {
    await withCheckedContinuation { continuation in
      let message: Message? = state.withLock { state in
        guard let message = Self.takeOldest(&state) else {
          state.waiter = continuation
          return nil
        }
        return message
      }
      if let message { continuation.resume(returning: message) }
    }
  }

  private static func takeOldest(_ state: inout State) -> Message? {
    guard state.head < state.buffer.count else { return nil }
    let message = state.buffer[state.head]
    state.head += 1
    if state.head == state.buffer.count {
      state.buffer.removeAll(keepingCapacity: true)
      state.head = 0
    }
    return message
  }
}
