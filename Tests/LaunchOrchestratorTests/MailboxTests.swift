import Dispatch
import Testing

@testable import LaunchOrchestrator

@Suite("Mailbox", .timeLimit(.minutes(10)))
struct MailboxTests {
  /// What handlers saw; the handler's own state needs no lock, which is the point.
  private final class Handled: @unchecked Sendable {
    var messages: [Int] = []
    var batches = 0
    var concurrentHandlers = 0
    var handlersNow = 0
  }

  @Test func handlesEveryMessageOnceOneBatchAtATimeInPostingOrder() {
    let mailbox = Mailbox<Int, Void>(owning: ())
    let handled = Handled()
    let threads = 4
    let perThread = 2_000
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for index in 0..<perThread {
        mailbox.post(thread * perThread + index) { batch in
          handled.handlersNow += 1
          if handled.handlersNow > 1 { handled.concurrentHandlers += 1 }
          handled.messages += batch
          handled.batches += 1
          handled.handlersNow -= 1
          return true
        }
      }
    }
    #expect(handled.concurrentHandlers == 0)
    #expect(handled.messages.count == threads * perThread)
    #expect(Set(handled.messages).count == threads * perThread)
    for thread in 0..<threads {
      let own = handled.messages.filter { $0 / perThread == thread }
      #expect(own == own.sorted(), "thread \(thread)'s messages were handled out of order")
    }
  }

  @Test func queuesAMessagePostedByItsOwnHandlerForTheNextBatch() {
    let mailbox = Mailbox<String, Void>(owning: ())
    var batches: [[String]] = []
    func handle(_ batch: [String]) -> Bool {
      batches.append(batch)
      if batch == ["first"] {
        mailbox.post("from the handler", handlingWith: handle)
        batches.append(["after posting"])
      }
      return true
    }
    mailbox.post("first", handlingWith: handle)
    #expect(batches == [["first"], ["after posting"], ["from the handler"]])
  }

  @Test func goesIdleOnceTheMessagesRunOutAndHandlesWhatArrivesMeanwhile() {
    let mailbox = Mailbox<String, Void>(owning: ())
    var log: [String] = []
    var postedDuringIdle = false
    func handle(_ batch: [String]) -> Bool {
      log.append("handle \(batch.joined(separator: ","))")
      return true
    }
    func idle() {
      log.append("idle")
      if !postedDuringIdle {
        postedDuringIdle = true
        let handledHere = mailbox.post("late", handlingWith: handle, whenIdle: idle)
        log.append(handledHere ? "closed" : "queued")
      }
    }
    mailbox.post("first", handlingWith: handle, whenIdle: idle)
    #expect(log == ["handle first", "idle", "queued", "handle late", "idle"])
  }

  @Test func theHandlersOwnValueGoesWithTheRoleFromThreadToThread() async {
    let mailbox = Mailbox<Int, [Int]>(owning: [])
    // Each handler, on a thread of its own, adds what it handles to the value; the next
    // finds it there, with no lock of its own around it.
    for message in 1...3 {
      let seen = await Task.detached { () -> [Int] in
        var seen: [Int] = []
        let handled = mailbox.handle(
          posting: message,
          with: { owned, batch in
            owned += batch
            return true
          },
          whenIdle: { owned in seen = owned })
        #expect(handled == false, "the poster to an idle mailbox handles, and does not close it")
        return seen
      }.value
      #expect(seen == Array(1...message))
    }
  }

  @Test func aPosterThatBecomesTheHandlerCanHandleOnAnotherThreadInOrder() async {
    let mailbox = Mailbox<Int, Void>(owning: ())
    #expect(mailbox.enqueue(1))
    // The handler role is taken: later posters only queue, even before anyone handles.
    #expect(!mailbox.enqueue(2))
    #expect(
      !mailbox.post(
        3,
        handlingWith: { _ in
          Issue.record("handled twice")
          return true
        }))
    let handled = await Task.detached {
      var seen: [Int] = []
      let closed = mailbox.handle(
        posting: nil,
        with: { _, batch in
          seen += batch
          return true
        })
      return (seen, closed)
    }.value
    #expect(handled.0 == [1, 2, 3])
    #expect(handled.1 == false)
    #expect(mailbox.enqueue(4), "once idle, the next poster becomes the handler")
  }

  /// A value only its holder references: copied anywhere, it would no longer be unique.
  private final class Token: Sendable {}
  private struct Owned: Sendable {
    var token = Token()
  }

  @Test func theHandlersOwnValueIsMovedFromHandlerToHandlerNeverCopied() async {
    let mailbox = Mailbox<Int, Owned>(owning: Owned())
    // A copy left in the mailbox when a handler takes the value would make each change the
    // handler makes copy the engine's arrays whole; here it shows as a second reference.
    @Sendable func handle(posting message: Int?) -> [Bool] {
      var unique: [Bool] = []
      _ = mailbox.handle(
        posting: message,
        with: { owned, _ in
          unique.append(isKnownUniquelyReferenced(&owned.token))
          return true
        },
        whenIdle: { owned in unique.append(isKnownUniquelyReferenced(&owned.token)) })
      return unique
    }
    // As the engine does: a poster handles where it is, or (on the main thread) makes itself
    // the handler and handles on a task.
    for (message, onTask) in [(1, false), (2, true), (3, false)] {
      let unique = await Task.detached { () -> [Bool] in
        guard onTask else { return handle(posting: message) }
        #expect(mailbox.enqueue(message))
        return await Task.detached { handle(posting: nil) }.value
      }.value
      #expect(unique == [true, true], "message \(message), handled on a task: \(onTask)")
    }
  }

  @Test func closesWhenTheHandlerSaysSoAndDropsLaterMessages() {
    let mailbox = Mailbox<Int, Void>(owning: ())
    var seen: [Int] = []
    let closing = mailbox.post(1) { batch in
      seen += batch
      return false
    }
    let afterClosing = mailbox.post(2) { batch in
      seen += batch
      return true
    }
    #expect(closing)
    #expect(!afterClosing)
    #expect(!mailbox.enqueue(3), "a closed mailbox makes no handler")
    let posting = mailbox.handle(
      posting: 4,
      with: { _, batch in
        seen += batch
        return true
      })
    #expect(posting == nil, "a closed mailbox drops the message, and no one handles")
    #expect(seen == [1])
  }
}

extension Mailbox {
  /// Adds `message` and, if no one else is handling messages, handles them here, as the
  /// engine does off the main thread; returns whether this call closed the mailbox.
  @discardableResult
  fileprivate func post(
    _ message: Message, handlingWith body: ([Message]) -> Bool, whenIdle idle: () -> Void = {}
  ) -> Bool {
    handle(posting: message, with: { _, batch in body(batch) }, whenIdle: { _ in idle() })
      ?? false
  }
}
