import LaunchJSON

extension PlanBuilder {
  /// Reports what a step cannot have together (``ManifestFields/stepRules``: `when`, `once` or
  /// a `cache` on an on-demand step, which the app asks for whatever the launch; `once` with a
  /// `cache`), each rule it breaks, so that fixing one does not reveal another; and a
  /// `when.reason` that lists no reason or an empty one.
  mutating func checkContextFields() {
    let steps = manifest.steps
    let rules = ManifestFields.stepRules
    for index in steps.indices {
      // Nearly every step is neither on demand nor run once, which every rule needs, and has no
      // `when`: it is passed over on those fields, read in place, without the copy below.
      guard
        ManifestFields.mayBreakStepRules(trigger: steps[index].trigger, once: steps[index].once)
          || steps[index].when != nil
      else {
        assert(!rules.contains { $0.isBroken(steps[index]) }, "a step rule needs another check")
        continue
      }
      // The step taken once, and the rules by index: an array's element handed to a rule's
      // closure, or a rule taken by `for in`, is copied first (a retain of each field), four
      // rules for each of thousands of steps, more than the rest of the plan's checks cost.
      let step = steps[index]
      for rule in rules.indices where rules[rule].isBroken(step) {
        diagnostics.report(
          rules[rule].info.message, at: stepPath(index).appending(rules[rule].info.reportedAt))
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
