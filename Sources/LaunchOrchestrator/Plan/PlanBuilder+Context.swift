import LaunchJSON

extension PlanBuilder {
  /// Reports `when` and `once` settings that cannot work: on an on-demand step (the app
  /// asks for it, whatever the launch), `once` with a `cache`, a `when.reason` that lists no
  /// reason or an empty one, and a manifest without a first screen for `safeMode`.
  mutating func checkContextFields() {
    let steps = manifest.steps
    for index in steps.indices where steps[index].when != nil || steps[index].once != nil {
      let step = steps[index]
      // Each key it has, so that fixing one does not reveal the other.
      for key in ["when", "once"] where step.trigger == .onDemand {
        guard key == "when" ? step.when != nil : step.once != nil else { continue }
        diagnostics.report(
          "an on-demand step cannot have '\(key)': it runs when the app ensures it, whatever the launch. Check the context in the app before ensuring it, or remove 'trigger'.",
          at: stepPath(index).appending(key))
      }
      if step.once != nil, step.cache != nil {
        diagnostics.report(
          "a run-once step cannot have a 'cache': on the launches that skip it there is no output to serve or refresh. Remove 'cache' or 'once'.",
          at: stepPath(index).appending("once"))
      }
      guard let reasons = step.when?.reasons else { continue }
      let path = stepPath(index).appending("when").appending("reason")
      if reasons.isEmpty {
        diagnostics.report(
          "'reason' lists no launch reason, so the step never runs; list the reasons it runs for, like [\"userTap\", \"url\"], or remove 'reason'.",
          at: path)
      }
      for (position, reason) in reasons.enumerated() where reason.isEmpty {
        diagnostics.report("a launch reason cannot be empty.", at: path.appending(position))
      }
    }
  }

  /// Reports that step `index` needs `input`, and the only dependency providing it runs once.
  mutating func reportRunOnceProvider(_ provider: Int, of input: StepInput, to index: Int) {
    let steps = manifest.steps
    let once = steps[provider].once?.rawValue ?? ""
    diagnostics.report(
      "'\(steps[index].plugin)' needs \(English.withArticle(input.typeName)) from a dependency, and only '\(steps[provider].id)' provides one, which runs once (\"once\": \"\(once)\") and gives nothing on the launches that skip it; take the input as optional (StepInput.optional), or remove 'once' from '\(steps[provider].id)'.",
      at: stepPath(index).appending("dependsOn"))
  }
}
