import Foundation
import Testing

@testable import LaunchOrchestrator

@Suite("Manifest validation")
struct ManifestValidationTests {
  @Test func loadsAValidManifestWithEveryField() throws {
    let plan = try loadPlan(
      """
      {
        "version": 1, "name": "Books", "maxConcurrency": 3,
        "defaults": { "timeout": "5s", "priority": "high", "onFailure": "continue",
                      "retry": { "attempts": 2, "backoff": "50ms" } },
        "milestones": { "firstFrame": ["gate"], "interactive": ["gate", "page"] },
        "steps": [
          { "id": "gate", "plugin": "token.make", "params": { "value": "g" }, "priority": "critical",
            "timeout": 2, "isolation": "main", "expectedDuration": "40ms" },
          { "id": "page", "plugin": "token.use", "dependsOn": ["gate"], "after": [], "delay": "1.5m",
            "retry": { "attempts": 1 }, "onFailure": "abort",
            "fallback": { "plugin": "token.make", "params": { "value": "cached" } } },
          { "id": "clean", "plugin": "wait", "params": { "duration": "24h" }, "deferUntil": "interactive",
            "priority": "background", "description": "maintenance" }
        ]
      }
      """)
    #expect(plan.name == "Books")
    #expect(plan.manifest.maxConcurrency == 3)
    let gate = try #require(plan.step("gate"))
    #expect(gate.priority == .critical)
    #expect(gate.timeout == .seconds(2))
    #expect(gate.isolation == .main)
    #expect(gate.retry == RetryPolicy(attempts: 2, backoff: .milliseconds(50)))
    #expect(gate.onFailure == .continue)
    let page = try #require(plan.step("page"))
    #expect(page.priority == .high)
    #expect(page.dependsOn == [0])
    #expect(page.delay == .seconds(90))
    #expect(page.timeout == .seconds(5))
    #expect(page.retry == RetryPolicy(attempts: 1, backoff: .zero))
    #expect(page.onFailure == .abort)
    #expect(page.fallbackPlugin == "token.make")
    let clean = try #require(plan.step("clean"))
    #expect(clean.deferUntil == 1)
    #expect(plan.milestones.map(\.name) == ["firstFrame", "interactive"])
    #expect(plan.milestones[1].steps == [0, 1])
    #expect(plan.topologicalOrder.firstIndex(of: 0)! < plan.topologicalOrder.firstIndex(of: 1)!)
    #expect(plan.warnings.isEmpty)
  }

  @Test func namesTheManifestAfterItsFileWhenItHasNoName() throws {
    let plan = try loadPlan(#"{ "version": 1, "steps": [] }"#)
    #expect(plan.name == "test")
  }

  @Test func reportsSyntaxErrorsWithLineAndColumn() {
    #expect(
      diagnostics(of: "{\n  \"version\": 1,\n  \"steps\": [ { \"id\": \"a\",, } ]\n}")
        == ["3:26: error: invalid JSON: unexpected character ','; expected a key in double quotes."]
    )
    #expect(
      diagnostics(of: "") == [
        "1:1: error: invalid JSON: the file is empty; expected a JSON object."
      ])
    #expect(
      diagnostics(of: "{\"version\": 1") == [
        "1:14: error: invalid JSON: unexpected end of file; expected ',' or '}' after an object member."
      ])
  }

  @Test func reportsEveryProblemAtOnceInDocumentOrder() {
    let problems = diagnostics(
      of: """
        {
          "version": 2,
          "maxConcurrency": 0,
          "defaults": { "timeout": "5 seconds", "priorty": "high", "onFailure": "stop" },
          "milestones": { "interactive": ["store", "ghost"] },
          "steps": [
            { "id": "store", "plugin": "noopp" },
            { "id": "store", "plugin": "noop", "priority": "urgent" },
            { "plugin": "noop" },
            { "id": "x", "plugin": "noop", "dependsOn": ["stor"], "deferUntil": "interactiv", "bogus": 1 },
            { "id": "y", "plugin": "noop", "after": ["y"], "delay": -1, "retry": { "attempts": 0 }, "isolation": "ui" }
          ]
        }
        """)
    #expect(
      problems == [
        "2:14: error: version: unsupported manifest version 2; this orchestrator reads version 1.",
        "3:21: error: maxConcurrency: 'maxConcurrency' must be at least 1, or left out for no limit.",
        "4:28: error: defaults.timeout: '5 seconds' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
        "4:41: error: defaults.priorty: unknown key 'priorty'. Did you mean 'priority'?",
        "4:73: error: defaults.onFailure: unknown failure policy 'stop'. Use \"abort\" or \"continue\".",
        "5:44: error: milestones.interactive[1]: milestone 'interactive' names an unknown step 'ghost'.",
        "7:32: error: steps[0].plugin: unknown plugin kind 'noopp'. Did you mean 'noop'? Run 'orchestrate plugins' to list the kinds this build knows.",
        "8:13: error: steps[1].id: duplicate step id 'store'; steps[0] already uses it. Step ids must be unique.",
        "8:52: error: steps[1].priority: unknown priority 'urgent'. Priorities are critical, high, normal, low, background.",
        "9:5: error: steps[2]: missing key 'id'; every step needs a unique id.",
        "10:50: error: steps[3].dependsOn[0]: step 'x' names an unknown step 'stor'. Did you mean 'store'?",
        "10:73: error: steps[3].deferUntil: unknown milestone 'interactiv'. Did you mean 'interactive'?",
        "10:87: error: steps[3].bogus: unknown key 'bogus'. Allowed keys: id, plugin, params, priority, dependsOn, after, timeout, retry, onFailure, fallback, delay, deferUntil, isolation, expectedDuration, description.",
        "11:46: error: steps[4].after[0]: step 'y' cannot wait for itself; remove it from 'after'.",
        "11:61: error: steps[4].delay: a duration cannot be negative or this large (found -1.0).",
        "11:88: error: steps[4].retry.attempts: 'attempts' counts every attempt including the first; use a number from 1 to 100.",
        "11:106: error: steps[4].isolation: unknown isolation 'ui'; use \"main\" to run on the main actor, or leave it out.",
      ])
  }

  @Test func namesCyclesInFull() {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "noop", "dependsOn": ["b"] },
          { "id": "b", "plugin": "noop", "after": ["c"] },
          { "id": "c", "plugin": "noop", "dependsOn": ["a"] },
          { "id": "free", "plugin": "noop" }
        ] }
        """)
    #expect(
      problems == [
        "2:3: error: steps[0]: dependency cycle: a -> b -> c -> a. Each step waits for the next, so none can start; remove one of these dependencies."
      ])
  }

  @Test func findsCyclesThroughMilestoneDeferral() {
    let problems = diagnostics(
      of: """
        { "version": 1, "milestones": { "interactive": ["page"] }, "steps": [
          { "id": "cleanup", "plugin": "noop", "deferUntil": "interactive" },
          { "id": "page", "plugin": "noop", "after": ["cleanup"] }
        ] }
        """)
    #expect(
      problems == [
        "2:3: error: steps[0]: dependency cycle: cleanup -> interactive (milestone) -> page -> cleanup. Each step waits for the next, so none can start; remove one of these dependencies."
      ])
  }

  @Test func reportsParamsThatDoNotDecodeWithTheirPath() {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "wait", "params": { "duration": "soon" } },
          { "id": "b", "plugin": "wait", "params": { "duraton": "1s" } },
          { "id": "c", "plugin": "token.make", "params": { "value": 3 } },
          { "id": "d", "plugin": "token.make", "params": { "value": "x", "count": -2, "extra": true } },
          { "id": "e", "plugin": "noop", "params": { "anything": 1 } },
          { "id": "f", "plugin": "noop", "params": [] },
          { "id": "g", "plugin": "token.make", "params": { "value": "x", "cuont": 2 } }
        ] }
        """)
    #expect(
      problems == [
        "2:58: error: steps[0].params.duration: 'soon' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\".",
        "3:44: error: steps[1].params: 'wait' needs the parameter 'duration'.",
        "4:61: error: steps[2].params.value: expected a string, found a number.",
        "5:75: error: steps[3].params.count: 'count' must be 0 or more, not -2.",
        "5:79: error: steps[3].params.extra: unknown parameter 'extra' for 'token.make'.",
        "6:46: error: steps[4].params.anything: unknown parameter 'anything' for 'noop'.",
        "7:44: error: steps[5].params: 'params' must be an object, not an array.",
        "8:66: error: steps[6].params.cuont: unknown parameter 'cuont' for 'token.make'. Did you mean 'count'?",
      ])
  }

  @Test func requiresAnInputFromADependency() {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "maker", "plugin": "token.make", "params": { "value": "v" } },
          { "id": "user", "plugin": "token.use", "after": ["maker"] }
        ] }
        """)
    #expect(
      problems == [
        "3:3: error: steps[1].dependsOn: step 'user' ('token.use') needs a Token from a dependency, and none of its 'dependsOn' steps provides one; add a step of kind 'token.make' or 'token.use' to its 'dependsOn'."
      ])
  }

  @Test func acceptsAnInputProvidedThroughAChainOfDependencies() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "maker", "plugin": "token.make", "params": { "value": "v" } },
        { "id": "middle", "plugin": "noop", "dependsOn": ["maker"] },
        { "id": "user", "plugin": "token.use", "dependsOn": ["middle"] }
      ] }
      """)
    #expect(plan.hardDependencyClosure(of: 2) == [1, 0])
  }

  @Test func rejectsAFallbackWithAnotherOutputType() {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "token.make", "params": { "value": "v" }, "fallback": { "plugin": "number.make" } }
        ] }
        """)
    #expect(
      problems == [
        "2:92: error: steps[0].fallback.plugin: the fallback 'number.make' outputs Int, but 'token.make' outputs Token; dependents receive the fallback's output, so both must output the same type."
      ])
  }

  @Test func mergesFallbackParamsOverTheStepsOwn() {
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "token.make", "params": { "value": "v" }, "fallback": { "params": { "count": -1 } } }
        ] }
        """)
    #expect(
      problems == [
        "2:103: error: steps[0].fallback.params.count: 'count' must be 0 or more, not -1."
      ])
  }

  @Test func warnsAboutPriorityInversionsAndStillLoads() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "slow", "plugin": "noop", "priority": "background" },
        { "id": "urgent", "plugin": "noop", "priority": "critical", "dependsOn": ["slow"] }
      ] }
      """)
    #expect(
      plan.warnings.map(\.description) == [
        "test.json:3:3: warning: steps[1]: priority inversion: 'urgent' is critical but waits for 'slow', which is background. 'slow' will run at critical priority; raise its priority in the manifest to say so."
      ])
    #expect(plan.steps[0].effectivePriority == .critical)
  }

  @Test func reportsDuplicateKeys() {
    #expect(
      diagnostics(of: #"{ "version": 1, "steps": [], "steps": [] }"#)
        == ["1:30: error: steps: the key 'steps' appears twice in this object; keep one."])
  }

  @Test func reportsAMissingOrUnreadableFile() {
    do {
      _ = try ManifestLoader(registry: .testKinds).load(path: "/nonexistent/app.json")
      Issue.record("loaded a missing file")
    } catch {
      #expect(error.code == .unreadable)
      #expect(
        error.description
          == "/nonexistent/app.json: error: the manifest '/nonexistent/app.json' does not exist.")
    }
  }

  @Test func rejectsHostileNestingWithoutCrashing() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(
      diagnostics(of: deep) == ["1:257: error: invalid JSON: nesting is deeper than 256 levels."])
  }

  @Test func validatesAndPlansTenThousandSteps() throws {
    // A binary tree: step n depends on step n / 2.
    let steps = (0..<10_000).map { index in
      let dependsOn = index == 0 ? "" : #", "dependsOn": ["s\#(index / 2)"]"#
      return #"{ "id": "s\#(index)", "plugin": "noop"\#(dependsOn) }"#
    }
    let plan = try loadPlan(#"{ "version": 1, "steps": [\#(steps.joined(separator: ","))] }"#)
    #expect(plan.steps.count == 10_000)
    var position = [Int](repeating: 0, count: plan.steps.count)
    for (rank, step) in plan.topologicalOrder.enumerated() { position[step] = rank }
    #expect(Set(plan.topologicalOrder).count == 10_000)
    #expect((1..<10_000).allSatisfy { position[$0 / 2] < position[$0] })
  }
}
