import LaunchOrchestrator

extension RunCommand {
  /// Checks that `--signal` names signals the manifest declares and `--ensure` its on-demand
  /// steps, before anything runs.
  func checkSignalsAndEnsures(in plan: LaunchPlan) throws(CLIError) {
    for signal in options.signals where !plan.signals.contains(signal.name) {
      let declared =
        plan.signals.isEmpty
        ? "the manifest declares none ('signals')"
        : "the manifest declares \(plan.signals.map { "'\($0)'" }.joined(separator: ", "))"
      throw .invalidValue(
        "'\(options.$signals.name) \(signal.name)' names a signal the manifest does not declare; \(declared)."
      )
    }
    for ensure in options.ensures {
      guard let step = plan.step(ensure.name) else {
        let onDemand = plan.steps.filter { $0.trigger == .onDemand }.map(\.id)
        let close = Suggestions.didYouMean(ensure.name, in: onDemand)
        let hint =
          !close.isEmpty
          ? close
          : onDemand.isEmpty
            ? " It has no on-demand steps (\"trigger\": \"onDemand\")."
            : " Its on-demand steps: \(Self.names(onDemand))."
        throw .invalidValue(
          "'\(options.$ensures.name) \(ensure.name)' names no step of the manifest.\(hint)")
      }
      guard step.trigger == .onDemand else {
        throw .invalidValue(
          "'\(options.$ensures.name) \(ensure.name)' names a step that runs in the launch anyway; only on-demand steps (\"trigger\": \"onDemand\") are ensured."
        )
      }
    }
  }

  /// `'a', 'b', 'c'`; past five, the first five and how many more.
  private static func names(_ ids: [String]) -> String {
    let quoted = ids.prefix(5).map { "'\($0)'" }.joined(separator: ", ")
    return ids.count > 5 ? "\(quoted) and \(ids.count - 5) more" : quoted
  }

  /// Sends `--signal` signals and asks for `--ensure` steps at their times of the launch, as
  /// an app would; then says no more signals will come, so steps waiting for one that was
  /// not given are skipped once nothing else holds them.
  func rehearse(on control: LaunchControl, plan: LaunchPlan) async {
    enum Action {
      case signal(String)
      case ensure(String)
    }
    let actions =
      (options.signals.map { ($0.time, Action.signal($0.name)) }
      + options.ensures.map { ($0.time, Action.ensure($0.name)) })
      .sorted { $0.0 < $1.0 }
    // The launch waits for its ensured steps: it may not end before they are asked for.
    let holdsLaunch = !options.ensures.isEmpty
    if holdsLaunch { control.hold() }
    defer {
      control.finish()
      if holdsLaunch { control.release() }
    }
    for (time, action) in actions {
      do { try await control.sleep(untilActive: time) } catch { return }
      switch action {
      case .signal(let name):
        control.signal(name)
      case .ensure(let name):
        control.request(name)
      }
    }
  }
}
