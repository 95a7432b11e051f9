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
