/// A JSON Schema (draft 2020-12) for manifests, including each registered plugin's params, so
/// editors can complete and check manifests as they are written.
public enum ManifestSchema {
  /// The schema for manifests using the kinds in `registry`.
  public static func json(for registry: PluginRegistry) -> JSONValue {
    let plugins = registry.descriptors
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
              object([("type", "string"), ("pattern", "^ *[0-9]+(\\.[0-9]+)? *(us|ms|s|m|h|d) *$")]
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
      (
        "retry",
        closedObject(
          required: ["attempts"],
          [
            ("attempts", object([("type", "integer"), ("minimum", 1), ("maximum", 100)])),
            ("backoff", reference("duration")),
          ])
      ),
      ("step", step(plugins: plugins)),
    ]
    for plugin in plugins {
      definitions.append(("params.\(plugin.kind)", params(of: plugin)))
    }
    return object([
      ("$schema", "https://json-schema.org/draft/2020-12/schema"),
      ("title", "Launch manifest, version 1"),
      ("type", "object"),
      ("required", ["version", "steps"]),
      ("additionalProperties", false),
      (
        "properties",
        object([
          ("$schema", object([("type", "string")])),
          ("version", object([("const", 1)])),
          ("name", object([("type", "string"), ("description", "Shown in reports.")])),
          ("maxConcurrency", object([("type", "integer"), ("minimum", 1)])),
          (
            "defaults",
            closedObject(
              required: [],
              [
                ("timeout", reference("duration")), ("priority", reference("priority")),
                ("onFailure", reference("onFailure")), ("retry", reference("retry")),
              ])
          ),
          (
            "milestones",
            object([
              ("type", "object"),
              (
                "additionalProperties",
                object([("type", "array"), ("items", object([("type", "string")]))])
              ),
            ])
          ),
          ("steps", object([("type", "array"), ("items", reference("step"))])),
        ])
      ),
      ("$defs", object(definitions)),
    ])
  }

  private static func step(plugins: [PluginDescriptor]) -> JSONValue {
    let ids = object([("type", "array"), ("items", object([("type", "string")]))])
    var schema = closedObject(
      required: ["id", "plugin"],
      [
        ("id", object([("type", "string"), ("minLength", 1)])),
        ("plugin", object([("enum", strings(plugins.map(\.kind)))])),
        ("params", object([("type", "object")])),
        ("priority", reference("priority")),
        ("dependsOn", ids),
        ("after", ids),
        ("timeout", reference("duration")),
        ("retry", reference("retry")),
        ("onFailure", reference("onFailure")),
        (
          "fallback",
          closedObject(
            required: [],
            [
              ("params", object([("type", "object")])),
              ("plugin", object([("enum", strings(plugins.map(\.kind)))])),
            ])
        ),
        ("delay", reference("duration")),
        ("deferUntil", object([("type", "string")])),
        ("isolation", object([("enum", ["main", "default"])])),
        ("expectedDuration", reference("duration")),
        ("description", object([("type", "string")])),
      ])
    let conditions = plugins.map { plugin in
      object([
        (
          "if",
          object([
            ("properties", object([("plugin", object([("const", .init(.string(plugin.kind)))]))]))
          ])
        ),
        (
          "then", object([("properties", object([("params", reference("params.\(plugin.kind)"))]))])
        ),
      ])
    }
    if case .object(var members) = schema.kind, !conditions.isEmpty {
      members.append(JSONMember(key: "allOf", value: JSONValue(.array(conditions))))
      schema = JSONValue(.object(members))
    }
    return schema
  }

  private static func params(of plugin: PluginDescriptor) -> JSONValue {
    guard !plugin.parameters.isEmpty else {
      return object([("type", "object"), ("description", .init(.string(plugin.summary)))])
    }
    let properties = plugin.parameters.map { parameter -> (String, JSONValue) in
      var members = valueSchema(parameter.type).members ?? []
      members.append(JSONMember(key: "description", value: .init(.string(parameter.summary))))
      if let text = parameter.defaultValue {
        let value = (try? JSONParser.parse(Array(text.utf8)).root) ?? JSONValue(.string(text))
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
    return schema
  }

  private static func valueSchema(_ type: ParameterDescription.ValueType) -> JSONValue {
    switch type {
    case .string, .path: object([("type", "string")])
    case .integer(let minimum, let maximum):
      object(
        [("type", "integer")]
          + (minimum.map { [("minimum", JSONValue(.number(Double($0))))] } ?? [])
          + (maximum.map { [("maximum", JSONValue(.number(Double($0))))] } ?? []))
    case .number: object([("type", "number")])
    case .boolean: object([("type", "boolean")])
    case .duration: object([("$ref", "#/$defs/duration")])
    case .oneOf(let values): object([("enum", strings(values))])
    case .strings: object([("type", "array"), ("items", object([("type", "string")]))])
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
