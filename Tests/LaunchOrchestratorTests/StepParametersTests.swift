import Foundation
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
    #expect(pages.value(at: .root.appending("type"))?.stringValue == "integer")
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
    // Registering read the declarations (one instance); each step then makes one, nothing more.
    #expect(made == 1)
    #expect(CountedStep.Parameters.made.load(ordering: .relaxed) == 1 + 2 * 50)
  }

  @Test func parametersMadeInCodeStartAtTheirDefaults() {
    var parameters = FetchStep.Parameters()
    #expect(parameters.pages == 10)
    #expect(parameters.tags == nil)
    parameters.source = "code.json"
    #expect(parameters.source == "code.json")
  }
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
    @Parameter("Items to skip.", minimum: 0) var skip = 0
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
}
