import Foundation
import LaunchJSON
import Synchronization
import Testing

@testable import LaunchOrchestrator

@Suite("Step parameters", .timeLimit(.minutes(10)))
struct StepParametersTests {
  @Test func describesEachDeclaredParameterWithItsTypeDefaultAndWhetherItIsRequired() throws {
    let plugin = try #require(PluginRegistry.fetchKinds.descriptor(for: "fetch"))
    #expect(
      plugin.parameters.map { "\($0.name) \($0.type) \($0.isRequired) \($0.defaultValue ?? "-")" }
        == [
          "source path true -",
          "pages integer 1...100 false 10",
          "skip integer >= 0 false 0",
          "order newest|oldest false newest",
          "timeout duration false 2s",
          "ratio number false 0.5",
          "dryRun boolean false false",
          "tags [string] false -",
          "note string false -",
          "from-cache boolean false true unless dryRun",
          "mode fast|safe false -",
        ])
    #expect(plugin.parameters.first?.summary == "Where to fetch from.")
  }

  @Test func theSchemaDescribesTheDeclaredParametersAsAClosedObject() throws {
    let schema = ManifestSchema.json(for: .fetchKinds)
    let params = try #require(
      schema.value(at: JSONPath.root.appending("$defs").appending("params.fetch")))
    #expect(params.value(at: .root.appending("required"))?.elements?.count == 1)
    #expect(params.value(at: .root.appending("required").appending(0))?.stringValue == "source")
    #expect(params.value(at: .root.appending("additionalProperties"))?.kind == .bool(false))
    let pages = try #require(params.value(at: .root.appending("properties").appending("pages")))
    // `null` leaves out a parameter that is not required.
    #expect(pages.value(at: .root.appending("type")) == ["integer", "null"])
    #expect(pages.value(at: .root.appending("minimum"))?.kind == .number(1))
    #expect(pages.value(at: .root.appending("maximum"))?.kind == .number(100))
    #expect(pages.value(at: .root.appending("default"))?.kind == .number(10))
    let order = try #require(params.value(at: .root.appending("properties").appending("order")))
    #expect(
      order.value(at: .root.appending("enum"))?.elements?.compactMap(\.stringValue) == [
        "newest", "oldest",
      ])
    #expect(order.value(at: .root.appending("default"))?.stringValue == "newest")
  }

  @Test func decodesGivenValuesIntoTheirPropertiesAndKeepsTheDefaultsOfTheOthers() throws {
    let plan = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "all", "plugin": "fetch", "params": { "source": "a.json", "pages": 3, "skip": 2,
          "order": "oldest", "timeout": "250ms", "ratio": 2, "dryRun": true, "tags": ["x", "y"],
          "note": "n", "from-cache": false, "mode": "safe" } },
        { "id": "few", "plugin": "fetch", "params": { "source": "b.json", "pages": null } }
      ] }
      """, registry: .fetchKinds)
    #expect(plan.steps.count == 2)
    #expect(
      FetchStep.made.withLock { $0 } == [
        "a.json 3 2 oldest 0.25 2.0 true [\"x\", \"y\"] n false safe",
        "b.json 10 0 newest 2.0 0.5 false nil nil nil nil",
      ])
  }

  @Test func rejectsValuesOutsideTheDeclarationNamingTheParameterAlongWithUnknownKeys() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "fetch", "params": { "source": "s", "pages": 0, "colour": 1 } },
            { "id": "b", "plugin": "fetch", "params": { "source": "s", "skip": -1 } },
            { "id": "c", "plugin": "fetch", "params": { "source": "s", "order": "newset" } },
            { "id": "d", "plugin": "fetch", "params": { "source": "s", "mode": "slow" } },
            { "id": "e", "plugin": "fetch", "params": { "source": "s", "order": 1 } },
            { "id": "f", "plugin": "fetch", "params": { "sorce": "s" } },
            { "id": "g", "plugin": "fetch", "params": { "source": "s", "timeout": "soon" } }
          ] }
          """, registry: .fetchKinds)
        == [
          "2:71: error: step 'a' (steps[0].params.pages): 'pages' must be from 1 to 100, not 0.",
          "2:74: error: step 'a' (steps[0].params.colour): unknown parameter 'colour' for 'fetch'.",
          "3:70: error: step 'b' (steps[1].params.skip): 'skip' must be 0 or more, not -1.",
          "4:71: error: step 'c' (steps[2].params.order): unknown order 'newset'. Did you mean 'newest'? Use one of: newest, oldest.",
          "5:70: error: step 'd' (steps[3].params.mode): unknown mode 'slow'. Use one of: fast, safe.",
          "6:71: error: step 'e' (steps[4].params.order): expected a string, found a number.",
          "7:47: error: step 'f' (steps[5].params.sorce): unknown parameter 'sorce' for 'fetch'. Did you mean 'source'?",
          "8:73: error: step 'g' (steps[6].params.timeout): 'soon' is not a duration; write it like \"250ms\", \"2s\", \"1.5m\" or \"24h\".",
        ])
  }

  /// A duration parameter is told as the manifest's own durations are: the forms it takes for
  /// another type (a string "2s" is the usual one, not only a number), the limit for a long one.
  @Test func aDurationParameterNamesItsFormsAndItsLimit() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "fetch", "params": { "source": "s", "timeout": true } },
            { "id": "b", "plugin": "fetch", "params": { "source": "s", "timeout": "5000000000000s" } }
          ] }
          """, registry: .fetchKinds)
        == [
          "2:73: error: step 'a' (steps[0].params.timeout): expected a duration like \"2s\" or a number of seconds, found a boolean.",
          "3:73: error: step 'b' (steps[1].params.timeout): '5000000000000s' is too long: a duration must be less than 3200000000 seconds (about a century).",
        ])
  }

  @Test func readsTheDeclarationsOnceForATypeNotOncePerStep() throws {
    let steps = (0..<50).map {
      #"{ "id": "s\#($0)", "plugin": "count", "params": { "size": \#($0) } }"#
    }
    var registry = PluginRegistry()
    registry.register(CountedStep.self)
    let made = CountedStep.Parameters.made.load(ordering: .relaxed)
    _ = try loadPlan(
      #"{ "version": 1, "steps": [\#(steps.joined(separator: ","))] }"#, registry: registry)
    _ = try loadPlan(
      #"{ "version": 1, "steps": [\#(steps.joined(separator: ","))] }"#, registry: registry)
    // Registering reads nothing (a launch registers every kind before its first step); the
    // first step of the kind reads the declarations (one instance); each step then makes
    // one, nothing more.
    #expect(made == 0)
    #expect(CountedStep.Parameters.made.load(ordering: .relaxed) == 1 + 2 * 50)
  }

  @Test func describesNonEmptyStringsPathsAndOptionalBoundsAsPluginsShowsThem() throws {
    let plugin = try #require(PluginRegistry.checkedKinds.descriptor(for: "checked"))
    #expect(
      plugin.parameters.map { "\($0.name) \($0.type) \($0.isRequired) \($0.defaultValue ?? "-")" }
        == [
          "label non-empty string true -",
          "folder path false out",
          "route non-empty string false -",
          "cap integer >= 0 false -",
          "percent integer 1...100 false -",
          "code string false 1",
          "retry boolean false true unless cap is 0",
          "wait duration false 250ms",
          "tags [string] false [\"a\", \"b\"]",
          "keys non-empty [string] false -",
        ])
  }

  @Test func theSchemaGivesNonEmptyStringsAMinimumLengthAndEachDefaultInItsOwnType() throws {
    let schema = ManifestSchema.json(for: .checkedKinds)
    let properties = try #require(
      schema.value(
        at: JSONPath.root.appending("$defs").appending("params.checked").appending("properties")))
    func property(_ name: String, _ key: String) -> JSONValue? {
      properties.value(at: .root.appending(name).appending(key))
    }
    for name in ["label", "folder", "route"] {
      // `null` leaves out a parameter that is not required; a required one needs a value.
      #expect(
        property(name, "type") == (name == "label" ? "string" : ["string", "null"]), "\(name)")
      #expect(property(name, "minLength")?.numberText == "1", "\(name)")
    }
    #expect(property("code", "minLength") == nil)
    #expect(property("folder", "default")?.kind == .string("out"))
    // A string default that reads like a number stays a string; a Bool default described in
    // words is no JSON value at all, so the schema gives none.
    #expect(property("code", "default")?.kind == .string("1"))
    #expect(property("retry", "type") == ["boolean", "null"])
    #expect(property("retry", "default") == nil)
    #expect(property("wait", "default")?.kind == .string("250ms"))
    #expect(property("tags", "default") == ["a", "b"])
    #expect(property("tags", "minItems") == nil)
    #expect(property("keys", "minItems")?.numberText == "1")
    #expect(property("cap", "minimum")?.numberText == "0")
    #expect(property("cap", "maximum") == nil)
    #expect(property("cap", "default") == nil)
    #expect(property("percent", "minimum")?.numberText == "1")
    #expect(property("percent", "maximum")?.numberText == "100")
    let required = schema.value(
      at: JSONPath.root.appending("$defs").appending("params.checked").appending("required"))
    #expect(required == ["label"])
  }

  @Test func rejectsAnEmptyStringOrPathNamingTheParameterAndWhatToWriteInstead() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "checked", "params": { "label": "" } },
            { "id": "b", "plugin": "checked", "params": { "label": "x", "folder": "" } },
            { "id": "c", "plugin": "checked", "params": { "label": "x", "route": "" } },
            { "id": "d", "plugin": "checked", "params": { "label": "x", "code": "" } },
            { "id": "e", "plugin": "checked", "params": { "label": "x", "keys": [] } },
            { "id": "f", "plugin": "checked", "params": { "label": "x", "tags": [], "keys": [""] } }
          ] }
          """, registry: .checkedKinds)
        == [
          "2:58: error: step 'a' (steps[0].params.label): 'label' cannot be empty.",
          "3:73: error: step 'b' (steps[1].params.folder): 'folder' cannot be empty; leave it out for 'out'.",
          "4:72: error: step 'c' (steps[2].params.route): 'route' cannot be empty; leave it out instead.",
          "6:71: error: step 'e' (steps[4].params.keys): 'keys' cannot be empty; leave it out instead.",
        ])
  }

  @Test func boundsAnOptionalWholeNumberAndLeavesItNilWhenLeftOut() throws {
    _ = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "given", "plugin": "checked", "params": { "label": "given", "cap": 0, "percent": 100 } },
        { "id": "left", "plugin": "checked", "params": { "label": "left", "route": "home" } }
      ] }
      """, registry: .checkedKinds)
    // Other tests make steps of this kind at the same time: only this test's labels count.
    let made = CheckedStep.made.withLock { $0 }.filter {
      $0.hasPrefix("given ") || $0.hasPrefix("left ")
    }
    #expect(made == ["given 0 100 nil", "left nil nil home"])
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "checked", "params": { "label": "x", "cap": -1 } },
            { "id": "b", "plugin": "checked", "params": { "label": "x", "percent": 101 } }
          ] }
          """, registry: .checkedKinds)
        == [
          "2:70: error: step 'a' (steps[0].params.cap): 'cap' must be 0 or more, not -1.",
          "3:74: error: step 'b' (steps[1].params.percent): 'percent' must be from 1 to 100, not 101.",
        ])
  }

  @Test func quotesANumberOutsideItsBoundsAsTheManifestWroteItHoweverLarge() {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "fetch", "params": { "source": "s", "pages": 99999999999999999999 } },
            { "id": "b", "plugin": "fetch", "params": { "source": "s", "pages": 1e3 } },
            { "id": "c", "plugin": "fetch", "params": { "source": "s", "skip": -1e30 } },
            { "id": "d", "plugin": "fetch", "params": { "source": "s", "pages": 2.5 } },
            { "id": "e", "plugin": "fetch", "params": { "source": "s", "timeout": -1 } },
            { "id": "f", "plugin": "fetch", "params": { "source": "s", "timeout": 1e10 } },
            { "id": "g", "plugin": "checked", "params": { "label": "x", "percent": -99999999999999999999 } }
          ] }
          """, registry: .fetchKinds.adding(CheckedStep.self))
        == [
          "2:71: error: step 'a' (steps[0].params.pages): 'pages' must be from 1 to 100, not 99999999999999999999.",
          "3:71: error: step 'b' (steps[1].params.pages): 'pages' must be from 1 to 100, not 1e3.",
          "4:70: error: step 'c' (steps[2].params.skip): 'skip' must be 0 or more, not -1e30.",
          "5:71: error: step 'd' (steps[3].params.pages): expected a whole number, found 2.5.",
          "6:73: error: step 'e' (steps[4].params.timeout): a duration cannot be negative, found -1.",
          "7:73: error: step 'f' (steps[5].params.timeout): a duration must be less than 3200000000 seconds (about a century), found 1e10.",
          "8:74: error: step 'g' (steps[6].params.percent): 'percent' must be from 1 to 100, not -99999999999999999999.",
        ])
  }

  @Test func parametersMadeInCodeStartAtTheirDefaults() {
    var parameters = FetchStep.Parameters()
    #expect(parameters.pages == 10)
    #expect(parameters.tags == nil)
    parameters.source = "code.json"
    #expect(parameters.source == "code.json")
  }

  @Test func describesEveryIntegerAndFloatingPointTypeAndArraysByTheirElements() throws {
    let plugin = try #require(PluginRegistry.widerKinds.descriptor(for: "wider"))
    #expect(
      plugin.parameters.map { "\($0.name) \($0.type) \($0.defaultValue ?? "-")" } == [
        "small integer 0...255 7", "level integer 1...255 -", "large integer 12",
        "unsigned integer >= 0 -",
        "share number 0.25", "sizes [integer] [1, 2]", "waits [duration] [\"1s\", \"250ms\"]",
        "orders [newest|oldest] -",
      ])
    let schema = ManifestSchema.json(for: .widerKinds)
    let properties = try #require(
      schema.value(
        at: JSONPath.root.appending("$defs").appending("params.wider").appending("properties")))
    #expect(properties["small"]?["maximum"]?.kind == .number(255))
    #expect(properties["sizes"]?["items"]?["type"]?.stringValue == "integer")
    #expect(properties["waits"]?["items"]?["$ref"]?.stringValue == "#/$defs/duration")
    #expect(
      properties["waits"]?["default"]?.elements?.compactMap(\.stringValue) == ["1s", "250ms"])
  }

  @Test func decodesDurationsInAnArrayAsManifestsWriteThem() throws {
    _ = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "w", "plugin": "wider", "params": { "small": 200, "waits": ["2s", 0.5, "1.5m"],
          "orders": ["oldest"] } }
      ] }
      """, registry: .widerKinds)
    #expect(WiderStep.made.withLock { $0 } == ["200 12 2.0 0.5 90.0 oldest"])
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "w", "plugin": "wider", "params": { "small": 256 } }
          ] }
          """, registry: .widerKinds
      ).contains { $0.contains("small") })
  }

  /// A parameter may require or exclude others, given meaning any value but `null` (which
  /// leaves it out) and `false` (which leaves it off): the declaration is checked when params
  /// are decoded, said by the schema, and each broken rule reported at its parameter.
  @Test func aParameterThatRequiresOrExcludesAnotherIsCheckedAndInTheSchema() throws {
    #expect(
      diagnostics(
        of: """
          { "version": 1, "steps": [
            { "id": "a", "plugin": "paired", "params": { "script": "a.sql" } },
            { "id": "b", "plugin": "paired", "params": { "script": "a.sql", "table": null } },
            { "id": "c", "plugin": "paired", "params": { "table": "t", "create": true, "readOnly": true } },
            { "id": "d", "plugin": "paired", "params": { "script": "a.sql", "table": "t" } },
            { "id": "e", "plugin": "paired", "params": { "readOnly": true, "create": false } },
            { "id": "f", "plugin": "paired", "params": { "readOnly": false, "create": true } },
            { "id": "g", "plugin": "paired", "params": { "script": null, "create": null } }
          ] }
          """, registry: PluginRegistry().adding(PairedStep.self))
        == [
          "2:58: error: step 'a' (steps[0].params.script): 'script' needs 'table' too; give 'table', or remove 'script'.",
          "3:58: error: step 'b' (steps[1].params.script): 'script' needs 'table' too; give 'table', or remove 'script'.",
          "4:57: error: step 'c' (steps[2].params.table): 'table' needs 'script' too; give 'script', or remove 'table'.",
          "4:72: error: step 'c' (steps[2].params.create): 'create' cannot be used with 'readOnly'; remove one of them.",
        ])
    let plugin = try #require(PluginRegistry().adding(PairedStep.self).descriptor(for: "paired"))
    #expect(
      plugin.parameters.map { "\($0.name) \($0.requires) \($0.excludes)" } == [
        "script [\"table\"] []", "table [\"script\"] []", "readOnly [] []",
        "create [] [\"readOnly\"]",
      ])
    let schema = ManifestSchema.json(for: PluginRegistry().adding(PairedStep.self))
    let rules = try #require(
      schema.value(
        at: JSONPath.root.appending("$defs").appending("params.paired").appending("allOf"))
    )
    #expect(
      rules.elements?.compactMap { $0["description"]?.stringValue } == [
        "'script' needs 'table' too; give 'table', or remove 'script'.",
        "'table' needs 'script' too; give 'script', or remove 'table'.",
        "'create' cannot be used with 'readOnly'; remove one of them.",
      ])
  }

  /// Keys are matched byte for byte: "apiKey" written with U+212A KELVIN SIGN, which `String ==`
  /// equates with "K", is another key, named as unknown, and the parameter is missing.
  @Test func aKeyEqualOnlyAfterUnicodeNormalisationIsUnknownNotTheParameter() {
    var registry = PluginRegistry()
    registry.register(KeyedStep.self)
    let found = diagnostics(
      of: """
        { "version": 1, "steps": [ { "id": "a", "plugin": "keyed", "params": { "api\u{212A}ey": "x" } } ] }
        """, registry: registry)
    #expect(
      found == [
        "1:70: error: step 'a' (steps[0].params): 'keyed' needs the parameter 'apiKey'.",
        "1:72: error: step 'a' (steps[0].params.api\u{212A}ey): unknown parameter 'api\u{212A}ey' for 'keyed'. It looks like 'apiKey' but is written with other characters (U+212A); type it again.",
      ])
  }

  /// A decomposed `é` (e and U+0301) where the name has the composed one: the accent is named,
  /// padded to four digits, and not the `e`.
  @Test func aDecomposedKeyNamesItsCombiningMarkOnly() {
    #expect(
      Suggestions.didYouMean("caf\u{65}\u{301}", suggesting: "caf\u{E9}")
        == " It looks like 'caf\u{E9}' but is written with other characters (U+0301); type it again."
    )
    #expect(Suggestions.didYouMean("cafe", suggesting: "caf\u{E9}") == " Did you mean 'caf\u{E9}'?")
  }
}

/// A plugin with a parameter whose name holds a `K`.
private struct KeyedStep: StepPlugin {
  static let kind = "keyed"

  struct Parameters: StepParameters {
    @Parameter("The key.") var apiKey: String
  }

  init(parameters: Parameters) {}

  func run(_ context: StepContext) async throws {}
}

/// A plugin whose parameters require and exclude each other.
private struct PairedStep: StepPlugin {
  static let kind = "paired"

  struct Parameters: StepParameters {
    @Parameter("A script.", isPath: true, requires: ["table"]) var script: String?
    @Parameter("Its table.", requires: ["script"]) var table: String?
    @Parameter("Open for reading only.") var readOnly = false
    @Parameter("Create it.", excludes: ["readOnly"]) var create: Bool?
  }

  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

/// A plugin with parameter types beyond the common ones, recording its durations.
private struct WiderStep: StepPlugin {
  static let kind = "wider"
  static let made = Mutex<[String]>([])

  struct Parameters: StepParameters {
    @Parameter("A byte.") var small: UInt8 = 7
    @Parameter("A bounded byte.", in: 1...) var level: UInt8?
    @Parameter("A large count.") var large: Int64 = 12
    @Parameter("An unsigned count.") var unsigned: UInt?
    @Parameter("A share.") var share: Float = 0.25
    @Parameter("Sizes.") var sizes = [1, 2]
    @Parameter("Waits.") var waits = [Duration.seconds(1), .milliseconds(250)]
    @Parameter("Orders.") var orders: [FetchStep.Order]?
  }

  init(parameters: Parameters) {
    let fields =
      ["\(parameters.small)", "\(parameters.large)"] + parameters.waits.map { "\($0.seconds)" }
      + (parameters.orders ?? []).map(\.rawValue)
    Self.made.withLock { $0.append(fields.joined(separator: " ")) }
  }

  func run(_ context: StepContext) async throws {}
}

/// A plugin with one parameter of each kind, recording what it was made with.
private struct FetchStep: StepPlugin {
  static let kind = "fetch"
  static let made = Mutex<[String]>([])

  enum Order: String, CaseIterable, ParameterValue {
    case newest, oldest
  }

  struct Parameters: StepParameters {
    @Parameter("Where to fetch from.", isPath: true) var source: String
    @Parameter("Pages to fetch.", in: 1...100) var pages = 10
    /// Not a parameter: declarations around it keep their order.
    var fetchedAt = 0
    @Parameter("Items to skip.", in: 0...) var skip = 0
    @Parameter("Which items first.") var order = Order.newest
    @Parameter("How long to wait.") var timeout = Duration.seconds(2)
    @Parameter("A share.") var ratio = 0.5
    @Parameter("Only say what would be fetched.") var dryRun = false
    @Parameter("Labels to keep.") var tags: [String]?
    @Parameter("A note.") var note: String?
    @Parameter("Use the cache.", key: "from-cache", defaultDescription: "true unless dryRun")
    var fromCache: Bool?
    @Parameter("How to fetch.", oneOf: ["fast", "safe"]) var mode: String?
  }

  init(parameters: Parameters) {
    let fields: [String] = [
      parameters.source, "\(parameters.pages)", "\(parameters.skip)", parameters.order.rawValue,
      "\(parameters.timeout.seconds)", "\(parameters.ratio)", "\(parameters.dryRun)",
      parameters.tags.map { "\($0)" } ?? "nil", parameters.note ?? "nil",
      parameters.fromCache.map { "\($0)" } ?? "nil", parameters.mode ?? "nil",
    ]
    Self.made.withLock { $0.append(fields.joined(separator: " ")) }
  }

  func run(_ context: StepContext) async throws {}
}

/// A plugin with a declared check of each kind, recording what it was made with.
private struct CheckedStep: StepPlugin {
  static let kind = "checked"
  static let made = Mutex<[String]>([])

  struct Parameters: StepParameters {
    @Parameter("A label.", nonEmpty: true) var label: String
    @Parameter("Where to write.", isPath: true) var folder = "out"
    @Parameter("A route.", nonEmpty: true) var route: String?
    @Parameter("At most this many.", in: 0...) var cap: Int?
    @Parameter("A share.", in: 1...100) var percent: Int?
    @Parameter("A code.") var code = "1"
    @Parameter("Whether to retry.", defaultDescription: "true unless cap is 0") var retry: Bool?
    @Parameter("How long to wait.") var wait = Duration.milliseconds(250)
    @Parameter("Tags.") var tags = ["a", "b"]
    @Parameter("Keys to keep.", nonEmpty: true) var keys: [String]?
  }

  init(parameters: Parameters) {
    let fields = [
      parameters.label, parameters.cap.map { "\($0)" } ?? "nil",
      parameters.percent.map { "\($0)" } ?? "nil", parameters.route ?? "nil",
    ]
    Self.made.withLock { $0.append(fields.joined(separator: " ")) }
  }

  func run(_ context: StepContext) async throws {}
}

/// Counts how often its parameters are made.
private struct CountedStep: StepPlugin {
  static let kind = "count"

  struct Parameters: StepParameters {
    static let made = Atomic<Int>(0)
    @Parameter("A number.") var size = 0

    init() {
      Self.made.wrappingAdd(1, ordering: .relaxed)
    }
  }

  init(parameters: Parameters) {}
  func run(_ context: StepContext) async throws {}
}

extension PluginRegistry {
  fileprivate static var fetchKinds: PluginRegistry {
    var registry = PluginRegistry()
    registry.register(FetchStep.self)
    return registry
  }

  fileprivate static var checkedKinds: PluginRegistry { PluginRegistry().adding(CheckedStep.self) }

  fileprivate static var widerKinds: PluginRegistry { PluginRegistry().adding(WiderStep.self) }

  fileprivate func adding<Plugin: StepPlugin>(_ plugin: Plugin.Type) -> PluginRegistry {
    var registry = self
    registry.register(plugin)
    return registry
  }
}

/// Foundation's values a manifest writes as strings and numbers are shown and checked as
/// such: the schema took them for objects, and a schema-aware editor refused the manifests
/// the decoder reads.
@Suite("Foundation parameter types")
struct FoundationParameterTypesTests {
  private struct Parameters: StepParameters {
    @Parameter("When.") var when: Date?
    @Parameter("Where.") var link: URL?
    @Parameter("What.") var blob: Data?
    @Parameter("How much.") var amount: Decimal?
    @Parameter("Which.") var id: UUID?
    @Parameter("Since.") var since = Date(timeIntervalSince1970: 0)
  }

  private struct FoundationStep: StepPlugin {
    static let kind = "foundation"
    static let made = Mutex<[String]>([])
    init(parameters: Parameters) {
      let text = [
        parameters.when.map { "\($0.timeIntervalSince1970)" }, parameters.link?.absoluteString,
        parameters.blob.map { String(decoding: $0, as: UTF8.self) }, parameters.amount?.description,
        parameters.id?.uuidString,
      ].map { $0 ?? "-" }.joined(separator: " ")
      Self.made.withLock { $0.append(text) }
    }
    func run(_ context: StepContext) async throws {}
  }

  @Test func areShownAndCheckedAsTheStringsAndNumbersTheyAreWrittenAs() throws {
    var registry = PluginRegistry.testKinds
    registry.register(FoundationStep.self)
    let plugin = try #require(registry.descriptor(for: "foundation"))
    #expect(
      plugin.parameters.map { "\($0.name) \($0.type) \($0.defaultValue ?? "-")" } == [
        "when date (ISO 8601, or seconds since 1970) -", "link string -", "blob base64 string -",
        "amount number -", "id string -",
        "since date (ISO 8601, or seconds since 1970) 1970-01-01T00:00:00Z",
      ])
    let schema = ManifestSchema.json(for: registry)
    let properties = try #require(
      schema.value(
        at: JSONPath.root.appending("$defs").appending("params.foundation").appending("properties"))
    )
    // Each optional, so `null` too.
    #expect(properties["when"]?["type"] == ["string", "number", "null"])
    #expect(properties["link"]?["type"] == ["string", "null"])
    #expect(properties["blob"]?["type"] == ["string", "null"])
    #expect(properties["blob"]?["contentEncoding"]?.stringValue == "base64")
    #expect(properties["amount"]?["type"] == ["number", "null"])
    #expect(properties["id"]?["type"] == ["string", "null"])
    #expect(properties["since"]?["default"]?.stringValue == "1970-01-01T00:00:00Z")

    _ = try loadPlan(
      """
      { "version": 1, "steps": [
        { "id": "f", "plugin": "foundation", "params": { "when": "2026-11-23T13:45:00Z",
          "link": "https://example.com/a", "blob": "aGVsbG8=", "amount": 123.4,
          "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F" } }
      ] }
      """, registry: registry)
    #expect(
      FoundationStep.made.withLock { $0 }.last
        == "1795441500.0 https://example.com/a hello 123.4 E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
  }
}
