import LaunchJSON

/// A JSON Schema (draft 2020-12) for manifests, including each registered plugin's params, so
/// editors can complete and check manifests as they are written.
package enum ManifestSchema {
  /// The schema for manifests using the kinds in `registry`.
  package static func json(for registry: PluginRegistry) -> JSONValue {
    let plugins = registry.descriptors
    let kinds = strings(plugins.map(\.kind))
    var definitions: [(String, JSONValue)] = [
      (
        "duration",
        object([
          (
            "description",
            "A duration: \"250ms\", \"2s\", \"1.5m\", \"24h\", or a number of seconds."
          ),
          (
            "oneOf",
            [
              object([
                ("type", "string"),
                // As `DurationText.parse` reads it: digits with at most one point, a unit.
                ("pattern", "^ *([0-9]+(\\.[0-9]*)?|\\.[0-9]+) *(us|ms|s|m|h|d) *$"),
              ]
              ),
              object([("type", "number"), ("minimum", 0)]),
            ]
          ),
        ])
      ),
      (
        "priority", object([("enum", strings(StepPriority.allCases.reversed().map(\.description)))])
      ),
      ("onFailure", object([("enum", strings(FailurePolicy.allCases.map(\.rawValue)))])),
    ]
    for info in [ManifestObjectInfo.retry, .step] {
      var schema = closedObject(info, kinds: kinds)
      if info.name == ManifestObjectInfo.step.name {
        schema = withParamsConditions(schema, plugins: plugins)
      }
      definitions.append((info.name, schema))
    }
    for plugin in plugins {
      definitions.append(("params.\(plugin.kind)", params(of: plugin)))
    }
    var root = closedObject(ManifestObjectInfo.topLevel, kinds: kinds).members ?? []
    root.insert(
      contentsOf: [
        JSONMember(key: "$schema", value: "https://json-schema.org/draft/2020-12/schema"),
        JSONMember(key: "title", value: "Launch manifest, version 1"),
      ], at: 0)
    root.append(JSONMember(key: "$defs", value: object(definitions)))
    return JSONValue(.object(root))
  }

  /// Whether `root` is a JSON Schema document rather than a manifest: its `$schema` names
  /// json-schema.org, and it holds schema keywords (`type`, `properties`, `$defs`, ...) and
  /// none of a manifest's own keys.
  ///
  /// `$schema` alone does not tell them apart: a manifest may carry the address of JSON
  /// Schema's own meta-schema, copied by mistake, and one with `"Steps"` for `"steps"` must
  /// still be read and refused. Keys are compared without case for the same reason.
  package static func isSchemaDocument(_ root: JSONValue) -> Bool {
    guard let members = root.members,
      root["$schema"]?.stringValue?.contains("json-schema.org") == true
    else { return false }
    let lowercasedKeys = Set(members.map { $0.key.lowercased() })
    let manifestKeys = ManifestObjectInfo.topLevel.keys.filter { $0 != "$schema" }
    return members.contains { schemaKeywords.contains($0.key) }
      && !manifestKeys.contains { lowercasedKeys.contains($0.lowercased()) }
  }

  /// Keywords of a JSON Schema's root, any of which a schema document holds and no manifest.
  private static let schemaKeywords: Set<String> = [
    "type", "properties", "$defs", "definitions", "$ref", "$id", "allOf", "anyOf", "oneOf",
    "items", "enum", "const", "required", "additionalProperties",
  ]

  /// The schema of a value of `shape`; objects defined once are referenced by name.
  private static func schema(of shape: ManifestShape, kinds: JSONValue) -> JSONValue {
    switch shape {
    case .constant(let value): object([("const", JSONValue(integer: value))])
    case .string(let minLength):
      object(
        [("type", "string")]
          + (minLength > 0 ? [("minLength", JSONValue(integer: minLength))] : []))
    case .integer(let minimum, let maximum): integer(minimum: minimum, maximum: maximum)
    case .duration: reference("duration")
    case .priority: reference("priority")
    case .failurePolicy: reference("onFailure")
    case .isolation: object([("enum", strings(StepIsolation.allCases.map(\.rawValue)))])
    case .stepIDs, .signalNames:
      object([("type", "array"), ("items", object([("type", "string")]))])
    case .trigger: object([("enum", strings(StepTrigger.allCases.map(\.rawValue)))])
    case .boolean: object([("type", "boolean")])
    case .names:
      object([("type", "array"), ("items", object([("type", "string"), ("minLength", 1)]))])
    case .once: object([("enum", strings(RunOnce.allCases.map(\.rawValue)))])
    case .milestoneName: object([("type", "string")])
    case .pluginKind: object([("enum", kinds)])
    case .params: object([("type", "object")])
    case .milestoneMap:
      object([
        ("type", "object"),
        (
          "additionalProperties",
          object([("type", "array"), ("items", object([("type", "string")]))])
        ),
      ])
    case .object(let info):
      info.isDefinition ? reference(info.name) : closedObject(info, kinds: kinds)
    case .array(let info):
      object([
        ("type", "array"),
        ("items", info.isDefinition ? reference(info.name) : closedObject(info, kinds: kinds)),
      ])
    }
  }

  /// An object that allows exactly the declared keys, each described by its summary.
  private static func closedObject(_ info: ManifestObjectInfo, kinds: JSONValue) -> JSONValue {
    closedObject(
      required: info.fields.filter(\.isRequired).map(\.key),
      info.fields.map { field in
        var members = schema(of: field.shape, kinds: kinds).members ?? []
        members.append(JSONMember(key: "description", value: .init(.string(field.summary))))
        return (field.key, JSONValue(.object(members)))
      })
  }

  /// The step schema with, for each plugin kind, its params schema applied to `params`.
  private static func withParamsConditions(_ step: JSONValue, plugins: [PluginDescriptor])
    -> JSONValue
  {
    let conditions = plugins.map { plugin in
      object([
        (
          "if",
          object([
            ("properties", object([("plugin", object([("const", .init(.string(plugin.kind)))]))]))
          ])
        ),
        (
          "then",
          object([
            (
              "properties",
              // A kind whose output is not Codable cannot have a `cache`: `false` forbids it.
              object(
                [("params", reference("params.\(plugin.kind)"))]
                  + (plugin.isCacheable ? [] : [("cache", JSONValue(.bool(false)))]))
            )
          ])
        ),
      ])
    }
    guard case .object(var members) = step.kind, !conditions.isEmpty else { return step }
    members.append(JSONMember(key: "allOf", value: JSONValue(.array(conditions))))
    return JSONValue(.object(members))
  }

  private static func integer(minimum: Int?, maximum: Int?) -> JSONValue {
    object(
      [("type", "integer")]
        + (minimum.map { [("minimum", JSONValue(integer: $0))] } ?? [])
        + (maximum.map { [("maximum", JSONValue(integer: $0))] } ?? []))
  }

  /// A kind's params: each parameter typed, and the rules between them.
  private static func params(of plugin: PluginDescriptor) -> JSONValue {
    guard !plugin.parameters.isEmpty else {
      return object([("type", "object"), ("description", .init(.string(plugin.summary)))])
    }
    let properties = plugin.parameters.map { parameter -> (String, JSONValue) in
      var members = valueSchema(parameter.type).members ?? []
      members.append(JSONMember(key: "description", value: .init(.string(parameter.summary))))
      if let value = parameter.defaultJSON {
        members.append(JSONMember(key: "default", value: value))
      }
      return (parameter.name, JSONValue(.object(members)))
    }
    var schema = closedObject(
      required: plugin.parameters.filter(\.isRequired).map(\.name), properties)
    if case .object(var members) = schema.kind {
      members.insert(JSONMember(key: "description", value: .init(.string(plugin.summary))), at: 0)
      schema = JSONValue(.object(members))
    }
    let rules = plugin.parameters.flatMap { parameter in
      parameter.requires.map { other in
        object([
          ("description", .init(.string(ParameterRules.requires(parameter.name, other)))),
          ("if", given(parameter.name)), ("then", given(other)),
        ])
      }
        + parameter.excludes.map { other in
          object([
            ("description", .init(.string(ParameterRules.excludes(parameter.name, other)))),
            ("not", object([("allOf", [given(parameter.name), given(other)])])),
          ])
        }
    }
    guard case .object(var members) = schema.kind, !rules.isEmpty else { return schema }
    members.append(JSONMember(key: "allOf", value: JSONValue(.array(rules))))
    return JSONValue(.object(members))
  }

  /// Params that give `name` a value: neither `null` nor `false`, which leave it out or off.
  private static func given(_ name: String) -> JSONValue {
    object([
      ("required", strings([name])),
      ("properties", object([(name, object([("not", object([("enum", [nil, false])]))]))])),
    ])
  }

  private static func valueSchema(_ type: ParameterDescription.ValueType) -> JSONValue {
    switch type {
    case .string(nonEmpty: false): object([("type", "string")])
    case .string(nonEmpty: true), .path: object([("type", "string"), ("minLength", 1)])
    case .integer(let minimum, let maximum): integer(minimum: minimum, maximum: maximum)
    case .number: object([("type", "number")])
    case .boolean: object([("type", "boolean")])
    case .duration: object([("$ref", "#/$defs/duration")])
    case .oneOf(let values): object([("enum", strings(values))])
    case .strings(let nonEmpty):
      object(
        [("type", "array"), ("items", object([("type", "string")]))]
          + (nonEmpty ? [("minItems", 1)] : []))
    case .array(let element): object([("type", "array"), ("items", valueSchema(element))])
    case .date: object([("type", strings(["string", "number"]))])
    case .base64: object([("type", "string"), ("contentEncoding", "base64")])
    case .object: object([("type", "object")])
    }
  }

  private static func object(_ members: [(String, JSONValue)]) -> JSONValue {
    JSONValue(.object(members.map { JSONMember(key: $0.0, value: $0.1) }))
  }

  private static func closedObject(required: [String], _ properties: [(String, JSONValue)])
    -> JSONValue
  {
    var members: [(String, JSONValue)] = [("type", "object")]
    if !required.isEmpty { members.append(("required", strings(required))) }
    members.append(("additionalProperties", false))
    members.append(("properties", object(properties)))
    return object(members)
  }

  private static func reference(_ name: String) -> JSONValue {
    object([("$ref", .init(.string("#/$defs/\(name)")))])
  }

  private static func strings(_ values: [String]) -> JSONValue {
    JSONValue(.array(values.map { JSONValue(.string($0)) }))
  }
}
