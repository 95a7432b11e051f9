import Foundation
import LaunchJSON

/// Turns a field-checked ``Manifest`` into a ``LaunchPlan``: resolves references, decodes every
/// step's params through its plugin, checks the graph, and reports every problem it finds.
struct PlanBuilder {
  let manifest: Manifest
  let registry: PluginRegistry
  let manifestPath: String
  let manifestDirectory: URL
  let dataDirectory: URL
  /// Whether plugins also read every file they read only when a launch needs it
  /// (a ``ManifestLoader`` made with `checksShippedFiles`).
  let checksShippedFiles: Bool
  /// Whether the paths steps share are checked: folders steps remove files in, and files they
  /// rewrite, against every other path (``checkSharedPaths()``).
  let checksSharedPaths: Bool
  var diagnostics: DiagnosticCollector
  /// Each step's index in the source's `steps` array.
  let sourceIndex: [Int]
  /// The steps the manifest declares that were left out for their own problem.
  let unreadStepIDs: Set<String>
  /// The steps whose `dependsOn` names one of those: what they need cannot be checked. An
  /// array, empty in a manifest that loads: no `Set<Int>` is made on a launch's cold path.
  private var dependsOnUnread: [Int] = []

  private var indexByID = NameIndex()
  /// The steps whose plugin declares it runs on the main actor.
  private var mainActorSteps: Set<Int> = []
  /// The kinds steps were prepared with so far, each with its types read once: a manifest
  /// holds thousands of steps of a few kinds, and comparing a kind with the last one used
  /// costs less than hashing it, and than reading the types through their lock, for each.
  private var preparedKinds: [PreparedKind] = []
  private var lastKind = 0
  /// The round every step's parameters are made with, its storage kept from step to step.
  private var round = ParameterRound.reusable()

  init(
    manifest: Manifest, registry: PluginRegistry, manifestPath: String, manifestDirectory: URL,
    dataDirectory: URL, checksShippedFiles: Bool, checksSharedPaths: Bool,
    diagnostics: DiagnosticCollector, sourceIndex: [Int], unreadStepIDs: Set<String>
  ) {
    self.manifest = manifest
    self.registry = registry
    self.manifestPath = manifestPath
    self.manifestDirectory = manifestDirectory
    self.dataDirectory = dataDirectory
    self.checksShippedFiles = checksShippedFiles
    self.checksSharedPaths = checksSharedPaths
    self.diagnostics = diagnostics
    self.sourceIndex = sourceIndex
    self.unreadStepIDs = unreadStepIDs
  }

  private mutating func reportUnknownMilestone(_ name: String, at path: JSONPath) {
    let known = manifest.milestones.map(\.name)
    let advice =
      known.isEmpty
      ? " Declare it under 'milestones' first."
      : Suggestions.closest(to: name, in: known).map { " Did you mean '\($0)'?" }
        ?? " Known milestones: \(known.joined(separator: ", "))."
    diagnostics.report("unknown milestone '\(name)'.\(advice)", at: path)
  }

  func stepPath(_ index: Int) -> JSONPath {
    Self.stepPath(source: sourceIndex[index])
  }

  /// The path of the step at position `source` of the manifest's `steps`.
  private static func stepPath(source: Int) -> JSONPath {
    JSONPath.root.appending("steps").appending(source)
  }

  /// Which steps each milestone waits for, and which milestones each step belongs to.
  private struct Membership {
    var indexByName = NameIndex()
    var stepsOfMilestone: [[Int]] = []
    var milestonesOfStep: [[Int]]
  }

  /// The wait edges between steps, resolved to indices.
  private struct Edges {
    var dependsOn: [[Int]]
    var after: [[Int]]
    var deferUntil: [Int?]
  }

  /// What scheduling needs beyond the edges: who waits on each step, and how urgent and how
  /// long the work behind each step is.
  private struct Ranking {
    var hardDependents: [[Int]]
    var orderDependents: [[Int]]
    var priorities: [StepPriority]
    var effectivePriorities: [StepPriority]
    var remainingPaths: [Duration]
    var deferredSteps: [[Int]]
  }

  // Steps are visited by index throughout: iterating them would copy each declaration, a
  // retain per field, and paths are only built for the diagnostics that need them.
  mutating func build() -> LaunchPlan? {
    indexStepIDs()
    let membership = resolveMilestones()
    let edges = resolveEdges(milestones: membership.indexByName)
    let dismissOn = JSONPath.root.appending("splash").appending("dismissOn")
    // A `dismissOn` that is no string was reported as such; its default is none of the
    // manifest's business.
    if let splash = manifest.splash, membership.indexByName.index(of: splash.dismissOn) == nil,
      !diagnostics.diagnostics.contains(where: { $0.path == dismissOn })
    {
      reportUnknownMilestone(splash.dismissOn, at: dismissOn)
    }
    let signals = resolveSignals()
    checkOnDemandSteps(edges: edges, membership: membership)
    checkContextFields()
    let order = orderAndReportCycles(edges, membership)
    let actions = prepareAllActions()
    checkInputs(dependsOn: edges.dependsOn)
    if checksSharedPaths { checkSharedPaths() }
    warnAboutInversions(dependsOn: edges.dependsOn, after: edges.after)
    guard !diagnostics.hasErrors, let order else { return nil }
    let ranking = rank(order: order, edges: edges, membership: membership)
    return assemble(
      order: order, edges: edges, membership: membership, ranking: ranking, actions: actions,
      signals: signals)
  }

  /// Each step's `waitFor` as indices into the manifest's `signals`, reporting duplicate
  /// declarations and undeclared names.
  private mutating func resolveSignals() -> [[Int]] {
    var indexByName = NameIndex()
    let declared = manifest.signals
    for (position, name) in declared.enumerated() {
      let path = JSONPath.root.appending("signals").appending(position)
      if name.isEmpty {
        diagnostics.report("a signal name cannot be empty.", at: path)
      } else if indexByName.insert(name, index: position) != nil {
        diagnostics.report("the signal '\(name)' is declared twice.", at: path)
      }
    }
    var waits: [[Int]] = []
    waits.reserveCapacity(manifest.steps.count)
    for index in manifest.steps.indices {
      var resolved: [Int] = []
      for (position, name) in manifest.steps[index].waitFor.enumerated() {
        if let signal = indexByName.index(of: name) {
          if !resolved.contains(signal) { resolved.append(signal) }
          continue
        }
        guard !name.isEmpty else {
          diagnostics.report(
            "a signal name cannot be empty; remove it from 'waitFor'.",
            at: stepPath(index).appending("waitFor").appending(position))
          continue
        }
        let advice =
          declared.isEmpty
          ? "declare it in the manifest's 'signals' first: \"signals\": [\"\(name)\"]."
          : Suggestions.closest(to: name, in: declared).map { "did you mean '\($0)'?" }
            ?? "the manifest declares \(declared.map { "'\($0)'" }.joined(separator: ", "))."
        diagnostics.report(
          "'waitFor' names an undeclared signal '\(name)'; \(advice)",
          at: stepPath(index).appending("waitFor").appending(position))
      }
      waits.append(resolved)
    }
    return waits
  }

  /// Reports launch steps and milestones that wait for an on-demand step, which may never run
  /// (what an on-demand step cannot have is a rule of ``ManifestFields/stepRules``).
  private mutating func checkOnDemandSteps(edges: Edges, membership: Membership) {
    let steps = manifest.steps
    func isOnDemand(_ index: Int) -> Bool { steps[index].trigger == .onDemand }
    // Only a wait for an on-demand step is reported: without one, nothing is to be looked up.
    guard steps.indices.contains(where: isOnDemand) else { return }
    for index in steps.indices {
      guard !isOnDemand(index) else { continue }
      for key in ["dependsOn", "after"] {
        let ids = key == "dependsOn" ? steps[index].dependsOn : steps[index].after
        for (position, id) in ids.enumerated() {
          guard let dependency = indexByID[id], isOnDemand(dependency) else { continue }
          diagnostics.report(
            "'\(id)' runs only on demand (\"trigger\": \"onDemand\"), so this launch step could wait for it for ever; make '\(steps[index].id)' on demand too, or remove '\(id)' from '\(key)'.",
            at: stepPath(index).appending(key).appending(position))
        }
      }
    }
    for milestone in manifest.milestones {
      for (position, id) in milestone.steps.enumerated() {
        guard let step = indexByID[id], isOnDemand(step) else { continue }
        diagnostics.report(
          "milestone '\(milestone.name)' lists '\(id)', which runs only on demand (\"trigger\": \"onDemand\"), so the milestone might never be reached; remove it from the milestone.",
          at: JSONPath.root.appending("milestones").appending(milestone.name).appending(position))
      }
    }
  }

  /// Maps ids to indices, reporting duplicates.
  private mutating func indexStepIDs() {
    let steps = manifest.steps
    indexByID.reserveCapacity(steps.count)
    for index in steps.indices {
      let id = steps[index].id
      if let first = indexByID.insert(id, index: index) {
        diagnostics.report(
          "duplicate step id '\(id)'; \(stepPath(first)) already uses it. Step ids must be unique.",
          at: stepPath(index).appending("id"))
      }
    }
  }

  /// Resolves each milestone's step ids, reporting unknown ones and empty milestones.
  private mutating func resolveMilestones() -> Membership {
    var membership = Membership(
      milestonesOfStep: [[Int]](repeating: [], count: manifest.steps.count))
    // The first of a name kept.
    for (index, milestone) in manifest.milestones.enumerated() {
      _ = membership.indexByName.insert(milestone.name, index: index)
    }
    for (m, milestone) in manifest.milestones.enumerated() {
      let path = JSONPath.root.appending("milestones").appending(milestone.name)
      var members: [Int] = []
      for (position, id) in milestone.steps.enumerated() {
        guard
          let index = resolve(
            id, at: path.appending(position), role: "milestone '\(milestone.name)'")
        else {
          continue
        }
        // Listed twice: its step already names the milestone last. Checked there, not in
        // `members`, whose search made a milestone of many steps quadratic.
        if membership.milestonesOfStep[index].last != m {
          members.append(index)
          membership.milestonesOfStep[index].append(m)
        }
      }
      // Not for one whose list was not read: its error says what is wrong there.
      if milestone.steps.isEmpty,
        !diagnostics.diagnostics.contains(where: { $0.severity == .error && $0.path == path })
      {
        diagnostics.report(
          "milestone '\(milestone.name)' lists no steps, so it is reached as soon as the launch starts.",
          at: path, severity: .warning)
      }
      membership.stepsOfMilestone.append(members)
    }
    return membership
  }

  /// Resolves `dependsOn`, `after` and `deferUntil`, reporting unknown names.
  private mutating func resolveEdges(milestones: NameIndex) -> Edges {
    let steps = manifest.steps
    var edges = Edges(
      dependsOn: [[Int]](repeating: [], count: steps.count),
      after: [[Int]](repeating: [], count: steps.count),
      deferUntil: [Int?](repeating: nil, count: steps.count))
    for index in steps.indices {
      edges.dependsOn[index] = resolveList(steps[index].dependsOn, of: index, key: "dependsOn")
      if !steps[index].after.isEmpty {
        let dependsOn = edges.dependsOn[index]
        edges.after[index] = resolveList(steps[index].after, of: index, key: "after").filter {
          !dependsOn.contains($0)
        }
      }
      if let name = steps[index].deferUntil {
        if let milestone = milestones.index(of: name) {
          edges.deferUntil[index] = milestone
        } else {
          reportUnknownMilestone(name, at: stepPath(index).appending("deferUntil"))
        }
      }
    }
    return edges
  }

  /// A topological order of the steps, or `nil` after reporting every cycle in full.
  private mutating func orderAndReportCycles(_ edges: Edges, _ membership: Membership) -> [Int]? {
    let steps = manifest.steps
    let graph = WaitGraph(
      stepCount: steps.count, dependsOn: edges.dependsOn, after: edges.after,
      deferUntil: edges.deferUntil, milestoneSteps: membership.stepsOfMilestone)
    let order = graph.topologicalOrder()
    guard order.steps.count < steps.count else { return order.steps }
    for cycle in graph.cycles(among: order.leftover) {
      let names = cycle.map { node in
        node < steps.count
          ? steps[node].id : "\(manifest.milestones[node - steps.count].name) (milestone)"
      }
      let first = cycle.first { $0 < steps.count } ?? 0
      diagnostics.report(
        "dependency cycle: \((names + [names[0]]).joined(separator: " -> ")). Each step waits for the next, so none can start; remove one of these dependencies.",
        at: stepPath(first))
    }
    return nil
  }

  /// Each step's action and fallback action, with their params decoded by their plugins.
  private mutating func prepareAllActions() -> [(action: PreparedStep?, fallback: PreparedStep?)] {
    var actions: [(action: PreparedStep?, fallback: PreparedStep?)] = []
    actions.reserveCapacity(manifest.steps.count)
    for index in manifest.steps.indices {
      actions.append(prepareActions(at: index))
    }
    return actions
  }

  /// Dependents, effective priorities and remaining paths, in one walk back from the end.
  private func rank(order: [Int], edges: Edges, membership: Membership) -> Ranking {
    let steps = manifest.steps
    let priorities = steps.map { $0.priority ?? manifest.defaults.priority }
    var ranking = Ranking(
      hardDependents: [[Int]](repeating: [], count: steps.count),
      orderDependents: [[Int]](repeating: [], count: steps.count),
      priorities: priorities, effectivePriorities: priorities,
      remainingPaths: [Duration](repeating: .zero, count: steps.count),
      deferredSteps: [[Int]](repeating: [], count: manifest.milestones.count))
    // Each list made at its size: grown append by append, most would be allocated twice.
    var hardDependentCounts = [Int](repeating: 0, count: steps.count)
    for index in steps.indices {
      for dependency in edges.dependsOn[index] { hardDependentCounts[dependency] += 1 }
    }
    for index in steps.indices where hardDependentCounts[index] > 0 {
      ranking.hardDependents[index].reserveCapacity(hardDependentCounts[index])
    }
    for index in steps.indices {
      for dependency in edges.dependsOn[index] { ranking.hardDependents[dependency].append(index) }
      for dependency in edges.after[index] { ranking.orderDependents[dependency].append(index) }
      if let m = edges.deferUntil[index] { ranking.deferredSteps[m].append(index) }
    }
    var milestoneRemaining = [Duration](repeating: .zero, count: manifest.milestones.count)
    // Reverse topological order visits every step after all that wait for it, including
    // steps deferred until a milestone it belongs to.
    for index in order.reversed() {
      var longest = Duration.zero
      func include(_ dependent: Int) {
        // An on-demand step lends its priority only once the app ensures it (the scheduler
        // raises what it waits for then): one never ensured makes no launch work urgent.
        if steps[dependent].trigger != .onDemand {
          ranking.effectivePriorities[index] = max(
            ranking.effectivePriorities[index], ranking.effectivePriorities[dependent])
        }
        longest = max(longest, ranking.remainingPaths[dependent])
      }
      for dependent in ranking.hardDependents[index] { include(dependent) }
      for dependent in ranking.orderDependents[index] { include(dependent) }
      for milestone in membership.milestonesOfStep[index] {
        longest = max(longest, milestoneRemaining[milestone])
      }
      ranking.remainingPaths[index] = longest + (steps[index].expectedDuration ?? .milliseconds(1))
      if let milestone = edges.deferUntil[index] {
        milestoneRemaining[milestone] = max(
          milestoneRemaining[milestone], ranking.remainingPaths[index])
      }
    }
    return ranking
  }

  /// The plan, every step's settings resolved against the manifest's defaults.
  private func assemble(
    order: [Int], edges: Edges, membership: Membership, ranking: Ranking,
    actions: [(action: PreparedStep?, fallback: PreparedStep?)], signals: [[Int]]
  ) -> LaunchPlan {
    let steps = manifest.steps
    // Each field read in place: a copy of the declaration would retain every field it holds.
    let plannedSteps = steps.indices.map { index in
      PlannedStep(
        index: index, id: steps[index].id, plugin: steps[index].plugin,
        priority: ranking.priorities[index],
        effectivePriority: ranking.effectivePriorities[index],
        dependsOn: edges.dependsOn[index], after: edges.after[index],
        deferUntil: edges.deferUntil[index], milestones: membership.milestonesOfStep[index],
        hardDependents: ranking.hardDependents[index],
        orderDependents: ranking.orderDependents[index],
        timeout: steps[index].timeout ?? manifest.defaults.timeout,
        retry: steps[index].retry ?? manifest.defaults.retry,
        onFailure: steps[index].onFailure ?? manifest.defaults.onFailure, delay: steps[index].delay,
        isolation: steps[index].isolation
          ?? (!mainActorSteps.isEmpty && mainActorSteps.contains(index) ? .main : .default),
        expectedDuration: steps[index].expectedDuration,
        fallbackPlugin: steps[index].fallback.map { $0.plugin ?? steps[index].plugin },
        remainingPath: ranking.remainingPaths[index], cache: steps[index].cache,
        waitFor: signals[index], trigger: steps[index].trigger,
        cacheKey: steps[index].cache == nil
          ? nil
          : registry.descriptor(for: steps[index].plugin)?.outputCoder.map { coder in
            CacheKey(
              coder: coder,
              params: OutputCache.fingerprint(
                of: steps[index].params,
                dependencies: LaunchPlan.closure(from: index) { edges.dependsOn[$0] }.map {
                  (steps[$0].id, steps[$0].plugin, steps[$0].params)
                }))
          },
        // Without errors, every step has its action.
        action: actions[index].action!, fallbackAction: actions[index].fallback)
    }
    let plannedMilestones = manifest.milestones.enumerated().map { index, milestone in
      PlannedMilestone(
        index: index, name: milestone.name, steps: membership.stepsOfMilestone[index],
        deferredSteps: ranking.deferredSteps[index])
    }
    return LaunchPlan(
      manifest: manifest, manifestPath: manifestPath, manifestDirectory: manifestDirectory,
      dataDirectory: dataDirectory,
      steps: plannedSteps, milestones: plannedMilestones, topologicalOrder: order,
      warnings: diagnostics.sorted.filter { $0.severity == .warning },
      requiredValues: Self.requiredValues(of: plannedSteps),
      cachedSteps: plannedSteps.indices.filter { plannedSteps[$0].cache != nil },
      onDemandSteps: plannedSteps.indices.filter { plannedSteps[$0].trigger == .onDemand },
      signals: manifest.signals, registry: registry,
      contextSteps: steps.indices.filter { steps[$0].when != nil || steps[$0].once != nil })
  }

  /// The environment values `steps` require, step by step, its action's then its fallback's:
  /// read from each list in place, not from a list of both made for every step.
  private static func requiredValues(of steps: [PlannedStep]) -> [(
    step: Int, requirement: StepRequirement
  )] {
    var values: [(step: Int, requirement: StepRequirement)] = []
    for index in steps.indices {
      for requirement in steps[index].action.requirements where requirement.isRequired {
        values.append((index, requirement))
      }
      for requirement in steps[index].fallbackAction?.requirements ?? []
      where requirement.isRequired {
        values.append((index, requirement))
      }
    }
    return values
  }

  private mutating func resolve(
    _ id: String, at path: @autoclosure () -> JSONPath, role: @autoclosure () -> String
  ) -> Int? {
    if let index = indexByID[id] { return index }
    // A step whose own problem left it out (no `plugin`) exists: that problem is said at it.
    if unreadStepIDs.contains(id) { return nil }
    guard !id.isEmpty else {
      diagnostics.report("\(role()) holds an empty step id; remove it, or name a step.", at: path())
      return nil
    }
    let hint =
      Suggestions.didYouMean(id, in: indexByID.ids.sorted())
    diagnostics.report("\(role()) names an unknown step '\(id)'.\(hint)", at: path())
    return nil
  }

  private mutating func resolveList(_ ids: [String], of index: Int, key: String) -> [Int] {
    var resolved: [Int] = []
    resolved.reserveCapacity(ids.count)
    let stepID = manifest.steps[index].id
    let source = sourceIndex[index]
    for position in ids.indices {
      let id = ids[position]
      func path() -> JSONPath { Self.stepPath(source: source).appending(key).appending(position) }
      if id == stepID {
        diagnostics.report(
          "a step cannot wait for itself; remove '\(id)' from '\(key)'.", at: path())
        continue
      }
      guard let dependency = resolve(id, at: path(), role: "'\(key)'") else {
        if key == "dependsOn", unreadStepIDs.contains(id) { dependsOnUnread.append(index) }
        continue
      }
      if resolved.contains(dependency) {
        diagnostics.report("'\(id)' is listed twice in '\(key)'.", at: path(), severity: .warning)
      } else {
        resolved.append(dependency)
      }
    }
    return resolved
  }

  private mutating func descriptor(_ kind: String, at path: @autoclosure () -> JSONPath)
    -> PluginDescriptor?
  {
    if let descriptor = registry.descriptor(for: kind) { return descriptor }
    let kinds = registry.descriptors.map(\.kind)
    let hint = Suggestions.didYouMean(kind, in: kinds)
    diagnostics.report(
      "unknown plugin kind '\(kind)'.\(hint) Run 'orchestrate plugins' to list the kinds this build knows.",
      at: path())
    return nil
  }

  /// A kind and its types, for the steps prepared with it.
  private final class PreparedKind {
    let descriptor: PluginDescriptor
    let types: KindTypes

    init(_ descriptor: PluginDescriptor) {
      self.descriptor = descriptor
      types = descriptor.kindTypes
    }
  }

  /// The kind named `kind`, as ``descriptor(_:at:)`` finds it (and reports it unknown).
  private mutating func preparedKind(_ kind: String, at path: @autoclosure () -> JSONPath)
    -> PreparedKind?
  {
    if lastKind < preparedKinds.count, preparedKinds[lastKind].descriptor.kind == kind {
      return preparedKinds[lastKind]
    }
    if let known = preparedKinds.firstIndex(where: { $0.descriptor.kind == kind }) {
      lastKind = known
      return preparedKinds[known]
    }
    guard let descriptor = descriptor(kind, at: path()) else { return nil }
    lastKind = preparedKinds.count
    preparedKinds.append(PreparedKind(descriptor))
    return preparedKinds[lastKind]
  }

  private mutating func prepareActions(at index: Int) -> (PreparedStep?, PreparedStep?) {
    let plugin = manifest.steps[index].plugin
    let source = sourceIndex[index]
    guard
      let primaryKind = preparedKind(
        plugin, at: Self.stepPath(source: source).appending("plugin"))
    else {
      return (nil, nil)
    }
    // The kind's descriptor read where needed, not copied for every step.
    var primary: PluginDescriptor { primaryKind.descriptor }
    /// Empty params where the step's object starts, for a step without any.
    func emptyParams(_ diagnostics: inout DiagnosticCollector) -> JSONValue {
      JSONValue(.object([]), offset: diagnostics.offset(at: Self.stepPath(source: source)))
    }
    let params = manifest.steps[index].params ?? emptyParams(&diagnostics)
    let action = prepare(primaryKind, params: params) { _ in
      Self.stepPath(source: source).appending("params")
    }
    if primary.isolation == .main {
      mainActorSteps.insert(index)
      if manifest.steps[index].isolation == .default {
        diagnostics.report(
          "'\(plugin)' runs on the main actor, as its plugin declares; remove \"isolation\" or set it to \"main\".",
          at: stepPath(index).appending("isolation"))
      }
    }
    if manifest.steps[index].cache != nil, primary.outputCoder == nil {
      let advice =
        primary.hasOutput
        ? "outputs \(English.withArticle(primary.outputTypeName)), which is not Codable; a cached output is saved to a file between launches, so make \(primary.outputTypeName) Codable or remove 'cache'."
        : "outputs nothing, so there is nothing to cache; remove 'cache'."
      diagnostics.report("'\(plugin)' \(advice)", at: stepPath(index).appending("cache"))
    }

    // Read through the array's buffer, in place: read through the array, the step was
    // copied whole, and the copy let go, for every step without a fallback; the step's other
    // fields are read in place below too, not from a copy of it.
    guard let fallback = manifest.steps.withUnsafeBufferPointer({ $0[index].fallback }) else {
      return (action, nil)
    }
    let path = stepPath(index)
    let fallbackPath = path.appending("fallback")
    let kind = fallback.plugin ?? plugin
    guard let fallbackKind = preparedKind(kind, at: fallbackPath.appending("plugin")) else {
      return (action, nil)
    }
    let fallbackDescriptor = fallbackKind.descriptor
    // Attempts of the step and of its fallback run where the step does: on the main actor
    // when either plugin needs it.
    if fallbackDescriptor.isolation == .main, !mainActorSteps.contains(index) {
      mainActorSteps.insert(index)
      if manifest.steps[index].isolation == .default {
        diagnostics.report(
          "the fallback '\(kind)' runs on the main actor, as its plugin declares; remove \"isolation\" or set it to \"main\".",
          at: path.appending("isolation"))
      }
    }
    if fallbackDescriptor.outputType != primary.outputType {
      diagnostics.report(
        "the fallback '\(kind)' outputs \(fallbackDescriptor.outputTypeName), but '\(plugin)' outputs \(primary.outputTypeName); dependents receive the fallback's output, so both must output the same type.",
        at: fallbackPath.appending("plugin"))
    }
    // The fallback's params are merged over the step's own only when it runs the same plugin.
    var merged = fallback.plugin == nil ? params : emptyParams(&diagnostics)
    var overridden: Set<String> = []
    for member in fallback.params?.members ?? [] {
      overridden.insert(member.key)
      var members = merged.members ?? []
      members.removeAll { $0.key == member.key }
      members.append(member)
      merged = JSONValue(.object(members), offset: merged.offset)
    }
    let fallbackAction = prepare(fallbackKind, params: merged) { key in
      key.map(overridden.contains) ?? false || fallback.plugin != nil
        ? fallbackPath.appending("params") : path.appending("params")
    }
    return (action, fallbackAction)
  }

  /// Decodes `params` for `kind`; `base` says which params object a problem belongs to,
  /// given the top-level key it concerns.
  private mutating func prepare(
    _ kind: PreparedKind, params: JSONValue, base: (String?) -> JSONPath
  ) -> PreparedStep? {
    // Reused only while nothing else holds it (a plugin's parameters never keep their round).
    if !isKnownUniquelyReferenced(&round) { round = ParameterRound.reusable() }
    switch kind.descriptor.prepare(
      params: params, manifestDirectory: manifestDirectory,
      checksShippedFiles: checksShippedFiles, types: kind.types, round: round)
    {
    case .success(let step):
      return step
    case .failure(let problems):
      for problem in problems.problems {
        var topKey: String?
        if case .key(let key) = problem.path.components.first { topKey = key }
        let path = JSONPath(components: base(topKey).components + problem.path.components)
        diagnostics.report(problem.message, at: path, offset: problem.offset)
      }
      return nil
    }
  }

  private mutating func checkInputs(dependsOn: [[Int]]) {
    let steps = manifest.steps
    // Which search saw each step last: one array for every search, not a set for each (a
    // `Set<Int>` would also look up `Int`'s `Hashable` conformance at run time, on a launch's
    // cold path).
    var seenBy: [Int] = []
    var search = 0
    // The few kinds that need an input, named once: most steps need none to be looked up.
    let kindsWithInputs = registry.descriptors.filter { $0.inputs.contains(where: \.isRequired) }
      .map(\.kind)
    for index in steps.indices where !dependsOnUnread.contains(index) {
      guard kindsWithInputs.contains(steps[index].plugin),
        let descriptor = registry.descriptor(for: steps[index].plugin)
      else { continue }
      for input in descriptor.inputs where input.isRequired {
        if seenBy.isEmpty { seenBy = [Int](repeating: 0, count: steps.count) }
        search += 1
        seenBy[index] = search
        var queue = dependsOn[index][...]
        var found = false
        // A run-once provider gives nothing on the launches that skip it.
        var runOnceProvider: Int?
        while let next = queue.popFirst(), !found {
          guard seenBy[next] != search else { continue }
          seenBy[next] = search
          let provides = registry.descriptor(for: steps[next].plugin)?.outputType == input.type
          if provides, steps[next].once != nil {
            runOnceProvider = runOnceProvider ?? next
          } else {
            found = provides
          }
          queue.append(contentsOf: dependsOn[next])
        }
        guard !found else { continue }
        if let provider = runOnceProvider {
          reportRunOnceProvider(provider, of: input, to: index)
          continue
        }
        let providers = registry.descriptors.filter { $0.outputType == input.type }.map {
          "'\($0.kind)'"
        }
        let advice =
          providers.isEmpty
          ? "no registered plugin provides one."
          : "add a step of kind \(providers.joined(separator: " or ")) to its 'dependsOn'."
        diagnostics.report(
          "'\(steps[index].plugin)' needs \(English.withArticle(input.typeName)) from a dependency, and none of the step's 'dependsOn' steps provides one; \(advice)",
          at: stepPath(index).appending("dependsOn"))
      }
    }
  }

  private mutating func warnAboutInversions(dependsOn: [[Int]], after: [[Int]]) {
    let steps = manifest.steps
    for index in steps.indices {
      let priority = steps[index].priority ?? manifest.defaults.priority
      guard priority >= .high else { continue }
      for dependency in dependsOn[index] + after[index] {
        let dependencyPriority = steps[dependency].priority ?? manifest.defaults.priority
        guard dependencyPriority <= .low else { continue }
        let when = steps[index].trigger == .onDemand ? " once the step is ensured" : ""
        diagnostics.report(
          "priority inversion: the step is \(priority) but waits for '\(steps[dependency].id)', which is \(dependencyPriority). '\(steps[dependency].id)' will run at \(priority) priority\(when); raise its priority in the manifest to say so.",
          at: stepPath(index), severity: .warning)
      }
    }
  }
}
