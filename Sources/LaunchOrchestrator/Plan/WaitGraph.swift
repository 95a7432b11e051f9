/// The "waits for" graph of a manifest: one node per step, then one per milestone.
///
/// A step waits for its `dependsOn` and `after` steps and for the milestone it is deferred
/// until; a milestone waits for its steps. Every walk is iterative, so a 100,000-step chain
/// cannot overflow the stack.
struct WaitGraph {
  let stepCount: Int
  /// What each node waits for.
  private var waitsFor: [[Int]]

  init(
    stepCount: Int, dependsOn: [[Int]], after: [[Int]], deferUntil: [Int?], milestoneSteps: [[Int]]
  ) {
    self.stepCount = stepCount
    var waitsFor: [[Int]] = []
    waitsFor.reserveCapacity(stepCount + milestoneSteps.count)
    for step in 0..<stepCount {
      // The `dependsOn` list itself when that is all: no new array for most steps.
      var edges = after[step].isEmpty ? dependsOn[step] : dependsOn[step] + after[step]
      if let milestone = deferUntil[step] { edges.append(stepCount + milestone) }
      waitsFor.append(edges)
    }
    waitsFor.append(contentsOf: milestoneSteps)
    self.waitsFor = waitsFor
  }

  /// Kahn's algorithm: steps in an order where each follows all it waits for, and the nodes
  /// left over because they sit on or behind a cycle.
  func topologicalOrder() -> (steps: [Int], leftover: [Int]) {
    let count = waitsFor.count
    // Who waits on each node, all in one array (`waitedOnBy[start[node]..<start[node + 1]]`,
    // in node order): an array for each node would be an allocation for each.
    var pending: [Int] = []
    pending.reserveCapacity(count)
    var start = [Int](repeating: 0, count: count + 1)
    for node in 0..<count {
      pending.append(waitsFor[node].count)
      for dependency in waitsFor[node] { start[dependency + 1] += 1 }
    }
    for node in 0..<count { start[node + 1] += start[node] }
    var filled = start
    var waitedOnBy = [Int](repeating: 0, count: start[count])
    for node in 0..<count {
      for dependency in waitsFor[node] {
        waitedOnBy[filled[dependency]] = node
        filled[dependency] += 1
      }
    }
    var queue = (0..<count).filter { pending[$0] == 0 }
    queue.reserveCapacity(count)
    var head = 0
    while head < queue.count {
      let node = queue[head]
      head += 1
      for next in waitedOnBy[start[node]..<start[node + 1]] {
        pending[next] -= 1
        if pending[next] == 0 { queue.append(next) }
      }
    }
    let leftover = (0..<count).filter { pending[$0] > 0 }
    return (queue.filter { $0 < stepCount }, leftover)
  }

  /// One cycle for each separate knot among `leftover` nodes, each listed in "waits for" order.
  func cycles(among leftover: [Int]) -> [[Int]] {
    let isLeftover = Set(leftover)
    var visitedByEarlierWalk: Set<Int> = []
    var cycles: [[Int]] = []
    for start in leftover where !visitedByEarlierWalk.contains(start) {
      var positionInWalk: [Int: Int] = [:]
      var walk: [Int] = []
      var node = start
      while positionInWalk[node] == nil, !visitedByEarlierWalk.contains(node) {
        positionInWalk[node] = walk.count
        walk.append(node)
        // Every leftover node waits for at least one other leftover node.
        guard let next = waitsFor[node].first(where: isLeftover.contains) else { break }
        node = next
      }
      if let position = positionInWalk[node] {
        var cycle = Array(walk[position...])
        // Start the cycle at a step, and at its first step in manifest order, for stable messages.
        if let first = cycle.indices.filter({ cycle[$0] < stepCount }).min(by: {
          cycle[$0] < cycle[$1]
        }) {
          cycle = Array(cycle[first...] + cycle[..<first])
        }
        cycles.append(cycle)
      }
      visitedByEarlierWalk.formUnion(walk)
    }
    return cycles
  }
}
