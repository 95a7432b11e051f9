import LaunchJSON

/// A path one step (or its fallback) is given, or defaults to.
package struct PathParameter: Sendable {
  /// The path as the manifest writes it, or the parameter's default.
  package var written: String
  /// The parameter's key in `params`.
  package var name: String
  /// The plugin given the path.
  package var kind: String
  /// The step's position in the manifest's steps.
  package var step: Int
  /// Whether it is given to the step's fallback.
  package var isFallback: Bool
  /// Whether the step removes files in the folder it names.
  package var removesFiles: Bool
  /// Whether the step rewrites the file it names, or moves it aside.
  package var rewritesFile: Bool
  /// The files the step keeps beside the file it names, as suffixes added to its name.
  package var companions: [String]
  /// Whether a relative path may be of the manifest's folder too (a file shipped with it).
  package var mayBeShipped: Bool
  /// Whether it is a fallback's of the step's own kind that the fallback does not give: the
  /// step's own path (or the same default) again.
  package var isInherited: Bool
}

extension Manifest {
  /// Every path parameter of every step and fallback, with its value: given, or the default.
  /// A fallback of the step's own kind takes the step's parameters with its own over them;
  /// one of another kind, only its own.
  package func pathParameters(registry: PluginRegistry) -> [PathParameter] {
    var found: [PathParameter] = []
    // Each kind's path parameters, described once: a manifest has thousands of steps of a
    // few kinds.
    var pathsOfKind: [(kind: String, parameters: [ParameterDescription], shipped: Bool)] = []
    func add(
      _ kind: String, step: Int, isFallback: Bool, inherits: (String) -> Bool,
      value: (String) -> JSONValue?
    ) {
      let parameters: [ParameterDescription]
      let shipped: Bool
      if let known = pathsOfKind.first(where: { $0.kind == kind }) {
        (parameters, shipped) = (known.parameters, known.shipped)
      } else {
        let descriptor = registry.descriptor(for: kind)
        parameters = descriptor?.parameters.filter { $0.type == .path } ?? []
        shipped = descriptor?.readsManifestDirectory ?? false
        pathsOfKind.append((kind, parameters, shipped))
      }
      for parameter in parameters {
        // The default as JSON: a `defaultDescription` is words, not a path.
        guard let written = (value(parameter.name) ?? parameter.defaultJSON)?.stringValue,
          !written.isEmpty
        else { continue }
        found.append(
          PathParameter(
            written: written, name: parameter.name, kind: kind, step: step,
            isFallback: isFallback, removesFiles: parameter.removesFiles,
            rewritesFile: parameter.rewritesFile, companions: parameter.companions,
            mayBeShipped: shipped,
            isInherited: inherits(parameter.name)))
      }
    }
    for index in steps.indices {
      let step = steps[index]
      add(
        step.plugin, step: index, isFallback: false, inherits: { _ in false },
        value: { step.params?[$0] })
      guard let fallback = step.fallback else { continue }
      let ownKind = fallback.plugin == nil
      add(
        fallback.plugin ?? step.plugin, step: index, isFallback: true,
        inherits: { ownKind && fallback.params?[$0] == nil },
        value: { fallback.params?[$0] ?? (ownKind ? step.params?[$0] : nil) })
    }
    return found
  }
}

extension PathParameter {
  /// The parameter and the step or fallback it is of, in words: `'path' of step 'store'`.
  package func owner(in manifest: Manifest) -> String {
    let id = manifest.steps[step].id
    return isFallback ? "'\(name)' of the fallback of step '\(id)'" : "'\(name)' of step '\(id)'"
  }
}
