import Foundation
import LaunchJSON
import LaunchOrchestrator
import Testing

@Suite("orchestrate: help and errors", .timeLimit(.minutes(10)))
struct CommandLineTests {
  @Test func printsHelpOnStdout() async throws {
    let result = try await Orchestrate.run(["--help"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    try expectMatchesGolden(result.stdout, "help.txt")
    let bare = try await Orchestrate.run([])
    #expect(bare.stdout == result.stdout)
  }

  @Test(arguments: [["run", "--help"], ["help", "run"], ["run", "-h"]])
  func printsCommandHelp(arguments: [String]) async throws {
    let result = try await Orchestrate.run(arguments)
    #expect(result.status == 0)
    try expectMatchesGolden(result.stdout, "run-help.txt")
  }

  @Test func printsCompareHelp() async throws {
    let result = try await Orchestrate.run(["compare", "--help"])
    #expect(result.status == 0)
    try expectMatchesGolden(result.stdout, "compare-help.txt")
  }

  @Test func printsStatsAndExportHelp() async throws {
    let stats = try await Orchestrate.run(["stats", "--help"])
    #expect(stats.status == 0)
    try expectMatchesGolden(stats.stdout, "stats-help.txt")
    let export = try await Orchestrate.run(["help", "export"])
    #expect(export.status == 0)
    try expectMatchesGolden(export.stdout, "export-help.txt")
  }

  @Test func printsValidateHelp() async throws {
    let result = try await Orchestrate.run(["validate", "--help"])
    #expect(result.status == 0)
    try expectMatchesGolden(result.stdout, "validate-help.txt")
  }

  @Test func helpAboutHelpAndAboutACommandExitZero() async throws {
    let top = try await Orchestrate.run(["--help"])
    for arguments in [["help", "--help"], ["help", "-h"], ["help", "help"]] {
      let result = try await Orchestrate.run(arguments)
      #expect(result.status == 0, "\(arguments)")
      #expect(result.stdout == top.stdout)
    }
    let plan = try await Orchestrate.run(["help", "plan"])
    #expect(plan.status == 0)
    #expect(plan.stdout.hasPrefix("OVERVIEW: Predicts a launch without running it"))
    let unknown = try await Orchestrate.run(["help", "plna"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.hasPrefix("Error: Unknown subcommand 'plna'. Did you mean 'plan'?"))
  }

  @Test func printsTheVersion() async throws {
    let result = try await Orchestrate.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout == "0.1.0\n")
  }

  @Test func suggestsTheSubcommandMeant() async throws {
    let result = try await Orchestrate.run(["rn", "manifests/app.json"])
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "Error: Unknown subcommand 'rn'. Did you mean 'run'?\nUsage: orchestrate <subcommand>\n")
  }

  @Test func suggestsTheTopLevelOptionMeant() async throws {
    let result = try await Orchestrate.run(["--verson"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("Error: Unknown option '--verson'. Did you mean '--version'?"))
  }

  @Test func suggestsTheOptionMeant() async throws {
    let result = try await Orchestrate.run(["run", "manifests/app.json", "--reprot", "r.json"])
    #expect(result.status == 64)
    #expect(
      result.stderr.hasPrefix(
        "Error: Unknown option '--reprot'. Did you mean '--report'?\nUsage: orchestrate run <manifest>"
      ))
  }

  @Test func rejectsBadOptionValues() async throws {
    let concurrency = try await Orchestrate.run([
      "run", "manifests/app.json", "--max-concurrency", "0",
    ])
    #expect(concurrency.status == 64)
    #expect(
      concurrency.stderr.hasPrefix(
        "Error: The value '0' for '--max-concurrency <n>' must be a whole number of at least 1."))
    let budget = try await Orchestrate.run(["run", "manifests/app.json", "--budget", "interactive"])
    #expect(budget.status == 64)
    #expect(
      budget.stderr.hasPrefix(
        "Error: The value 'interactive' for '--budget' must look like 'interactive=2s'."))
    let missing = try await Orchestrate.run(["run"])
    #expect(missing.status == 64)
    #expect(missing.stderr.hasPrefix("Error: Missing expected argument '<manifest>'."))
  }

  @Test func rejectsABudgetForAnUnknownMilestone() async throws {
    let result = try await Orchestrate.run([
      "run", "manifests/app.json", "--budget", "interactiv=1s",
    ])
    #expect(result.status == 64)
    #expect(
      result.stderr.hasPrefix(
        "Error: The manifest has no milestone 'interactiv' for '--budget'. Did you mean 'interactive'? It declares firstFrame, interactive."
      ))
  }

  @Test func reportsAMissingManifest() async throws {
    let result = try await Orchestrate.run(["run", "nowhere/app.json"])
    #expect(result.status == 66)
    #expect(result.stderr == "Error: The manifest 'nowhere/app.json' does not exist.\n")
  }

  @Test func reportsEveryProblemOfAnInvalidManifestBeforeRunningAnything() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "bad.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate", "dependsOn": ["b"] },
        { "id": "b", "plugin": "simulate", "dependsOn": ["a"], "params": { "duraton": "1s" } }
      ] }
      """)
    let result = try await Orchestrate.run(["run", path, "--report", folder.path("report.json")])
    #expect(result.status == 65)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr == """
        \(path):2:3: error: step 'a' (steps[0]): dependency cycle: a -> b -> a. Each step waits for the next, so none can start; remove one of these dependencies.
        \(path):3:70: error: step 'b' (steps[1].params.duraton): unknown parameter 'duraton' for 'simulate'. Did you mean 'duration'?
        Error: The manifest '\(path)' has 2 errors; nothing was run.

        """)
    #expect(!FileManager.default.fileExists(atPath: folder.path("report.json")))
  }

  @Test func validatesSeveralManifestsAndCountsTheProblems() async throws {
    let folder = try TemporaryFolder()
    let good = try folder.write(
      "good.json", #"{ "version": 1, "steps": [ { "id": "a", "plugin": "simulate" } ] }"#)
    let bad = try folder.write(
      "bad.json", #"{ "version": 1, "steps": [ { "id": "a", "plugin": "simulat" } ] }"#)
    let result = try await Orchestrate.run(["validate", good, bad])
    #expect(result.status == 65)
    #expect(
      result.stdout == """
        \(good): valid (1 step, 0 milestones)
        \(bad):1:51: error: step 'a' (steps[0].plugin): unknown plugin kind 'simulat'. Did you mean 'simulate'? Run 'orchestrate plugins' to list the kinds this build knows.
        1 error, 0 warnings in 2 manifests; 1 not valid.

        """)
    let allGood = try await Orchestrate.run(["validate", good, "manifests/app.json"])
    #expect(allGood.status == 0)
    #expect(allGood.stdout.hasSuffix("0 errors, 0 warnings in 2 manifests.\n"))
  }

  @Test func validateNamesTheStepATypoTrailingCommaOrMissingInputIsIn() async throws {
    let folder = try TemporaryFolder()
    let typo = try folder.write(
      "typo.json",
      """
      { "version": 1, "steps": [
        { "id": "thumbnails", "plugin": "images.cleanup", "params": { "directry": "images" } },
        { "id": "seed", "plugin": "sample.data" }
      ] }
      """)
    let comma = try folder.write(
      "comma.json",
      """
      { "version": 1, "steps": [
        { "id": "a", "plugin": "simulate" },
      ] }
      """)
    let bom = folder.path("bom.json")
    try Data([0xEF, 0xBB, 0xBF] + Array(#"{ "version": 1, "steps": [], "stepz": 1 }"#.utf8))
      .write(to: URL(fileURLWithPath: bom))
    let result = try await Orchestrate.run(["validate", typo, comma, bom])
    #expect(result.status == 65)
    #expect(
      result.stdout == """
        \(typo):2:65: error: step 'thumbnails' (steps[0].params.directry): unknown parameter 'directry' for 'images.cleanup'. Did you mean 'directory'?
        \(typo):3:3: error: step 'seed' (steps[1].dependsOn): 'sample.data' needs a StoreHandle from a dependency, and none of the step's 'dependsOn' steps provides one; add a step of kind 'store.init' to its 'dependsOn'.
        \(comma):2:38: error: invalid JSON: a trailing comma before ']'; remove it, as JSON allows no comma after the last item.
        \(bom):1:30: error: stepz: unknown key 'stepz'. Did you mean 'steps'?
        4 errors, 0 warnings in 3 manifests; 3 not valid.

        """)
  }

  @Test func validateSkipsTheJSONSchemaAShellGlobAlsoNames() async throws {
    let root = Orchestrate.packageRoot.appendingPathComponent("manifests")
    // What `orchestrate validate manifests/*.json` passes.
    let files = try FileManager.default.contentsOfDirectory(atPath: root.path)
      .filter { $0.hasSuffix(".json") }.sorted().map { "manifests/\($0)" }
    #expect(files.contains("manifests/manifest.schema.json"))
    let result = try await Orchestrate.run(["validate"] + files)
    #expect(result.status == 0, "\(result.stdout)")
    #expect(
      result.stdout.contains(
        "manifests/manifest.schema.json: skipped, a JSON Schema rather than a manifest\n"))
    #expect(
      result.stdout.hasSuffix(
        "0 errors, 0 warnings in \(files.count - 1) manifests; 1 file skipped, not a manifest.\n"))
  }

  @Test func validateReadsAManifestWhoseSchemaAddressIsJSONSchemasOwn() async throws {
    let folder = try TemporaryFolder()
    // The meta-schema's address, copied from a schema into a manifest with a misspelt key:
    // no schema keyword, and a manifest key, so it is read as the manifest it is.
    let manifest = try folder.write(
      "copied.json",
      #"""
      {"$schema":"https://json-schema.org/draft/2020-12/schema","version":1,"Steps":[{"id":"a","plugin":"noop"}]}
      """#)
    let typoOnly = try folder.write(
      "typo-only.json",
      #"""
      {"$schema":"https://json-schema.org/draft/2020-12/schema","Steps":[]}
      """#)
    let result = try await Orchestrate.run(["validate", manifest, typoOnly])
    #expect(result.status == 65, "\(result.stdout)")
    #expect(!result.stdout.contains("skipped"), "\(result.stdout)")
    #expect(result.stdout.contains("\(manifest):1:1: error: missing key 'steps'"))
    #expect(result.stdout.contains("unknown key 'Steps'. Did you mean 'steps'?"))
    #expect(result.stdout.hasSuffix("in 2 manifests; 2 not valid.\n"), "\(result.stdout)")
  }

  @Test func validatesEveryShippedManifest() async throws {
    let root = Orchestrate.packageRoot.appendingPathComponent("manifests")
    // Manifests are the JSON files with steps; the gates' data files and the schema are not.
    let manifests = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { path in
      guard path.hasSuffix(".json"),
        let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path)
      else { return false }
      return (try? JSONParser.parse(Array(data)).root["steps"]) != nil
    }.map { "manifests/\($0)" }
    #expect(manifests.count >= 5)
    let result = try await Orchestrate.run(["validate"] + manifests)
    #expect(result.status == 0, "\(result.stdout)")
  }
}
