import Foundation
import LaunchOrchestrator
import ManifestFuzzing

/// A random layered DAG: each node depends on up to three nodes of earlier layers.
struct LayeredDAG {
  /// What each node depends on.
  let dependencies: [[Int]]

  init(nodes: Int, width: Int, maximumDependencies: Int = 3, seed: UInt64 = 42) {
    var generator = SeededGenerator(seed: seed)
    var dependencies: [[Int]] = []
    dependencies.reserveCapacity(nodes)
    for node in 0..<nodes {
      let layerStart = (node / width) * width
      guard layerStart > 0 else {
        dependencies.append([])
        continue
      }
      let previousLayer = max(0, layerStart - width)..<layerStart
      let count = Int.random(in: 1...maximumDependencies, using: &generator)
      dependencies.append(
        Array(Set((0..<count).map { _ in Int.random(in: previousLayer, using: &generator) }))
          .sorted())
    }
    self.dependencies = dependencies
  }

  /// The DAG as a manifest whose steps are all of `kind` with `params`.
  func manifest(kind: String, params: String = "{}", defaults: String = "{}") -> [UInt8] {
    var text = #"{ "version": 1, "name": "bench", "defaults": \#(defaults), "steps": ["#
    for (node, dependencies) in self.dependencies.enumerated() {
      if node > 0 { text += "," }
      let list = dependencies.map { #""s\#($0)""# }.joined(separator: ",")
      text += #"{"id":"s\#(node)","plugin":"\#(kind)","params":\#(params),"dependsOn":[\#(list)]}"#
    }
    text += "] }"
    return Array(text.utf8)
  }

  /// The floor: what a team would hand-write with structured concurrency. In-degree
  /// counters, one task group, a child task per node as soon as it is ready.
  func runFloor(work: @escaping @Sendable (Int) async -> Void = { _ in }) async {
    var pending = dependencies.map(\.count)
    var dependents = [[Int]](repeating: [], count: dependencies.count)
    for (node, dependencies) in dependencies.enumerated() {
      for dependency in dependencies { dependents[dependency].append(node) }
    }
    await withTaskGroup(of: Int.self) { group in
      for node in pending.indices where pending[node] == 0 {
        group.addTask {
          await work(node)
          return node
        }
      }
      for await finished in group {
        for dependent in dependents[finished] {
          pending[dependent] -= 1
          if pending[dependent] == 0 {
            group.addTask {
              await work(dependent)
              return dependent
            }
          }
        }
      }
    }
  }

  /// The same graph on `OperationQueue` with `addDependency`.
  func runOperationQueue(width: Int?, work: @escaping @Sendable () -> Void = {}) async {
    let queue = OperationQueue()
    if let width { queue.maxConcurrentOperationCount = width }
    let operations = dependencies.indices.map { _ in BlockOperation(block: work) }
    for (node, dependencies) in dependencies.enumerated() {
      for dependency in dependencies { operations[node].addDependency(operations[dependency]) }
    }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      // waitUntilFinished blocks a thread: use one of our own, not the cooperative pool's.
      let thread = Thread {
        queue.addOperations(operations, waitUntilFinished: true)
        continuation.resume()
      }
      thread.start()
    }
  }
}

/// How a benchmark takes the engine's events.
enum EventDelivery {
  /// `LaunchEvents`, what the CLI and `LaunchSession` use.
  case launchEvents
  /// An `AsyncStream<LaunchEvent>`.
  case asyncStream
}

/// Runs a plan with events and the report on, as an app would.
func runEngine(_ plan: LaunchPlan, delivery: EventDelivery = .launchEvents) async -> LaunchReport {
  switch delivery {
  case .launchEvents:
    let (events, continuation) = LaunchEvents.makeStream()
    async let report = LaunchEngine().run(plan, events: continuation)
    for await _ in events {}
    return await report
  case .asyncStream:
    let (events, continuation) = AsyncStream.makeStream(of: LaunchEvent.self)
    async let report = LaunchEngine().run(plan, events: continuation)
    for await _ in events {}
    return await report
  }
}
