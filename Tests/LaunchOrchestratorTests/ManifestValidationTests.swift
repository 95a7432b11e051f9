import Foundation
import LaunchJSON
import Testing

@testable import LaunchOrchestrator

@Suite("Manifest validation")
struct ManifestValidationTests {
  @Test func aTimeoutOfZeroIsAValidationErrorInTheDefaultsAndOnAStep() {
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "defaults": { "timeout": 0 }, "steps": [ { "id": "a", "plugin": "noop", "timeout": "0s" } ] }"#
      ) == [
        "1:42: error: defaults.timeout: a 'timeout' of 0 times out every attempt before it runs; give the limit per attempt (\"5s\"), or remove 'timeout' for none.",
        "1:100: error: step 'a' (steps[0].timeout): a 'timeout' of 0 times out every attempt before it runs; give the limit per attempt (\"5s\"), or remove 'timeout' for none.",
      ])
  }

  /// A milestone whose steps are not an array is named once: a step deferred until it is
  /// not said to name an unknown milestone too.
  @Test func aMilestoneOfTheWrongShapeIsNamedOnceNotAsUnknownToo() {
    #expect(
      diagnostics(
        of:
          #"{ "version": 1, "milestones": { "interactive": "page" }, "steps": [ { "id": "page", "plugin": "noop" }, { "id": "later", "plugin": "noop", "deferUntil": "interactive" } ] }"#
      ) == [
        "1:48: error: milestones.interactive: expected an array of step ids, found a string."
      ])
  }

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

  @Test func namesATrailingCommaAndReadsPastAByteOrderMark() throws {
    #expect(
      diagnostics(
        of:
          "{ \"version\": 1,\n  \"steps\": [\n    { \"id\": \"a\", \"plugin\": \"noop\" },\n  ]\n}")
        == [
          "3:36: error: invalid JSON: a trailing comma before ']'; remove it, as JSON allows no comma after the last item."
        ])
    #expect(try loadPlan("\u{FEFF}{ \"version\": 1, \"steps\": [] }").steps.isEmpty)
    #expect(
      diagnostics(of: "\u{FEFF}{ \"version\": 1, \"steps\": [], \"x\": 1 }") == [
        "1:30: error: x: unknown key 'x'. Allowed keys: \(ManifestObjectInfo.topLevel.keys.joined(separator: ", "))."
      ], "columns count from after the mark, as editors show them")
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
        "3:21: error: maxConcurrency: 'maxConcurrency' must be a whole number from 1 to 2147483647, or left out for no limit.",
        "4:28: error: defaults.timeout: '5 seconds' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
        "4:41: error: defaults.priorty: unknown key 'priorty'. Did you mean 'priority'?",
        "4:73: error: defaults.onFailure: unknown failure policy 'stop'. Use \"abort\" or \"continue\".",
        "5:44: error: milestones.interactive[1]: milestone 'interactive' names an unknown step 'ghost'.",
        "7:32: error: step 'store' (steps[0].plugin): unknown plugin kind 'noopp'. Did you mean 'noop'? Run 'orchestrate plugins' to list the kinds this build knows.",
        "8:13: error: step 'store' (steps[1].id): duplicate step id 'store'; steps[0] already uses it. Step ids must be unique.",
        "8:52: error: step 'store' (steps[1].priority): unknown priority 'urgent'. Priorities are critical, high, normal, low, background.",
        "9:5: error: steps[2]: missing key 'id'; every step needs a unique id.",
        "10:50: error: step 'x' (steps[3].dependsOn[0]): 'dependsOn' names an unknown step 'stor'. Did you mean 'store'?",
        "10:73: error: step 'x' (steps[3].deferUntil): unknown milestone 'interactiv'. Did you mean 'interactive'?",
        "10:87: error: step 'x' (steps[3].bogus): unknown key 'bogus'. Allowed keys: \(ManifestObjectInfo.step.keys.joined(separator: ", ")).",
        "11:46: error: step 'y' (steps[4].after[0]): a step cannot wait for itself; remove 'y' from 'after'.",
        "11:61: error: step 'y' (steps[4].delay): a duration cannot be negative, found -1.",
        "11:88: error: step 'y' (steps[4].retry.attempts): 'attempts' counts every attempt including the first; use a number from 1 to 100.",
        "11:106: error: step 'y' (steps[4].isolation): unknown isolation 'ui'; use \"main\" to run on the main actor, or leave it out.",
      ])
  }

  @Test func readsWholeNumbersFromTheirTextAndRefusesOthersAsWritten() throws {
    // 2.5e1 and 1e3 are whole numbers however they are written.
    let plan = try loadPlan(
      #"""
      { "version": 1, "maxConcurrency": 1e3,
        "steps": [{ "id": "a", "plugin": "noop", "retry": { "attempts": 2.5e1 } }] }
      """#)
    #expect(plan.manifest.maxConcurrency == 1000)
    #expect(plan.steps[0].retry.attempts == 25)
    func problem(_ maxConcurrency: String) -> [String] {
      diagnostics(of: #"{ "version": 1, "maxConcurrency": \#(maxConcurrency), "steps": [] }"#)
    }
    #expect(problem("1.5") == ["1:35: error: maxConcurrency: expected a whole number, found 1.5."])
    #expect(
      problem("1e-3") == ["1:35: error: maxConcurrency: expected a whole number, found 1e-3."])
    // Through a Double, 2^53 + 1 would have been read as 2^53. Too large a number is told the
    // field's own range, which has no negative numbers.
    for tooLarge in ["9007199254740993", "2147483648", "3000000000", "1E30"] {
      #expect(
        problem(tooLarge) == [
          "1:35: error: maxConcurrency: 'maxConcurrency' must be a whole number from 1 to 2147483647, or left out for no limit."
        ])
    }
    #expect(
      diagnostics(
        of: #"""
          { "version": 1, "steps": [{ "id": "a", "plugin": "noop", "retry": { "attempts": 1e30 } }] }
          """#
      ) == [
        "1:81: error: step 'a' (steps[0].retry.attempts): 'attempts' counts every attempt including the first; use a number from 1 to 100."
      ])
    #expect(
      diagnostics(of: #"{ "version": 1e30, "steps": [] }"#) == [
        "1:14: error: version: unsupported manifest version 1e30; this orchestrator reads version 1."
      ])
    #expect(
      problem(#""2""#) == ["1:35: error: maxConcurrency: expected a whole number, found a string."])
    #expect(
      diagnostics(of: #"{ "version": 1.0000000000000001, "steps": [] }"#) == [
        "1:14: error: version: expected a whole number, found 1.0000000000000001."
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
        "2:3: error: step 'a' (steps[0]): dependency cycle: a -> b -> c -> a. Each step waits for the next, so none can start; remove one of these dependencies."
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
        "2:3: error: step 'cleanup' (steps[0]): dependency cycle: cleanup -> interactive (milestone) -> page -> cleanup. Each step waits for the next, so none can start; remove one of these dependencies."
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
        "2:58: error: step 'a' (steps[0].params.duration): 'soon' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\".",
        "3:46: error: step 'b' (steps[1].params.duraton): unknown parameter 'duraton' for 'wait'. Did you mean 'duration'?",
        "4:61: error: step 'c' (steps[2].params.value): expected a string, found a number.",
        "5:75: error: step 'd' (steps[3].params.count): 'count' must be 0 or more, not -2.",
        "5:79: error: step 'd' (steps[3].params.extra): unknown parameter 'extra' for 'token.make'.",
        "6:46: error: step 'e' (steps[4].params.anything): unknown parameter 'anything' for 'noop'.",
        "7:44: error: step 'f' (steps[5].params): 'params' must be an object, not an array.",
        "8:66: error: step 'g' (steps[6].params.cuont): unknown parameter 'cuont' for 'token.make'. Did you mean 'count'?",
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
        "3:3: error: step 'user' (steps[1].dependsOn): 'token.use' needs a Token from a dependency, and none of the step's 'dependsOn' steps provides one; add a step of kind 'token.make' or 'token.use' to its 'dependsOn'."
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
        "2:92: error: step 'a' (steps[0].fallback.plugin): the fallback 'number.make' outputs Int, but 'token.make' outputs Token; dependents receive the fallback's output, so both must output the same type."
      ])
    // A kind that hands nothing on is said so, not as Swift writes `Void`.
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "token.make", "params": { "value": "v" }, "fallback": { "plugin": "noop" } }
          ] }
          """
      ).map { $0.drop { $0 != " " } }
        == [
          " error: step 'a' (steps[0].fallback.plugin): the fallback 'noop' outputs nothing, but 'token.make' outputs Token; dependents receive the fallback's output, so both must output the same type."
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
        "2:103: error: step 'a' (steps[0].fallback.params.count): 'count' must be 0 or more, not -1."
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
        "test.json:3:3: warning: step 'urgent' (steps[1]): priority inversion: the step is critical but waits for 'slow', which is background. 'slow' will run at critical priority; raise its priority in the manifest to say so."
      ])
    #expect(plan.steps[0].effectivePriority == .critical)
  }

  @Test func namesTheStepByItsIdAndKeepsThePurePathForTools() throws {
    let error = try #require(
      throws: ManifestError.self,
      performing: {
        try loadPlan(
          """
          { "version": 1, "steps": [
            { "id": "typed", "plugin": "token.make", "params": { "value": "v", "count": -2 } }
          ] }
          """)
      })
    let diagnostic = try #require(error.diagnostics.first)
    #expect(diagnostic.path.description == "steps[0].params.count")
    #expect(diagnostic.step == "typed")
    #expect(diagnostic.message == "'count' must be 0 or more, not -2.")
    #expect(
      diagnostic.description
        == "test.json:2:79: error: step 'typed' (steps[0].params.count): 'count' must be 0 or more, not -2."
    )
  }

  @Test func namesAStepLeftOutOfTheManifestByItsIdWhenItCouldBeRead() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "half", "timeout": "soon" },
            { "id": 7, "plugin": "noop" },
            { "id": "", "plugin": "noop" }
          ] }
          """)
        == [
          "2:3: error: step 'half' (steps[0]): missing key 'plugin'; say which step kind runs this step.",
          "2:30: error: step 'half' (steps[0].timeout): 'soon' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\", or as a number of seconds.",
          "3:11: error: steps[1].id: expected a string, found a number.",
          "4:11: error: steps[2].id: a step id cannot be empty.",
        ])
  }

  /// A step left out for its own problem (no `plugin`, or one that is no string) still
  /// exists: a step or milestone naming it is not told it is unknown (with a suggestion of
  /// another step), and what a step needs from it is not checked. Empty names are said to be
  /// empty, not unknown or undeclared.
  @Test func aStepLeftOutForItsOwnProblemIsNoUnknownStepAndEmptyNamesAreSaidEmpty() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "milestones": { "interactive": ["a", ""] }, "signals": ["go"], "steps": [
            { "id": "a" },
            { "id": "b", "plugin": "noop", "dependsOn": ["a", ""], "after": ["c"], "waitFor": [""] },
            { "id": "c", "plugin": 5 },
            { "id": "d", "plugin": "token.use", "dependsOn": ["a"] }
          ] }
          """)
        == [
          "1:54: error: milestones.interactive[1]: milestone 'interactive' holds an empty step id; remove it, or name a step.",
          "2:3: error: step 'a' (steps[0]): missing key 'plugin'; say which step kind runs this step.",
          "3:53: error: step 'b' (steps[1].dependsOn[1]): 'dependsOn' holds an empty step id; remove it, or name a step.",
          "3:86: error: step 'b' (steps[1].waitFor[0]): a signal name cannot be empty; remove it from 'waitFor'.",
          "4:26: error: step 'c' (steps[2].plugin): expected a string, found a number.",
        ])
  }

  @Test func namesEachOfTwoStepsSharingAnIdAndTellsThemApartByPath() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "twin", "plugin": "noop" },
            { "id": "twin", "plugin": "noop", "after": ["twin"] }
          ] }
          """)
        == [
          "3:11: error: step 'twin' (steps[1].id): duplicate step id 'twin'; steps[0] already uses it. Step ids must be unique.",
          "3:47: error: step 'twin' (steps[1].after[0]): a step cannot wait for itself; remove 'twin' from 'after'.",
        ])
  }

  @Test func keepsThePathAloneForProblemsOutsideSteps() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "milestones": { "interactive": ["ghost"] },
            "splash": { "dismissOn": "shown" }, "app": { "version": "" },
            "steps": [ { "id": "a", "plugin": "noop" } ] }
          """)
        == [
          "1:49: error: milestones.interactive[0]: milestone 'interactive' names an unknown step 'ghost'.",
          "2:28: error: splash.dismissOn: unknown milestone 'shown'. Known milestones: interactive.",
          "2:59: error: app.version: 'version' cannot be empty; write it like \"1.10.0\".",
        ])
  }

  @Test func suggestsTheRequiredParameterAMisspelledKeyWasMeantToBeAndNamesTheOtherUnknownKeys() {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "folder.use", parameters: FolderParameters.self) { _, _ in }
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "typo", "plugin": "folder.use", "params": { "directry": "images" } },
            { "id": "nested", "plugin": "folder.use", "params": { "directory": "d", "limits": { "cuont": 1 } } },
            { "id": "other", "plugin": "folder.use", "params": { "directories": ["a"] } },
            { "id": "none", "plugin": "folder.use", "params": { "path": "images" } },
            { "id": "two", "plugin": "folder.use", "params": { "directry": "a", "limts": {} } }
          ] }
          """, registry: registry)
        == [
          "2:55: error: step 'typo' (steps[0].params.directry): unknown parameter 'directry' for 'folder.use'. Did you mean 'directory'?",
          "3:87: error: step 'nested' (steps[1].params.limits.cuont): unknown parameter 'cuont' for 'folder.use'. Did you mean 'count'?",
          "4:54: error: step 'other' (steps[2].params): 'folder.use' needs the parameter 'directory'.",
          "5:53: error: step 'none' (steps[3].params): 'folder.use' needs the parameter 'directory'.",
          "5:55: error: step 'none' (steps[3].params.path): unknown parameter 'path' for 'folder.use'.",
          "6:54: error: step 'two' (steps[4].params.directry): unknown parameter 'directry' for 'folder.use'. Did you mean 'directory'?",
          "6:71: error: step 'two' (steps[4].params.limts): unknown parameter 'limts' for 'folder.use'. Did you mean 'limits'?",
        ])
  }

  @Test func putsTheRightArticleBeforeAnInputsTypeName() {
    var registry = PluginRegistry.testKinds
    registry.register(kind: "settings.use", inputs: [.required(AppSettings.self)]) { _ in }
    #expect(
      diagnostics(
        of: #"{ "version": 1, "steps": [ { "id": "ui", "plugin": "settings.use" } ] }"#,
        registry: registry)
        == [
          "1:28: error: step 'ui' (steps[0].dependsOn): 'settings.use' needs an AppSettings from a dependency, and none of the step's 'dependsOn' steps provides one; no registered plugin provides one."
        ])
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

/// An input type whose name takes "an".
private struct AppSettings: Sendable {}

/// Parameters with a required key, an optional one that looks like it, and a nested object.
private struct FolderParameters: StepParameters {
  struct Limits: ParameterValue {
    static var parameterType: ParameterDescription.ValueType { .object }
    var count: Int
  }
  @Parameter("The folder.", isPath: true) var directory: String
  @Parameter("More folders.") var directories: [String]?
  @Parameter("How much to read.") var limits: Limits?
}

/// Parameters with a value of each kind of check: bounds, listed values, a type, a
/// required one.
private struct PageParameters: StepParameters {
  @Parameter("How many.", in: 1...100) var limit = 20
  @Parameter("From where.", in: 0...) var offset = 0
  @Parameter("In what order.", oneOf: ["title", "added"]) var sort = "title"
  @Parameter("Whether to refresh.") var refresh = false
  @Parameter("Which shelf.") var shelf: String
}

/// Two required parameters, one with an optional one spelled close to it.
private struct TitledParameters: StepParameters {
  @Parameter("The title.") var title: String
  @Parameter("A tile.") var tile = "x"
  @Parameter("The count.") var count: Int
}

private struct TitledStep: StepPlugin {
  static let kind = "titled"
  init(parameters: TitledParameters) {}
  func run(_ context: StepContext) async throws {}
}

private struct PageStep: StepPlugin {
  static let kind = "page.load"
  init(parameters: PageParameters) {}
  func run(_ context: StepContext) async throws {}
}

extension ManifestValidationTests {
  /// "A broken manifest is reported fully before anything runs": every parameter of a step
  /// that is wrong is said, not the first alone, with its unknown keys, and a missing one
  /// said once, as the key misspelled.
  @Test func saysEveryWrongParameterOfAStepAtOnce() {
    var registry = PluginRegistry.testKinds
    registry.register(PageStep.self)
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "page.load", "params": { "limit": 0, "offset": -1, "sort": "x", "refresh": "yes", "shelf": "s", "bogus": 1 } },
          { "id": "b", "plugin": "page.load", "params": { "limit": 1e23, "shelfs": "s" } }
        ] }
        """, registry: registry)
    #expect(
      problems.map { $0.drop { $0 != " " } } == [
        " error: step 'a' (steps[0].params.limit): 'limit' must be from 1 to 100, not 0.",
        " error: step 'a' (steps[0].params.offset): 'offset' must be 0 or more, not -1.",
        " error: step 'a' (steps[0].params.sort): unknown sort 'x'. Use one of: title, added.",
        " error: step 'a' (steps[0].params.refresh): expected true or false, found a string.",
        " error: step 'a' (steps[0].params.bogus): unknown parameter 'bogus' for 'page.load'.",
        " error: step 'b' (steps[1].params.limit): 'limit' must be from 1 to 100, not 1e23.",
        " error: step 'b' (steps[1].params.shelfs): unknown parameter 'shelfs' for 'page.load'. Did you mean 'shelf'?",
      ], "\(problems)")
  }

  /// Each missing parameter is said, and a key misspelled is taken for the missing one it is
  /// closest to before any other parameter.
  @Test func saysEveryMissingParameterAndTakesAMisspeltKeyForTheMissingOne() {
    var registry = PluginRegistry.testKinds
    registry.register(TitledStep.self)
    let problems = diagnostics(
      of: """
        { "version": 1, "steps": [
          { "id": "a", "plugin": "titled", "params": {} },
          { "id": "b", "plugin": "titled", "params": { "tilte": "x", "count": 1 } }
        ] }
        """, registry: registry)
    #expect(
      problems.map { $0.drop { $0 != " " } } == [
        " error: step 'a' (steps[0].params): 'titled' needs the parameter 'title'.",
        " error: step 'a' (steps[0].params): 'titled' needs the parameter 'count'.",
        " error: step 'b' (steps[1].params.tilte): unknown parameter 'tilte' for 'titled'. Did you mean 'title'?",
      ], "\(problems)")
  }

  @Test func aStepListedTwiceInAMilestoneCountsOnce() throws {
    let plan = try loadPlan(
      #"""
      { "version": 1,
        "milestones": { "ready": ["a", "b", "a"], "done": ["b", "a", "b"] },
        "steps": [ { "id": "a", "plugin": "noop" }, { "id": "b", "plugin": "noop" } ] }
      """#)
    #expect(plan.milestones.map(\.name) == ["ready", "done"])
    #expect(plan.milestones.map(\.steps) == [[0, 1], [1, 0]])
    #expect(plan.steps.map(\.milestones) == [[0, 1], [0, 1]])
  }
}
