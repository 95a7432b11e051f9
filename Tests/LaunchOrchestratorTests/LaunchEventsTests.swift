import Dispatch
import Testing

@testable import LaunchOrchestrator

@Suite("Launch events", .timeLimit(.minutes(10)))
struct LaunchEventsTests {
  private func event(_ step: String, at milliseconds: Int = 0) -> LaunchEvent {
    LaunchEvent(time: .milliseconds(milliseconds), kind: .started(step: step, attempt: 1))
  }

  private func collect(_ events: LaunchEvents) async -> [LaunchEvent] {
    var collected: [LaunchEvent] = []
    for await event in events { collected.append(event) }
    return collected
  }

  @Test func deliversSinglesAndBurstsInOrderThenEnds() async {
    let (events, continuation) = LaunchEvents.makeStream()
    let expected = (0..<200).map { event("s\($0)", at: $0) }
    async let collected = collect(events)
    continuation.yield(expected[0])
    continuation.yield(contentsOf: expected[1..<150])
    continuation.yield(contentsOf: [LaunchEvent]())
    continuation.yield(contentsOf: expected[150...])
    continuation.finish()
    #expect(await collected == expected)
  }

  @Test func deliversWhatWasYieldedBeforeIterationStarted() async {
    let (events, continuation) = LaunchEvents.makeStream()
    continuation.yield(contentsOf: [event("a"), event("b")])
    continuation.finish()
    #expect(await collect(events) == [event("a"), event("b")])
  }

  @Test func dropsEventsYieldedAfterFinishing() async {
    let (events, continuation) = LaunchEvents.makeStream()
    continuation.yield(event("kept"))
    continuation.finish()
    continuation.yield(event("dropped"))
    #expect(await collect(events) == [event("kept")])
  }

  @Test func endsWhenTheLastContinuationIsDropped() async {
    let (events, continuation) = LaunchEvents.makeStream()
    async let collected = collect(events)
    do {
      let copy = continuation
      copy.yield(event("a"))
    }
    _ = consume continuation
    #expect(await collected == [event("a")])
  }

  @Test func keepsDeliveringAfterTheConsumingTaskIsCancelled() async {
    let (events, continuation) = LaunchEvents.makeStream()
    let consumer = Task { await collect(events) }
    consumer.cancel()
    continuation.yield(event("a"))
    continuation.yield(event("b"))
    continuation.finish()
    #expect(await consumer.value == [event("a"), event("b")])
  }
}

/// An actor's executor that counts the jobs it is given: every hop onto the actor is one.
private final class JobCountingExecutor: SerialExecutor {
  private let queue = DispatchQueue(label: "JobCountingExecutor")
  private let jobs = Locked(0)

  var count: Int { jobs.withLock { $0 } }

  func enqueue(_ job: consuming ExecutorJob) {
    jobs.withLock { $0 += 1 }
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }
}

/// A consumer on an actor of its own, as a session's loop is on the main actor.
private actor IsolatedConsumer {
  let executor = JobCountingExecutor()
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  func collect(_ events: LaunchEvents) async -> [LaunchEvent] {
    var collected: [LaunchEvent] = []
    for await event in events { collected.append(event) }
    return collected
  }
}

extension LaunchEventsTests {
  @Test func anActorReadsBufferedEventsWithoutLeavingIt() async {
    let (events, continuation) = LaunchEvents.makeStream()
    let expected = (0..<500).map { event("s\($0)", at: $0) }
    continuation.yield(contentsOf: expected[..<200])
    for single in expected[200...] { continuation.yield(single) }
    continuation.finish()
    let consumer = IsolatedConsumer()
    #expect(await consumer.collect(events) == expected)
    // One job to enter the actor; hopping off to read each event would add one per event,
    // and waiting off the actor one more.
    #expect(consumer.executor.count == 1)
  }
}
