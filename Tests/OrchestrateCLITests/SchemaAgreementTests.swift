import Foundation
import Testing

/// `orchestrate schema` and `orchestrate validate` agree: an editor that checks a manifest
/// against the schema accepts what `validate` accepts and refuses what it refuses. Each
/// manifest below is checked both ways, with Python's jsonschema (as editors would) and by the
/// binary; those refused are refused for the reason given.
///
/// What no JSON Schema can say is left out: ids that must be unique or name another step, a
/// cycle, a milestone that must exist, the rules between a step's params and its fallback's
/// merged over them, files that must exist.
@Suite("The schema and validate agree", .timeLimit(.minutes(10)))
struct SchemaAgreementTests {
  /// A manifest, and why `validate` refuses it (`nil`: it accepts it).
  struct Case: Sendable {
    let name: String
    let manifest: String
    let refusal: String?
  }

  /// A store step other steps depend on, with the app's own migrations.
  private static let store =
    #"{ "id": "store", "plugin": "store.init", "params": { "path": "s.sqlite", "migrations": "migrations" } }"#

  /// A manifest of `steps`, with `top` (keys of the manifest, each followed by a comma).
  private static func manifest(_ steps: String..., top: String = "") -> String {
    #"{ "version": 1, \#(top) "steps": [ \#(steps.joined(separator: ", ")) ] }"#
  }

  /// A `simulate` step `a` with `more` members.
  private static func step(_ more: String) -> String {
    #"{ "id": "a", "plugin": "simulate"\#(more.isEmpty ? "" : ", " + more) }"#
  }

  /// A `music.page` step `page` that needs the store, with `more` members.
  private static func page(_ more: String) -> String {
    #"{ "id": "page", "plugin": "music.page", "dependsOn": ["store"], \#(more) }"#
  }

  /// A `sample.data` step that needs the store, with `params`.
  private static func sample(_ params: String) -> String {
    #"{ "id": "sample", "plugin": "sample.data", "dependsOn": ["store"], "params": \#(params) }"#
  }

  /// A `store.init` step `s` with `params`.
  private static func storeInit(_ params: String) -> String {
    #"{ "id": "s", "plugin": "store.init", "params": \#(params) }"#
  }

  static let cases: [Case] = [
    // Timeouts and cache ages above zero.
    Case(
      name: "a timeout of 0s", manifest: manifest(step(#""timeout": "0s""#)),
      refusal: "a 'timeout' of 0"),
    Case(
      name: "a timeout of 0", manifest: manifest(step(#""timeout": 0"#)),
      refusal: "a 'timeout' of 0"),
    Case(
      name: "a timeout that rounds to 0", manifest: manifest(step(#""timeout": "0.0000000004s""#)),
      refusal: "a 'timeout' of 0"),
    Case(
      name: "a timeout of half a nanosecond",
      manifest: manifest(step(#""timeout": "0.0000000005s""#)), refusal: nil),
    Case(
      name: "a default timeout of 0ms",
      manifest: manifest(step(""), top: #""defaults": { "timeout": "0ms" },"#),
      refusal: "a 'timeout' of 0"),
    Case(
      name: "a cache's maxAge of 0s",
      manifest: manifest(store, page(#""cache": { "maxAge": "0s" }"#)),
      refusal: "a 'maxAge' of 0"),
    Case(
      name: "a cache's maxAge of 7d",
      manifest: manifest(store, page(#""cache": { "maxAge": "7d" }"#)), refusal: nil),
    // Durations under about a century, in every unit and as numbers.
    Case(
      name: "a delay of 3200000000s", manifest: manifest(step(#""delay": "3200000000s""#)),
      refusal: "too long"),
    Case(
      name: "a delay of 53333334m", manifest: manifest(step(#""delay": "53333334m""#)),
      refusal: "too long"),
    Case(
      name: "a delay of 37037.0371d", manifest: manifest(step(#""delay": "37037.0371d""#)),
      refusal: "too long"),
    Case(
      name: "a delay of 3.2e9 seconds", manifest: manifest(step(#""delay": 3.2e9"#)),
      refusal: "less than 3200000000 seconds"),
    Case(
      name: "a simulated duration of 40000d",
      manifest: manifest(step(#""params": { "duration": "40000d" }"#)),
      refusal: "too long"),
    Case(
      name: "delays just under a century",
      manifest: manifest(
        step(#""delay": "3199999999.5s""#),
        #"{ "id": "b", "plugin": "simulate", "delay": "53333333.3m" }"#,
        #"{ "id": "c", "plugin": "simulate", "delay": "37037.037 d" }"#),
      refusal: nil),
    // maxConcurrency within 32 bits; `null` leaves it out.
    Case(
      name: "a maxConcurrency beyond 32 bits",
      manifest: manifest(step(""), top: #""maxConcurrency": 2147483648,"#),
      refusal: "'maxConcurrency' must be a whole number from 1 to 2147483647"),
    Case(
      name: "the largest maxConcurrency",
      manifest: manifest(step(""), top: #""maxConcurrency": 2147483647,"#), refusal: nil),
    Case(
      name: "a maxConcurrency of null",
      manifest: manifest(step(""), top: #""maxConcurrency": null,"#), refusal: nil),
    // Names: signals declared once and never empty, milestones and step ids never empty.
    Case(
      name: "a signal declared twice",
      manifest: manifest(step(""), top: #""signals": ["consent", "consent"],"#),
      refusal: "the signal 'consent' is declared twice"),
    Case(
      name: "an empty signal name", manifest: manifest(step(""), top: #""signals": [""],"#),
      refusal: "a signal name cannot be empty"),
    Case(
      name: "an empty signal waited for",
      manifest: manifest(step(#""waitFor": [""]"#), top: #""signals": ["consent"],"#),
      refusal: "a signal name cannot be empty"),
    Case(
      name: "a signal waited for twice",
      manifest: manifest(
        step(#""waitFor": ["consent", "consent"]"#), top: #""signals": ["consent"],"#),
      refusal: nil),
    Case(
      name: "an empty milestone name",
      manifest: manifest(step(""), top: #""milestones": { "": ["a"] },"#),
      refusal: "a milestone name cannot be empty"),
    Case(
      name: "an empty step id in a milestone",
      manifest: manifest(step(""), top: #""milestones": { "ready": [""] },"#),
      refusal: "holds an empty step id"),
    Case(
      name: "an empty step id in dependsOn", manifest: manifest(step(#""dependsOn": [""]"#)),
      refusal: "holds an empty step id"),
    Case(
      name: "an empty step id in after", manifest: manifest(step(#""after": [""]"#)),
      refusal: "holds an empty step id"),
    // Launch reasons: at least one, none empty.
    Case(
      name: "no launch reason", manifest: manifest(step(#""when": { "reason": [] }"#)),
      refusal: "lists no launch reason"),
    Case(
      name: "an empty launch reason", manifest: manifest(step(#""when": { "reason": [""] }"#)),
      refusal: "a launch reason cannot be empty"),
    // The app's version.
    Case(
      name: "an app version 'x'", manifest: manifest(step(""), top: #""app": { "version": "x" },"#),
      refusal: "is not a version"),
    Case(
      name: "an app version '1..0'",
      manifest: manifest(step(""), top: #""app": { "version": "1..0" },"#),
      refusal: "is not a version"),
    Case(
      name: "an app version '1.2.0-beta.2'",
      manifest: manifest(step(""), top: #""app": { "version": "1.2.0-beta.2" },"#),
      refusal: nil),
    // A fallback's params, typed as its kind's.
    Case(
      name: "a fallback param its kind does not have",
      manifest: manifest(step(#""fallback": { "params": { "durration": 1 } }"#)),
      refusal: "unknown parameter 'durration' for 'simulate'"),
    Case(
      name: "a fallback param of the wrong type",
      manifest: manifest(step(#""fallback": { "params": { "duration": true } }"#)),
      refusal: "expected a duration"),
    Case(
      name: "fallback params merged over the step's",
      manifest: manifest(step(#""fallback": { "params": { "duration": "1s", "route": null } }"#)),
      refusal: nil),
    Case(
      name: "a required param left out of another kind's fallback",
      manifest: manifest(store, page(#""fallback": { "plugin": "music.search" }"#)),
      refusal: "'music.search' needs the parameter 'term'"),
    Case(
      name: "a fallback of another kind with its own params",
      manifest: manifest(
        store, page(#""fallback": { "plugin": "music.search", "params": { "term": "a" } }"#)),
      refusal: nil),
    Case(
      name: "a fallback of a kind that outputs another type",
      manifest: manifest(store, page(#""fallback": { "plugin": "books.page" }"#)),
      refusal: "both must output the same type"),
    // What a step cannot have together.
    Case(
      name: "an on-demand step with 'once'",
      manifest: manifest(step(#""trigger": "onDemand", "once": "perInstall""#)),
      refusal: "an on-demand step cannot have 'once'"),
    Case(
      name: "an on-demand step with 'when'",
      manifest: manifest(step(#""trigger": "onDemand", "when": { "firstLaunch": true }"#)),
      refusal: "an on-demand step cannot have 'when'"),
    Case(
      name: "an on-demand step with a cache",
      manifest: manifest(store, page(#""trigger": "onDemand", "cache": {}"#)),
      refusal: "an on-demand step cannot have a 'cache'"),
    Case(
      name: "a run-once step with a cache",
      manifest: manifest(store, page(#""once": "perInstall", "cache": {}"#)),
      refusal: "a run-once step cannot have a 'cache'"),
    Case(
      name: "an on-demand step", manifest: manifest(step(#""trigger": "onDemand""#)), refusal: nil),
    Case(
      name: "a run-once step with a condition",
      manifest: manifest(step(#""once": "perVersion", "when": { "firstLaunch": false }"#)),
      refusal: nil),
    // Params that require or exclude each other.
    Case(
      name: "a built-in schema and migrations",
      manifest: manifest(
        storeInit(#"{ "path": "s.sqlite", "schema": "books", "migrations": "migrations" }"#)),
      refusal: "'migrations' cannot be used with 'schema'"),
    Case(
      name: "migrations and a schema of null",
      manifest: manifest(
        storeInit(#"{ "path": "s.sqlite", "schema": null, "migrations": "migrations" }"#)),
      refusal: nil),
    Case(
      name: "a read-only store to create",
      manifest: manifest(storeInit(#"{ "path": "s.sqlite", "readOnly": true, "create": true }"#)),
      refusal: "'create' cannot be used with 'readOnly'"),
    Case(
      name: "a read-only store not to create",
      manifest: manifest(storeInit(#"{ "path": "s.sqlite", "readOnly": true, "create": false }"#)),
      refusal: nil),
    Case(
      name: "a sample file without its table",
      manifest: manifest(store, sample(#"{ "file": "sample.sql" }"#)),
      refusal: "'file' needs 'whenEmpty'"),
    Case(
      name: "a sample table without its file",
      manifest: manifest(store, sample(#"{ "whenEmpty": "t" }"#)),
      refusal: "'whenEmpty' needs 'file'"),
    Case(
      name: "a sample file with a table of null",
      manifest: manifest(store, sample(#"{ "file": "sample.sql", "whenEmpty": null }"#)),
      refusal: "'file' needs 'whenEmpty'"),
    Case(
      name: "a sample file with its table",
      manifest: manifest(store, sample(#"{ "file": "sample.sql", "whenEmpty": "t" }"#)),
      refusal: nil),
    // `null` leaves an optional param out, and a step's params; a required one needs a value.
    Case(
      name: "an optional param of null", manifest: manifest(step(#""params": { "route": null }"#)),
      refusal: nil),
    Case(
      name: "a param with a default of null",
      manifest: manifest(step(#""params": { "duration": null }"#)), refusal: nil),
    Case(name: "params of null", manifest: manifest(step(#""params": null"#)), refusal: nil),
    Case(
      name: "a required param of null", manifest: manifest(storeInit(#"{ "path": null }"#)),
      refusal: "expected a string, found null"),
    Case(
      name: "no params for a kind with a required one",
      manifest: manifest(#"{ "id": "s", "plugin": "store.init" }"#),
      refusal: "'store.init' needs the parameter 'path'"),
    Case(
      name: "params of null for a kind with a required one",
      manifest: manifest(#"{ "id": "s", "plugin": "store.init", "params": null }"#),
      refusal: "'store.init' needs the parameter 'path'"),
  ]

  @Test func theSchemaAcceptsWhatValidateAcceptsAndRefusesTheRest() async throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appendingPathComponent("migrations"), withIntermediateDirectories: true)
    try folder.write("migrations/001_init.sql", "CREATE TABLE t (id INTEGER PRIMARY KEY);\n")
    try folder.write("sample.sql", "INSERT INTO t (id) VALUES (1);\n")
    let schema = try await Orchestrate.run(["schema"])
    #expect(schema.status == 0)
    let schemaFile = try folder.write("manifest.schema.json", schema.stdout)
    let files = try Self.cases.enumerated().map { index, item in
      try folder.write("case-\(index).json", item.manifest)
    }
    let script = """
      import json, sys, jsonschema
      schema = json.load(open(sys.argv[1]))
      jsonschema.Draft202012Validator.check_schema(schema)
      validator = jsonschema.Draft202012Validator(schema)
      for path in sys.argv[2:]:
          print("accepted" if validator.is_valid(json.load(open(path))) else "refused")
      """
    let (status, verdicts) = try await runTool(["python3", "-c", script, schemaFile] + files)
    #expect(status == 0, "python3 with jsonschema is needed (.ci/run installs it)")
    let schemaVerdicts = verdicts.split(separator: "\n").map(String.init)
    try #require(schemaVerdicts.count == Self.cases.count)
    for (index, item) in Self.cases.enumerated() {
      let validate = try await Orchestrate.run(["validate", files[index]])
      let errors = validate.stdout.split(separator: "\n").filter { $0.contains(": error: ") }
      if let refusal = item.refusal {
        #expect(validate.status == 65, "validate accepts \(item.name)")
        #expect(
          errors.contains { $0.contains(refusal) },
          "validate refuses \(item.name) for another reason: \(errors)")
        #expect(schemaVerdicts[index] == "refused", "the schema accepts \(item.name)")
      } else {
        #expect(validate.status == 0, "validate refuses \(item.name): \(errors)")
        #expect(schemaVerdicts[index] == "accepted", "the schema refuses \(item.name)")
      }
    }
  }
}
