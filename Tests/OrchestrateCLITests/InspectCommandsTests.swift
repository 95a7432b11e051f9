import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

@Suite("orchestrate plan, graph, plugins, schema", .timeLimit(.minutes(10)))
struct InspectCommandsTests {
  @Test func plansTheShippedExampleFromItsHints() async throws {
    let result = try await Orchestrate.run(["plan", "manifests/app.json"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    try expectMatchesGolden(result.stdout, "plan-app.txt")
  }

  @Test func plansWithDurationsFromAnEarlierReport() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "m.json",
      """
      { "version": 1, "milestones": { "interactive": ["b"] }, "steps": [
        { "id": "a", "plugin": "simulate", "expectedDuration": "5s" },
        { "id": "b", "plugin": "simulate", "dependsOn": ["a"] }
      ] }
      """)
    let report = try folder.write(
      "r.json",
      """
      { "manifest": "m.json", "name": "m", "outcome": "succeeded", "route": null, "duration": 0.5,
        "milestones": { "interactive": 0.5 }, "criticalPath": ["a", "b"],
        "steps": [
          { "id": "a", "plugin": "simulate", "state": "succeeded", "start": 0, "end": 0.25, "attempts": 1,
            "usedFallback": false, "error": null },
          { "id": "b", "plugin": "simulate", "state": "succeeded", "start": 0.25, "end": 0.5, "attempts": 1,
            "usedFallback": false, "error": null }
        ] }
      """)
    let result = try await Orchestrate.run(["plan", manifest, "--durations", report])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("Plan for m: 2 steps (durations: 2 from the report)"))
    #expect(result.stdout.contains("  interactive  0.500s"))
    #expect(result.stdout.contains("predicted total: 0.500s"))
    #expect(result.stdout.contains("critical path: a -> b"))
  }

  @Test func rejectsADurationsFileThatIsNotAReport() async throws {
    let folder = try TemporaryFolder()
    let notReport = try folder.write("x.json", #"{ "hello": 1 }"#)
    let result = try await Orchestrate.run(["plan", "manifests/app.json", "--durations", notReport])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "Error: The file '\(notReport)' given to '--durations' is not a launch report (steps: missing or malformed); write one with 'orchestrate run --report'.\n"
    )
    let missing = try await Orchestrate.run([
      "plan", "manifests/app.json", "--durations", "nope.json",
    ])
    #expect(missing.status == 66)
  }

  /// A report for `m.json`'s steps `a` and `b`, or whichever `steps` it is given.
  private func report(
    in folder: TemporaryFolder, steps: [(id: String, start: Double, end: Double)]
  ) throws -> String {
    let lines = steps.map {
      #"{ "id": "\#($0.id)", "plugin": "simulate", "state": "succeeded", "start": \#($0.start), "end": \#($0.end), "attempts": 1, "usedFallback": false, "error": null }"#
    }
    return try folder.write(
      "r.json",
      """
      { "manifest": "other.json", "name": "Other", "outcome": "succeeded", "route": null,
        "duration": 0.5, "milestones": {}, "criticalPath": [],
        "steps": [ \(lines.joined(separator: ", ")) ] }
      """)
  }

  private func manifest(in folder: TemporaryFolder) throws -> String {
    try folder.write(
      "m.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate" }, { "id": "b", "plugin": "simulate", "dependsOn": ["a"] }
      ] }
      """)
  }

  @Test func rejectsADurationsReportWhoseStepEndsBeforeItStarts() async throws {
    let folder = try TemporaryFolder()
    let manifest = try manifest(in: folder)
    let report = try report(in: folder, steps: [("a", 0.5, 0.25), ("b", 0.5, 0.75)])
    let result = try await Orchestrate.run(["plan", manifest, "--durations", report])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "Error: The report '\(report)' given to '--durations' says the step 'a' ended at 0.250s, before it started at 0.500s, so it is damaged; write a new one with 'orchestrate run \(manifest) --report <file>'.\n"
    )
  }

  @Test func rejectsADurationsReportOfAnotherManifest() async throws {
    let folder = try TemporaryFolder()
    let manifest = try manifest(in: folder)
    let other = try report(in: folder, steps: [("x", 0, 0.25), ("y", 0.25, 0.5)])
    let result = try await Orchestrate.run(["plan", manifest, "--durations", other])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "Error: The report '\(other)' given to '--durations' is of the launch 'Other' ('other.json'), not of '\(manifest)': none of its steps are in this manifest; write a new one with 'orchestrate run \(manifest) --report <file>'.\n"
    )
    let mixed = try report(in: folder, steps: [("a", 0, 0.25), ("y", 0.25, 0.5)])
    let partly = try await Orchestrate.run(["plan", manifest, "--durations", mixed])
    #expect(partly.status == 65)
    #expect(
      partly.stderr.hasPrefix(
        "Error: The report '\(mixed)' given to '--durations' has steps this manifest does not declare ('y'), so it is of another manifest;"
      ))
    let twice = try report(in: folder, steps: [("a", 0, 0.25), ("a", 0.25, 0.5)])
    let repeated = try await Orchestrate.run(["plan", manifest, "--durations", twice])
    #expect(repeated.status == 65)
    #expect(repeated.stderr.contains("steps[1].id: the step 'a' is listed twice"))
  }

  @Test func drawsTheGraphAsDotAndMermaid() async throws {
    let dot = try await Orchestrate.run(["graph", "manifests/app.json"])
    #expect(dot.status == 0)
    try expectMatchesGolden(dot.stdout, "graph-app.dot")
    let mermaid = try await Orchestrate.run(["graph", "manifests/app.json", "--format", "mermaid"])
    #expect(mermaid.status == 0)
    try expectMatchesGolden(mermaid.stdout, "graph-app.mmd")
    let bad = try await Orchestrate.run(["graph", "manifests/app.json", "--format", "mermiad"])
    #expect(bad.status == 64)
    #expect(
      bad.stderr.hasPrefix(
        "Error: Unknown format 'mermiad' for '--format'. Did you mean 'mermaid'?"))
  }

  @Test func listsPluginsWithTheirParameters() async throws {
    let result = try await Orchestrate.run(["plugins"])
    #expect(result.status == 0)
    try expectMatchesGolden(result.stdout, "plugins.txt")
  }

  @Test func shipsTheSchemaItPrints() async throws {
    let result = try await Orchestrate.run(["schema"])
    #expect(result.status == 0)
    let shipped = try String(
      contentsOf: Orchestrate.packageRoot.appendingPathComponent("manifests/manifest.schema.json"),
      encoding: .utf8)
    #expect(
      result.stdout == shipped,
      "manifests/manifest.schema.json is out of date: run 'swift run orchestrate schema > manifests/manifest.schema.json'"
    )
  }

  @Test func theSchemaAcceptsTheShippedManifestsAndRejectsABrokenOne() async throws {
    let folder = try TemporaryFolder()
    let broken = try folder.write(
      "broken.json",
      #"{ "version": 1, "steps": [ { "id": "a", "plugin": "simulate", "params": { "duraton": "1s" } } ] }"#
    )
    let script = """
      import json, sys, jsonschema
      schema = json.load(open(sys.argv[1]))
      jsonschema.Draft202012Validator.check_schema(schema)
      for path in sys.argv[2:-1]:
          jsonschema.validate(json.load(open(path)), schema, cls=jsonschema.Draft202012Validator)
      try:
          jsonschema.validate(json.load(open(sys.argv[-1])), schema, cls=jsonschema.Draft202012Validator)
          print("accepted")
      except jsonschema.ValidationError as error:
          print("rejected:", error.message)
      """
    let root = Orchestrate.packageRoot.path
    let (status, text) = try await runTool(
      ["python3", "-c", script, "\(root)/manifests/manifest.schema.json"]
        + [
          "app.json", "screensort.json", "simulated/booktrack.json",
          "simulated/booktrack-serial.json",
        ].map { "\(root)/manifests/\($0)" } + [broken])
    #expect(status == 0, "python3 with jsonschema is needed (.ci/run installs it)")
    #expect(text == "rejected: Additional properties are not allowed ('duraton' was unexpected)\n")
  }

  @Test func rejectsArgumentsToCommandsThatTakeNone() async throws {
    let result = try await Orchestrate.run(["schema", "extra"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("Error: Unexpected argument 'extra'; 'schema' takes none."))
  }

  @Test func aTeamsOwnBinaryHasEveryCommandAndItsOwnKinds() async throws {
    let plugins = try await Orchestrate.run(["plugins"], binary: "custom-orchestrate")
    #expect(plugins.status == 0)
    #expect(plugins.stdout.contains("example.greet: Writes a greeting to the launch log."))
    let run = try await Orchestrate.run(
      ["run", "Examples/CustomOrchestrate/greet.json"], binary: "custom-orchestrate")
    #expect(run.status == 0)
    #expect(run.stdout.contains("log        greet: Hello, launch!"))
  }

  @Test func aParameterDeclaredInThePluginsTypeShowsInPluginsAndTheSchemaAndIsChecked() async throws
  {
    let plugins = try await Orchestrate.run(["plugins"], binary: "custom-orchestrate")
    #expect(plugins.status == 0)
    #expect(
      plugins.stdout.contains(
        """
            name   non-empty string  required   Who to greet.
            times  integer 1...3     default 1  How many times to say hello.

        gate.household:
        """))
    let schema = try await Orchestrate.run(["schema"], binary: "custom-orchestrate")
    let document = try JSONParser.parse(Array(schema.stdout.utf8)).root
    let greet = try #require(
      document.value(at: .root.appending("$defs").appending("params.example.greet")))
    #expect(greet.value(at: .root.appending("required"))?.elements?.map(\.stringValue) == ["name"])
    let name = try #require(greet.value(at: .root.appending("properties").appending("name")))
    #expect(name.value(at: .root.appending("minLength"))?.numberText == "1")
    let times = try #require(greet.value(at: .root.appending("properties").appending("times")))
    // Not required, so `null` leaves it out too.
    #expect(times.value(at: .root.appending("type")) == ["integer", "null"])
    #expect(times.value(at: .root.appending("minimum"))?.numberText == "1")
    #expect(times.value(at: .root.appending("maximum"))?.numberText == "3")
    #expect(times.value(at: .root.appending("default"))?.numberText == "1")
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "greet.json",
      """
      { "version": 1, "steps": [
        { "id": "typo", "plugin": "example.greet", "params": { "name": "a", "tiems": 2 } },
        { "id": "many", "plugin": "example.greet", "params": { "name": "a", "times": 4 } },
        { "id": "none", "plugin": "example.greet", "params": { "times": 2 } },
        { "id": "nobody", "plugin": "example.greet", "params": { "name": "" } }
      ] }
      """)
    let validate = try await Orchestrate.run(["validate", manifest], binary: "custom-orchestrate")
    #expect(validate.status == 65)
    #expect(
      validate.stdout.contains(
        "greet.json:2:71: error: step 'typo' (steps[0].params.tiems): unknown parameter 'tiems' for 'example.greet'. Did you mean 'times'?"
      ))
    #expect(
      validate.stdout.contains(
        "greet.json:3:80: error: step 'many' (steps[1].params.times): 'times' must be from 1 to 3, not 4."
      ))
    #expect(
      validate.stdout.contains(
        "greet.json:4:56: error: step 'none' (steps[2].params): 'example.greet' needs the parameter 'name'."
      ))
    #expect(
      validate.stdout.contains(
        "greet.json:5:68: error: step 'nobody' (steps[3].params.name): 'name' cannot be empty."
      ))
  }
}
