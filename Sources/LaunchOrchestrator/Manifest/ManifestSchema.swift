import LaunchJSON

/// A JSON Schema (draft 2020-12) for manifests, including each registered plugin's params, so
/// editors can complete and check manifests as they are written.
package enum ManifestSchema {
  /// The schema for manifests using the kinds in `registry`.
  package static func json(for registry: PluginRegistry) -> JSONValue {
    let plugins = registry.descriptors
    let kinds = strings(plugins.map(\.kind))
    var definitions: [(String, JSONValue)] = [
      ("duration", duration(positive: false)),
      ("positiveDuration", duration(positive: true)),
      (
        "priority", object([("enum", strings(StepPriority.allCases.reversed().map(\.description)))])
      ),
      ("onFailure", object([("enum", strings(FailurePolicy.allCases.map(\.rawValue)))])),
    ]
    for info in [ManifestObjectInfo.retry, .step] {
      var schema = closedObject(info, plugins: plugins, kinds: kinds)
      if info.name == ManifestObjectInfo.step.name {
        schema = adding(kindConditions(plugins), to: schema)
      }
      definitions.append((info.name, schema))
    }
    for plugin in plugins {
      definitions.append(("params.\(plugin.kind)", params(of: plugin)))
    }
    var root =
      closedObject(ManifestObjectInfo.topLevel, plugins: plugins, kinds: kinds).members ?? []
    root.insert(
      contentsOf: [
        JSONMember(key: "$schema", value: "https://json-schema.org/draft/2020-12/schema"),
        JSONMember(key: "title", value: "Launch manifest, version 1"),
      ], at: 0)
    root.append(JSONMember(key: "$defs", value: object(definitions)))
    return JSONValue(.object(root))
  }

  /// A duration, as ``DurationText`` reads one: a string within the limits spelled out by
  /// ``DurationPattern``, or a number of seconds; with `positive`, above zero.
  private static func duration(positive: Bool) -> JSONValue {
    let limit = "less than \(Int(DurationText.maximumSeconds)) seconds (about a century)"
    let minimum = DurationPattern.smallestPositive.value
    return object([
      (
        "description",
        .init(
          .string(
            "A duration: \"250ms\", \"2s\", \"1.5m\", \"24h\", or a number of seconds; \(limit)"
              + (positive ? ", and above 0 (at least half a nanosecond, which rounds to one)" : "")
              + ". A string's digits are compared with the limits as written, so one of 16 digits or more within rounding of a limit may be read otherwise."
          ))
      ),
      (
        "oneOf",
        [
          object([
            ("type", "string"),
            ("pattern", .init(.string(DurationPattern.pattern(positive: positive)))),
          ]),
          object([
            ("type", "number"),
            positive
              ? ("minimum", JSONValue(number: minimum, text: "\(minimum)")) : ("minimum", 0),
            ("exclusiveMaximum", JSONValue(integer: Int(DurationText.maximumSeconds))),
          ]),
        ]
      ),
    ])
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
  private static func schema(
    of shape: ManifestShape, plugins: [PluginDescriptor], kinds: JSONValue
  ) -> JSONValue {
    switch shape {
    case .constant(let value): object([("const", JSONValue(integer: value))])
    case .string(let minLength):
      object(
        [("type", "string")]
          + (minLength > 0 ? [("minLength", JSONValue(integer: minLength))] : []))
    // A bound the field leaves open is the reader's own (``ManifestReader/integerLimit``).
    case .integer(let minimum, let maximum):
      integer(
        minimum: minimum ?? -ManifestReader.integerLimit,
        maximum: maximum ?? ManifestReader.integerLimit)
    case .duration: reference("duration")
    case .positiveDuration: reference("positiveDuration")
    case .priority: reference("priority")
    case .failurePolicy: reference("onFailure")
    case .isolation: object([("enum", strings(StepIsolation.allCases.map(\.rawValue)))])
    case .stepIDs: names()
    case .signalNames(let unique): names(unique ? [("uniqueItems", true)] : [])
    case .trigger: object([("enum", strings(StepTrigger.allCases.map(\.rawValue)))])
    case .boolean: object([("type", "boolean")])
    case .names: names([("minItems", 1)])
    case .version:
      object([("type", "string"), ("pattern", .init(.string(AppInfo.versionPattern)))])
    case .once: object([("enum", strings(RunOnce.allCases.map(\.rawValue)))])
    case .milestoneName: object([("type", "string")])
    case .pluginKind: object([("enum", kinds)])
    case .params: object([("type", "object")])
    case .milestoneMap:
      object([
        ("type", "object"), ("propertyNames", object([("minLength", 1)])),
        ("additionalProperties", names()),
      ])
    case .nullable(let shape): nullable(schema(of: shape, plugins: plugins, kinds: kinds))
    case .object(let info):
      info.isDefinition
        ? reference(info.name) : closedObject(info, plugins: plugins, kinds: kinds)
    case .array(let info):
      object([
        ("type", "array"),
        (
          "items",
          info.isDefinition
            ? reference(info.name) : closedObject(info, plugins: plugins, kinds: kinds)
        ),
      ])
    }
  }

  /// An array of names, none empty, with `more` limits.
  private static func names(_ more: [(String, JSONValue)] = []) -> JSONValue {
    object([("type", "array"), ("items", object([("type", "string"), ("minLength", 1)]))] + more)
  }

  /// `schema`, or `null`.
  private static func nullable(_ schema: JSONValue) -> JSONValue {
    guard var members = schema.members else { return schema }
    if let index = members.firstIndex(where: { $0.key == "type" }),
      let type = members[index].value.stringValue
    {
      members[index].value = strings([type, "null"])
    } else if let index = members.firstIndex(where: { $0.key == "enum" }),
      let values = members[index].value.elements
    {
      members[index].value = JSONValue(.array(values + [JSONValue(.null)]))
    } else if let index = members.firstIndex(where: { $0.key == "type" }),
      let types = members[index].value.elements
    {
      members[index].value = JSONValue(.array(types + [JSONValue(.string("null"))]))
    } else {
      // A reference, or a schema of its own words: one of the two.
      let description = members.first { $0.key == "description" }
      members.removeAll { $0.key == "description" }
      return object(
        (description.map { [($0.key, $0.value)] } ?? [])
          + [("anyOf", [JSONValue(.object(members)), object([("type", "null")])])])
    }
    return JSONValue(.object(members))
  }

  /// An object that allows exactly the declared keys, each described by its summary, and
  /// holds to the object's rules.
  private static func closedObject(
    _ info: ManifestObjectInfo, plugins: [PluginDescriptor], kinds: JSONValue
  ) -> JSONValue {
    let closed = closedObject(
      required: info.fields.filter(\.isRequired).map(\.key),
      info.fields.map { field in
        var members = schema(of: field.shape, plugins: plugins, kinds: kinds).members ?? []
        members.append(JSONMember(key: "description", value: .init(.string(field.summary))))
        return (field.key, JSONValue(.object(members)))
      })
    return adding(
      info.rules.map(rule)
        + (info.name == ManifestObjectInfo.fallback.name ? fallbackKindConditions(plugins) : []),
      to: closed)
  }

  /// A rule of an object: with its key (set to its value), not the key it excludes.
  private static func rule(_ rule: ManifestRuleInfo) -> JSONValue {
    let condition = object(
      [("required", strings([rule.key]))]
        + (rule.value.map {
          [("properties", object([(rule.key, object([("const", .init(.string($0)))]))]))]
        } ?? []))
    return object([
      ("description", .init(.string(rule.message))),
      ("if", condition),
      ("then", object([("not", object([("required", strings([rule.excluded]))]))])),
    ])
  }

  /// `conditions` appended to the `allOf` of the object `schema`.
  private static func adding(_ conditions: [JSONValue], to schema: JSONValue) -> JSONValue {
    guard case .object(var members) = schema.kind, !conditions.isEmpty else { return schema }
    if let index = members.firstIndex(where: { $0.key == "allOf" }) {
      members[index].value = JSONValue(.array((members[index].value.elements ?? []) + conditions))
    } else {
      members.append(JSONMember(key: "allOf", value: JSONValue(.array(conditions))))
    }
    return JSONValue(.object(members))
  }

  /// For each plugin kind, what a step of it holds: its params schema applied to `params`
  /// (which must be given when the kind has a required parameter), no `cache` for a kind
  /// whose output is not Codable, no `isolation` but `main` for a kind that runs there, and a
  /// `fallback` of its own kind whose `params` are checked key by key against the kind's, or
  /// of another kind that outputs the same type (and, for one that runs on the main actor,
  /// no `isolation` of the step's but `main`).
  private static func kindConditions(_ plugins: [PluginDescriptor]) -> [JSONValue] {
    let mainActor = object([("const", .init(.string(StepIsolation.main.rawValue)))])
    let fallbacksOnTheMainActor = plugins.filter { $0.isolation == .main }.map { plugin in
      object([
        (
          "if",
          object([
            ("required", strings(["fallback"])),
            (
              "properties",
              object([
                (
                  "fallback",
                  object([
                    ("required", strings(["plugin"])),
                    ("properties", object([("plugin", kind(plugin))])),
                  ])
                )
              ])
            ),
          ])
        ),
        ("then", object([("properties", object([("isolation", mainActor)]))])),
      ])
    }
    return fallbacksOnTheMainActor
      + plugins.map { plugin in
        let hasRequired = plugin.parameters.contains(where: \.isRequired)
        let params = reference("params.\(plugin.kind)")
        var properties: [(String, JSONValue)] = [
          ("params", hasRequired ? params : nullable(params))
        ]
        // A kind whose output is not Codable cannot have a `cache`: `false` forbids it.
        if !plugin.isCacheable { properties.append(("cache", false)) }
        if plugin.isolation == .main { properties.append(("isolation", mainActor)) }
        var fallback: [(String, JSONValue)] = []
        let sameOutput = plugins.filter { $0.outputType == plugin.outputType }
        if sameOutput.count < plugins.count {
          fallback.append(
            (
              "properties",
              object([("plugin", object([("enum", strings(sameOutput.map(\.kind)))]))])
            ))
        }
        // Without a `plugin` of its own, the fallback's params are merged over the step's: each
        // is one of the kind's, none is required.
        let overrides = plugin.parameters.map { parameter in
          (
            parameter.name,
            reference("params.\(plugin.kind)", "properties", parameter.name)
          )
        }
        fallback += [
          ("if", object([("required", strings(["plugin"]))])),
          (
            "else",
            object([
              ("properties", object([("params", closedObject(required: [], overrides))]))
            ])
          ),
        ]
        properties.append(("fallback", object(fallback)))
        return whenKind(plugin, then: properties)
      }
  }

  /// `if` the object's `plugin` names `plugin`'s kind, `then` it has these `properties`, and
  /// `params` when the kind has a required parameter: a step's or a fallback's rule.
  private static func whenKind(
    _ plugin: PluginDescriptor, then properties: [(String, JSONValue)]
  ) -> JSONValue {
    let hasRequired = plugin.parameters.contains(where: \.isRequired)
    return object([
      (
        "if",
        object([
          ("required", strings(["plugin"])), ("properties", object([("plugin", kind(plugin))])),
        ])
      ),
      (
        "then",
        object(
          (hasRequired ? [("required", strings(["params"]))] : [])
            + [("properties", object(properties))])
      ),
    ])
  }

  /// The schema of a `plugin` that names `plugin`'s kind.
  private static func kind(_ plugin: PluginDescriptor) -> JSONValue {
    object([("const", .init(.string(plugin.kind)))])
  }

  /// For each plugin kind, a fallback that runs it: its params are the kind's own, given in
  /// full when the kind has a required parameter.
  private static func fallbackKindConditions(_ plugins: [PluginDescriptor]) -> [JSONValue] {
    plugins.map { plugin in
      whenKind(plugin, then: [("params", reference("params.\(plugin.kind)"))])
    }
  }

  /// `name` as a token of a JSON Pointer in a URI fragment (RFC 6901, RFC 3986).
  private static func pointerToken(_ name: String) -> String {
    var token = ""
    for scalar in name.unicodeScalars {
      switch scalar {
      case "~": token += "~0"
      case "/": token += "~1"
      case "a"..."z", "A"..."Z", "0"..."9", "-", ".", "_", "$": token.unicodeScalars.append(scalar)
      default:
        for byte in String(scalar).utf8 {
          let hex = String(byte, radix: 16, uppercase: true)
          token += (hex.count < 2 ? "%0" : "%") + hex
        }
      }
    }
    return token
  }

  private static func integer(minimum: Int?, maximum: Int?) -> JSONValue {
    object(
      [("type", "integer")]
        + (minimum.map { [("minimum", JSONValue(integer: $0))] } ?? [])
        + (maximum.map { [("maximum", JSONValue(integer: $0))] } ?? []))
  }

  /// A kind's params: each parameter typed, `null` for one that is not required (it leaves
  /// the parameter out), and the rules between them.
  private static func params(of plugin: PluginDescriptor) -> JSONValue {
    let properties = plugin.parameters.map { parameter -> (String, JSONValue) in
      let value = valueSchema(parameter.type)
      var members = (parameter.isRequired ? value : nullable(value)).members ?? []
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
    return adding(rules, to: schema)
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
    case .duration: reference("duration")
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

  /// A reference to the definition `name`, or to a schema inside it down `path`.
  private static func reference(_ name: String, _ path: String...) -> JSONValue {
    let pointer = (["$defs", name] + path).map(pointerToken).joined(separator: "/")
    return object([("$ref", .init(.string("#/" + pointer)))])
  }

  private static func strings(_ values: [String]) -> JSONValue {
    JSONValue(.array(values.map { JSONValue(.string($0)) }))
  }
}
