import Foundation
import LaunchJSON

/// The step kinds a launch can use, by kind name.
///
/// ```swift
/// var registry = PluginRegistry()
/// registry.register(SimulateStep.self)
/// registry.register(kind: "notifications.setup") { context in try await setUpNotifications() }
/// ```
public struct PluginRegistry: Sendable {
  /// In the order they were first registered.
  private var registered: [PluginDescriptor] = []
  /// Positions in `registered` by kind; not a `[String: …]`, whose first use in a process
  /// searches the conformances for `String`'s `Hashable`, before a launch's first step.
  private var positions = NameIndex()

  /// Creates an empty registry.
  public init() {}

  /// Registers a plugin type under its ``StepPlugin/kind``, replacing any earlier one.
  public mutating func register<Plugin: StepPlugin>(_ plugin: Plugin.Type) {
    add(
      PluginDescriptor(
        kind: Plugin.kind, summary: Plugin.summary, inputs: Plugin.inputs,
        requirements: Plugin.requirements, isolation: Plugin.isolation
      ) {
        // `Plugin.Parameters` and `Plugin.Output` are looked up here, when a step of the kind
        // is prepared or the kind described, not at registration: the run-time lookup of an
        // associated type checks its conformances.
        KindTypes(parameters: Plugin.Parameters.self, output: Plugin.Output.self) {
          params, checksShippedFiles in
          let instance = try Plugin(parameters: params)
          if checksShippedFiles { try instance.checkShippedFiles() }
          return PreparedStep(isBlocking: instance.isBlocking) { context in
            try await instance.run(context)
          }
        }
      })
  }

  /// Registers several plugin types at once.
  public mutating func register(_ plugins: [any StepPlugin.Type]) {
    for plugin in plugins {
      // Opens the existential so the generic overload above does the work.
      func add<Plugin: StepPlugin>(_ type: Plugin.Type) { register(type) }
      add(plugin)
    }
  }

  /// Registers a one-off step kind that takes no parameters.
  public mutating func register<Output: Sendable>(
    kind: String, summary: String = "", inputs: [StepInput] = [],
    requirements: [StepRequirement] = [], isBlocking: Bool = false,
    run: @escaping @Sendable (StepContext) async throws -> Output
  ) {
    add(
      PluginDescriptor(kind: kind, summary: summary, inputs: inputs, requirements: requirements) {
        KindTypes(parameters: NoParameters.self, output: Output.self) { _, _ in
          PreparedStep(isBlocking: isBlocking, execute: run)
        }
      })
  }

  /// Registers a one-off step kind with typed parameters.
  public mutating func register<Parameters: StepParameters, Output: Sendable>(
    kind: String, parameters: Parameters.Type, summary: String = "", inputs: [StepInput] = [],
    requirements: [StepRequirement] = [], isBlocking: Bool = false,
    run: @escaping @Sendable (Parameters, StepContext) async throws -> Output
  ) {
    add(
      PluginDescriptor(kind: kind, summary: summary, inputs: inputs, requirements: requirements) {
        KindTypes(parameters: Parameters.self, output: Output.self) { params, _ in
          PreparedStep(isBlocking: isBlocking) { context in try await run(params, context) }
        }
      })
  }

  /// The plugin registered for a kind.
  package func descriptor(for kind: String) -> PluginDescriptor? {
    positions.index(of: kind).map { registered[$0] }
  }

  /// Every registered plugin, sorted by kind.
  package var descriptors: [PluginDescriptor] {
    registered.sorted { $0.kind < $1.kind }
  }

  private mutating func add(_ descriptor: PluginDescriptor) {
    if let existing = positions.insert(descriptor.kind, index: registered.count) {
      registered[existing] = descriptor
    } else {
      registered.append(descriptor)
    }
  }
}

/// What the registry knows about one step kind.
package struct PluginDescriptor: Sendable {
  /// The kind name.
  package let kind: String
  /// What the kind does.
  package let summary: String
  /// Its parameters, as the plugin's `Parameters` type declares them (read from the
  /// declarations the first time a descriptor of the type is asked).
  package var parameters: [ParameterDescription] { types.value.describeParameters() }
  /// Whether a relative path among its parameters may name a file shipped with the manifest,
  /// in the manifest's folder (its parameters read that folder), rather than in the data folder.
  package var readsManifestDirectory: Bool { types.value.readsManifestDirectory }
  /// Outputs of other steps it reads.
  package let inputs: [StepInput]
  /// Values it reads from the app's ``LaunchEnvironment``.
  package let requirements: [StepRequirement]
  /// Where its steps run, as the plugin declares it (``StepPlugin/isolation``).
  package let isolation: StepIsolation
  /// The identity of the type its steps output.
  package var outputType: ObjectIdentifier { types.value.outputType }
  /// The type its steps output, to tell what else it casts to (a protocol it conforms to, a
  /// superclass).
  package var outputMetatype: any Any.Type { types.value.output }
  /// The name of the type its steps output.
  package var outputTypeName: String { types.value.outputTypeName.value }
  /// Whether its steps hand anything to their dependents.
  package var hasOutput: Bool { types.value.hasOutput }
  /// Whether its output is `Codable`, so that a step of this kind can have a `cache`.
  package var isCacheable: Bool { outputCoder != nil }
  /// Saves and restores its output, when it is `Codable`.
  var outputCoder: OutputCoder? { types.value.outputCoder.value }

  // Registering a kind costs no reflection, no type name and no conformance lookup (each a
  // search through every conformance the process has loaded, the first time): a launch
  // builds its registry before its first step, and needs these only for the kinds its
  // manifest uses, for messages, `orchestrate plugins` and the schema.
  private let types: Lazy<KindTypes>

  init(
    kind: String, summary: String, inputs: [StepInput], requirements: [StepRequirement],
    isolation: StepIsolation = .default, types: @escaping @Sendable () -> KindTypes
  ) {
    self.kind = kind
    self.summary = summary
    self.inputs = inputs
    self.requirements = requirements
    self.isolation = isolation
    self.types = Lazy(types)
  }

  /// Its kind's types, worked out now if they were not yet: read once for the many steps of
  /// a kind a manifest holds, not through the lock for each.
  var kindTypes: KindTypes { types.value }

  /// Decodes `params` (from the manifest in `manifestDirectory`) with the kind's
  /// ``kindTypes``, already read, and a round to decode with that the caller keeps for many
  /// steps (the only reference to it), and makes a runnable step, or lists what is wrong with
  /// them (paths relative to `params`). With `checksShippedFiles`, the plugin also reads and
  /// checks every file it reads only when a launch needs it (``StepPlugin/checkShippedFiles()``).
  func prepare(
    params: JSONValue, manifestDirectory: URL?, checksShippedFiles: Bool, types: KindTypes,
    round: ParameterRound? = nil
  ) -> Result<PreparedStep, ParameterProblems> {
    let made: Result<PreparedStep, any Error>
    let unused: [JSONValueDecoder.UnusedKey]
    do {
      (made, unused) = try types.prepare(params, manifestDirectory, checksShippedFiles, round)
    } catch {
      return .failure(ParameterProblems(error: error, params: params, plugin: self))
    }
    if unused.isEmpty, case .success(var step) = made {
      step.requirements = requirements
      return .success(step)
    }
    var problems: [ParameterProblems.Problem] = []
    /// Whether `problem` says what one already listed says: the same message at the same
    /// place, or another guess at the same unknown key.
    func isListed(_ problem: ParameterProblems.Problem) -> Bool {
      problems.contains {
        $0.path == problem.path && $0.offset == problem.offset
          && ($0.message == problem.message
            || ($0.message.hasPrefix("unknown parameter")
              && problem.message.hasPrefix("unknown parameter")))
      }
    }
    if case .failure(let error) = made {
      // First: a missing parameter's problem names the unknown keys that may be it
      // misspelled, with it as the guess, which beats a guess among every parameter.
      for error in (error as? ParameterErrors)?.errors ?? [error] {
        for problem in ParameterProblems(error: error, params: params, plugin: self).problems
        where !isListed(problem) {
          problems.append(problem)
        }
      }
    }
    for key in unused {
      let problem = ParameterProblems.Problem(
        path: key.path.appending(key.key), offset: key.offset,
        message: "unknown parameter '\(key.key)' for '\(kind)'."
          + Suggestions.didYouMean(key.key, in: key.knownKeys))
      if !isListed(problem) { problems.append(problem) }
    }
    if problems.isEmpty, case .success(var step) = made {
      step.requirements = requirements
      return .success(step)
    }
    return .failure(ParameterProblems(problems: problems))
  }
}

/// What a kind's parameter and output types give its descriptor, worked out the first time a
/// step of the kind is prepared or the kind is described.
struct KindTypes: Sendable {
  let outputType: ObjectIdentifier
  let output: any Any.Type
  let hasOutput: Bool
  let outputTypeName: Lazy<String>
  let outputCoder: Lazy<OutputCoder?>
  /// The schema is kept per type, once read.
  let describeParameters: @Sendable () -> [ParameterDescription]
  /// Whether the parameters read the manifest's folder (``ManifestDirectory``): only then may
  /// a relative path among them be of a file shipped with the manifest.
  let readsManifestDirectory: Bool
  let prepare:
    @Sendable (JSONValue, URL?, Bool, ParameterRound?) throws -> (
      Result<PreparedStep, any Error>, [JSONValueDecoder.UnusedKey]
    )

  init<Parameters: StepParameters, Output: Sendable>(
    parameters: Parameters.Type, output: Output.Type,
    make: @escaping @Sendable (Parameters, _ checksShippedFiles: Bool) throws -> PreparedStep
  ) {
    outputType = ObjectIdentifier(Output.self)
    self.output = Output.self
    hasOutput = Output.self != Void.self
    // A kind that hands nothing on is said so, not as Swift writes `Void` ("()").
    outputTypeName = Lazy { Output.self == Void.self ? "nothing" : String(describing: Output.self) }
    outputCoder = Lazy { OutputCoder(Output.self) }
    // Read here, once: a kind's types are worked out when a step of it is first prepared or the
    // kind described, and both need its parameters.
    let schema = ParameterSchema.of(Parameters.self)
    describeParameters = { schema.descriptions.value }
    readsManifestDirectory = schema.readsManifestDirectory
    prepare = { value, manifestDirectory, checksShippedFiles, round in
      let (parameters, problems, unused) = try schema.decode(
        value, as: Parameters.self, manifestDirectory: manifestDirectory, reusing: round)
      if !problems.isEmpty { return (.failure(ParameterErrors(errors: problems)), unused) }
      return (Result { try make(parameters, checksShippedFiles) }, unused)
    }
  }
}

/// A step ready to run: its plugin instance, with decoded parameters, behind a closure.
struct PreparedStep: Sendable {
  let isBlocking: Bool
  let execute: @Sendable (StepContext) async throws -> any Sendable
  /// The environment values its plugin reads.
  var requirements: [StepRequirement] = []
}

/// Every parameter's problem with a step's params, as their readers threw them.
struct ParameterErrors: Error {
  var errors: [any Error]
}

/// What is wrong with a step's params.
struct ParameterProblems: Error {
  struct Problem {
    /// Relative to the step's `params`.
    var path: JSONPath
    var offset: Int?
    var message: String
  }

  var problems: [Problem]

  init(problems: [Problem]) {
    self.problems = problems
  }

  /// The problem `error`, thrown while preparing a step of `plugin`, stands for.
  init(error: any Error, params: JSONValue, plugin: PluginDescriptor) {
    let kind = plugin.kind
    func problem(_ path: JSONPath, _ message: String) -> Problem {
      var located = path
      while params.value(at: located)?.offset == nil, !located.components.isEmpty {
        located.components.removeLast()
      }
      return Problem(path: path, offset: params.value(at: located)?.offset, message: message)
    }
    switch error {
    case let error as ParameterError:
      let path = error.parameter.map { JSONPath.root.appending($0) } ?? .root
      problems = [problem(path, error.message)]
    case DecodingError.keyNotFound(let key, let context):
      // The decoder stops at the missing key, before it could report the keys it did not know,
      // and one of those is often the missing key misspelled: the typo is the mistake to fix.
      let path = JSONPath(codingPath: context.codingPath)
      let missing = key.stringValue
      let described = path.components.isEmpty ? plugin.parameters.map(\.name) : []
      let unknown = Self.unknownKeys(
        in: params.value(at: path), missing: missing, described: described)
      problems = unknown.map { member, suggestion in
        Problem(
          path: path.appending(member.key), offset: member.keyOffset,
          message: "unknown parameter '\(member.key)' for '\(kind)'."
            + Suggestions.didYouMean(member.key, suggesting: suggestion))
      }
      if !unknown.contains(where: { $0.suggestion == missing }) {
        problems.append(problem(path, "'\(kind)' needs the parameter '\(missing)'."))
      }
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
      DecodingError.dataCorrupted(let context):
      problems = [
        problem(JSONPath(codingPath: context.codingPath), Self.sentence(context.debugDescription))
      ]
    default:
      problems = [problem(.root, Self.sentence("\(error)"))]
    }
  }

  /// The members of `object` that are not parameters, each with the parameter it may have
  /// been meant as. With the plugin's `described` parameters (a closed list, as the JSON
  /// Schema has it), every other key is unknown; without them, only a key that looks like the
  /// `missing` one misspelled can be told from a parameter the type would have read later.
  private static func unknownKeys(
    in object: JSONValue?, missing: String, described: [String]
  ) -> [(member: JSONMember, suggestion: String?)] {
    let members = object?.members ?? []
    guard !described.isEmpty else {
      return members.first { Suggestions.closest(to: $0.key, in: [missing]) != nil }.map {
        [($0, missing)]
      } ?? []
    }
    return members.filter { !described.contains($0.key) }.map { member in
      // The missing parameter first: of two close names, it is the one not yet given.
      (
        member,
        Suggestions.closest(to: member.key, in: [missing])
          ?? Suggestions.closest(to: member.key, in: described)
      )
    }
  }

  private static func sentence(_ text: String) -> String {
    text.hasSuffix(".") ? text : text + "."
  }
}
