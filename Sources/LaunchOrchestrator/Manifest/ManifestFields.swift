import LaunchJSON

/// Every key a manifest may hold, each declared once.
///
/// ``ManifestReader`` reads manifests through these tables, ``ManifestSchema`` builds the JSON
/// Schema from them, and the field reference in docs/manifest.md is generated from them
/// (``ManifestFields/reference``), so the three cannot drift apart.
enum ManifestFields {
  /// The top level of a manifest.
  static let topLevel: [ManifestField<ManifestDraft>] = [
    .value(
      "$schema", .string(minLength: 0), "ignored; for editors", into: { $0.schemaReference = $1 },
      read: { $0.string($1, at: $2()) }),
    .required(
      "version", .constant(1), "format version",
      missing: "missing key 'version'; add \"version\": 1.",
      invalid: { "unsupported manifest version \($0); this orchestrator reads version 1." },
      into: { $0.version = $1 },
      read: { $0.integer($1, at: $2()) }
    ),
    .value(
      "name", .string(minLength: 0), default: "file name", "shown in reports",
      into: { $0.name = $1 },
      read: { $0.string($1, at: $2()) }),
    .value(
      "maxConcurrency", .nullable(.integer(minimum: 1, maximum: nil)), default: "no limit",
      "steps running at once; `--max-concurrency` overrides it",
      invalid: { _ in
        "'maxConcurrency' must be a whole number from 1 to \(ManifestReader.integerLimit), or left out for no limit."
      },
      into: { $0.maxConcurrency = $1 },
      read: { $0.integer($1, at: $2()) }
    ),
    .value(
      "defaults", .object(.defaults), default: "see below",
      "settings for steps that set none", into: { $0.defaults = $1 },
      read: { reader, value, path in
        var defaults = StepDefaults()
        reader.readObject(value, at: path(), fields: ManifestFields.defaults, into: &defaults)
        return defaults
      }),
    .value(
      "milestones", .milestoneMap, default: "`{}`", "milestone name -> array of step ids",
      into: { $0.milestones = $1 }, read: { $0.milestones($1, at: $2()) }),
    .value(
      "splash", .object(.splash),
      default: "content at `interactive` (else at the launch's end); no minimum, no skeleton",
      "when the app's splash gives way to content or a skeleton", into: { $0.splash = $1 },
      read: { reader, value, path in
        var splash = SplashPolicy()
        return reader.readObject(value, at: path(), fields: ManifestFields.splash, into: &splash)
          ? splash : nil
      }),
    .value(
      "app", .object(.app), default: "none",
      "the app's version for rehearsals; an app's own `AppInfo` wins", into: { $0.app = $1 },
      read: { reader, value, path in
        var app = AppInfo(version: "")
        return reader.readObject(value, at: path(), fields: ManifestFields.app, into: &app)
          ? app : nil
      }),
    .value(
      "signals", .signalNames(unique: true), default: "`[]`",
      "names of the signals the app may send during the launch, which steps wait for",
      into: { $0.signals = $1 }, read: { $0.stringArray($1, at: $2(), what: "signal names") }),
    .value(
      "safeMode", .object(.safeMode), default: "none",
      "run in safe mode after launches that never reached the first screen",
      into: { $0.safeMode = $1 },
      read: { reader, value, path in
        var policy = SafeModePolicy()
        return reader.readObject(value, at: path(), fields: ManifestFields.safeMode, into: &policy)
          ? policy : nil
      }),
    .required(
      "steps", .array(.step), "the steps",
      missing: "missing key 'steps'; a manifest declares its steps in an array.",
      into: { $0.steps = $1 }, read: { $0.steps($1, at: $2()) }),
  ]

  /// Settings every step takes unless it sets its own.
  static let defaults: [ManifestField<StepDefaults>] = [
    .value(
      "timeout", .positiveDuration, default: "none", "limit per attempt",
      invalid: ManifestFields.zeroTimeout, into: { $0.timeout = $1 },
      read: { $0.duration($1, at: $2()) }),
    .value(
      "priority", .priority, default: "`normal`", "order among ready steps",
      into: { $0.priority = $1 }, read: { $0.priority($1, at: $2()) }),
    .value(
      "onFailure", .failurePolicy, default: "`abort`", "what a final failure does",
      into: { $0.onFailure = $1 }, read: { $0.failurePolicy($1, at: $2()) }),
    .value(
      "retry", .object(.retry), default: "one attempt", "attempts and backoff",
      into: { $0.retry = $1 }, read: { $0.retry($1, at: $2()) }),
  ]

  /// One step.
  static let step: [ManifestField<StepDeclaration>] = [
    .required(
      "id", .string(minLength: 1), "unique id",
      missing: "missing key 'id'; every step needs a unique id.",
      invalid: { _ in "a step id cannot be empty." }, into: { $0.id = $1 },
      read: { $0.string($1, at: $2()) }
    ),
    .required(
      "plugin", .pluginKind, "the step kind, such as `simulate`",
      missing: "missing key 'plugin'; say which step kind runs this step.",
      into: { $0.plugin = $1 }, read: { $0.string($1, at: $2()) }),
    .value(
      "params", .nullable(.params), default: "`{}`",
      "the plugin's parameters, decoded and checked when the manifest loads",
      into: { $0.params = $1 }, read: { $0.params($1, at: $2()) }),
    .value(
      "priority", .priority, default: "`defaults.priority`",
      "order among ready steps; also the Swift task priority",
      into: { $0.priority = $1 }, read: { $0.priority($1, at: $2()) }),
    .value(
      "dependsOn", .stepIDs, default: "`[]`", "hard dependencies: run only after they succeed",
      into: { $0.dependsOn = $1 },
      read: { $0.stringArray($1, at: $2(), what: "step ids") }),
    .value(
      "after", .stepIDs, default: "`[]`",
      "ordering only: wait until they finish, however they end",
      into: { $0.after = $1 }, read: { $0.stringArray($1, at: $2(), what: "step ids") }),
    .value(
      "timeout", .positiveDuration, default: "`defaults.timeout`", "limit per attempt",
      invalid: ManifestFields.zeroTimeout, into: { $0.timeout = $1 },
      read: { $0.duration($1, at: $2()) }),
    .value(
      "retry", .object(.retry), default: "`defaults.retry`",
      "attempts in all (1-100); the backoff doubles each time", into: { $0.retry = $1 },
      read: { $0.retry($1, at: $2()) }),
    .value(
      "onFailure", .failurePolicy, default: "`defaults.onFailure`", "what a final failure does",
      into: { $0.onFailure = $1 }, read: { $0.failurePolicy($1, at: $2()) }),
    .value(
      "fallback", .object(.fallback), default: "none",
      "what runs after the last failed attempt", into: { $0.fallback = $1 },
      read: { $0.fallback($1, at: $2()) }),
    .value(
      "delay", .duration, default: "0", "wait this long after becoming ready",
      into: { $0.delay = $1 }, read: { $0.duration($1, at: $2()) }),
    .value(
      "deferUntil", .milestoneName, default: "none",
      "do not start before the milestone is reached", into: { $0.deferUntil = $1 },
      read: { $0.string($1, at: $2()) }),
    .value(
      "isolation", .isolation, default: "the plugin's",
      "`main` runs the step on the main actor (the main dispatch queue); a plugin that declares `main` always runs there",
      into: { $0.isolation = $1 },
      read: { reader, value, path in
        guard let text = reader.string(value, at: path()) else { return nil }
        if let isolation = StepIsolation(rawValue: text) { return isolation }
        reader.diagnostics.report(
          "unknown isolation '\(text)'; use \"main\" to run on the main actor, or leave it out.",
          at: path())
        return nil
      }),
    .value(
      "expectedDuration", .duration, default: "none",
      "planning hint; also breaks priority ties", into: { $0.expectedDuration = $1 },
      read: { $0.duration($1, at: $2()) }),
    .value(
      "cache", .object(.cache), default: "none",
      "serve the last output at once, then run the step behind it to refresh it",
      into: { $0.cache = $1 },
      read: { reader, value, path in
        var policy = CachePolicy()
        return reader.readObject(value, at: path(), fields: ManifestFields.cache, into: &policy)
          ? policy : nil
      }),
    .value(
      "waitFor", .signalNames(unique: false), default: "`[]`",
      "signals from the app (declared in `signals`) the step also waits for",
      into: { $0.waitFor = $1 },
      read: { $0.stringArray($1, at: $2(), what: "signal names") }),
    .value(
      "trigger", .trigger, default: "`launch`",
      "`onDemand` keeps the step out of the launch until the app ensures it; its failure, or a route it ends on, is thrown to the caller of `ensure` and leaves the launch's outcome as it is",
      into: { $0.trigger = $1 },
      read: { reader, value, path in
        guard let text = reader.string(value, at: path()) else { return nil }
        if let trigger = StepTrigger(rawValue: text) { return trigger }
        reader.diagnostics.report(
          "unknown trigger '\(text)'; use \"onDemand\" to run the step only when the app asks for it, or leave it out.",
          at: path())
        return nil
      }),
    .value(
      "when", .object(.when), default: "always",
      "facts of the launch's context that must all hold for the step to run",
      into: { $0.when = $1 },
      read: { reader, value, path in
        var condition = StepCondition()
        return reader.readObject(value, at: path(), fields: ManifestFields.when, into: &condition)
          ? condition : nil
      }),
    .value(
      "once", .once, default: "every launch",
      "run only until it succeeds once: `perInstall`, or `perVersion` of the app",
      into: { $0.once = $1 },
      read: { reader, value, path in
        guard let text = reader.string(value, at: path()) else { return nil }
        if let once = RunOnce(rawValue: text) { return once }
        let names = RunOnce.allCases.map(\.rawValue)
        reader.diagnostics.report(
          "unknown 'once' '\(text)'.\(Suggestions.didYouMean(text, in: names)) Use \"perInstall\" or \"perVersion\".",
          at: path())
        return nil
      }),
    .value(
      "description", .string(minLength: 0), default: "none", "free text for people",
      into: { _, _ in }, read: { $0.string($1, at: $2()) }),
  ]

  /// How many of the top level's fields are required, counted once.
  static let topLevelRequiredCount = topLevel.count(where: { $0.info.isRequired })

  /// How many of a step's fields are required, counted once.
  static let stepRequiredCount = step.count(where: { $0.info.isRequired })

  /// What a step cannot have together, each rule checked when the plan is built.
  static let stepRules: [ManifestRule<StepDeclaration>] = [
    .init(
      "trigger", is: StepTrigger.onDemand.rawValue, excludes: "when", reportedAt: "when",
      onDemandWithContext("when"), isBroken: { $0.trigger == .onDemand && $0.when != nil }),
    .init(
      "trigger", is: StepTrigger.onDemand.rawValue, excludes: "once", reportedAt: "once",
      onDemandWithContext("once"), isBroken: { $0.trigger == .onDemand && $0.once != nil }),
    .init(
      "trigger", is: StepTrigger.onDemand.rawValue, excludes: "cache", reportedAt: "cache",
      "an on-demand step cannot have a 'cache': its output is served at the launch's start, and an on-demand step is not part of the launch. Remove 'cache' or 'trigger'.",
      isBroken: { $0.trigger == .onDemand && $0.cache != nil }),
    .init(
      "once", excludes: "cache", reportedAt: "once",
      "a run-once step cannot have a 'cache': on the launches that skip it there is no output to serve or refresh. Remove 'cache' or 'once'.",
      isBroken: { $0.once != nil && $0.cache != nil }),
  ]

  /// Whether a step with `trigger` and `once` may break one of ``stepRules``: each is about an
  /// on-demand step (`"trigger": "onDemand"`) or a run-once one (`once`). Asked first, of the
  /// two fields read in place: handing a step to the rules' closures, or to any function,
  /// copies it whole, a retain of each of its fields.
  static func mayBreakStepRules(trigger: StepTrigger, once: RunOnce?) -> Bool {
    trigger == .onDemand || once != nil
  }

  /// Why an on-demand step cannot have `key` (`when` or `once`).
  private static func onDemandWithContext(_ key: String) -> String {
    "an on-demand step cannot have '\(key)': it runs when the app ensures it, whatever the launch. Check the context in the app before ensuring it, or remove 'trigger'."
  }

  /// Why a `timeout` of 0 is refused.
  static let zeroTimeout: @Sendable (String) -> String = { _ in
    "a 'timeout' of 0 times out every attempt before it runs; give the limit per attempt (\"5s\"), or remove 'timeout' for none."
  }

  /// A step's cache.
  static let cache: [ManifestField<CachePolicy>] = [
    .value(
      "maxAge", .positiveDuration, default: "no limit",
      "an older entry is not served; the step runs",
      invalid: { _ in
        "a 'maxAge' of 0 never serves the entry; give how old it may be (\"7d\"), or remove 'cache'."
      }, into: { $0.maxAge = $1 }, read: { $0.duration($1, at: $2()) })
  ]

  /// A step's condition; every key optional, all must hold.
  static let when: [ManifestField<StepCondition>] = [
    .value(
      "reason", .names, default: "any", "the launch reasons it runs for (`userTap`, `url`, ...)",
      into: { $0.reasons = $1 },
      read: { reader, value, path in
        guard let reasons = reader.stringArray(value, at: path(), what: "launch reasons") else {
          return nil
        }
        // Any name is a reason an app may use; one a letter or a case away from a known one is
        // more likely a typo, and a step that never runs because of it is hard to notice.
        for (index, reason) in reasons.enumerated() {
          if let known = LaunchContext.Reason.nearKnown(reason) {
            reader.diagnostics.report(
              "'\(reason)' is not a known launch reason; did you mean '\(known)'? (Other names are allowed, for reasons the app hands on itself.)",
              at: path().appending(index), severity: .warning)
          }
        }
        return reasons
      }),
    .value(
      "firstLaunch", .boolean, default: "either",
      "`true`: only on the first launch; `false`: never on it", into: { $0.firstLaunch = $1 },
      read: { $0.boolean($1, at: $2()) }),
    .value(
      "afterUpgrade", .boolean, default: "either",
      "`true`: only on the first launch of a new app version; `false`: never on it",
      into: { $0.afterUpgrade = $1 }, read: { $0.boolean($1, at: $2()) }),
    .value(
      "prewarmed", .boolean, default: "either",
      "`true`: only when the system prewarmed the app; `false`: never then",
      into: { $0.prewarmed = $1 }, read: { $0.boolean($1, at: $2()) }),
    .value(
      "safeMode", .boolean, default: "either",
      "`false`: skipped in safe mode (reason `safe mode`); `true`: only in safe mode",
      into: { $0.safeMode = $1 }, read: { $0.boolean($1, at: $2()) }),
  ]

  /// When a launch runs in safe mode.
  static let safeMode: [ManifestField<SafeModePolicy>] = [
    .required(
      "after", .integer(minimum: 1, maximum: LaunchRecord.recentLimit),
      "launches in a row that never reached the first screen",
      missing:
        "missing key 'after' in 'safeMode'; say after how many failed launches, like \"after\": 2.",
      invalid: { _ in
        "'after' counts launches that never reached the first screen; use a number from 1 to \(LaunchRecord.recentLimit)."
      }, into: { $0.after = $1 },
      read: { $0.integer($1, at: $2()) }
    )
  ]

  /// A retry policy.
  static let retry: [ManifestField<RetryPolicy>] = [
    .required(
      "attempts", .integer(minimum: 1, maximum: 100), "attempts in all, the first included",
      missing: "missing key 'attempts' in 'retry'.",
      invalid: { _ in
        "'attempts' counts every attempt including the first; use a number from 1 to 100."
      }, into: { $0.attempts = $1 },
      read: { $0.integer($1, at: $2()) }
    ),
    .value(
      "backoff", .duration, default: "0", "the wait before the second attempt; it doubles after",
      into: { $0.backoff = $1 }, read: { $0.duration($1, at: $2()) }),
  ]

  /// What runs when a step has failed every attempt.
  static let fallback: [ManifestField<FallbackDeclaration>] = [
    .value(
      "params", .params, default: "none",
      "merged over the step's own, key by key; params that must or must not come together (`orchestrate plugins` lists them) are checked once merged, which the JSON Schema cannot do",
      into: { $0.params = $1 }, read: { $0.params($1, at: $2()) }),
    .value(
      "plugin", .pluginKind, default: "the step's own",
      "another kind to run, with only the fallback's `params`", into: { $0.plugin = $1 },
      read: { $0.string($1, at: $2()) }),
  ]

  /// The splash screen's timing.
  static let splash: [ManifestField<SplashPolicy>] = [
    .value(
      "dismissOn", .milestoneName, default: "`interactive`",
      "the milestone that brings the content", into: { $0.dismissOn = $1 },
      read: { $0.string($1, at: $2()) }),
    .value(
      "minimum", .duration, default: "0", "the splash shows at least this long",
      into: { $0.minimum = $1 }, read: { $0.duration($1, at: $2()) }),
    .value(
      "skeletonAfter", .duration, default: "`150ms`",
      "a skeleton replaces the splash when content is this late past `minimum`",
      into: { $0.skeletonAfter = $1 }, read: { $0.duration($1, at: $2()) }),
  ]

  /// The app's identity, for rehearsals outside the app.
  static let app: [ManifestField<AppInfo>] = [
    .required(
      "version", .version, "the app's version, such as `1.10.0`",
      missing: "missing key 'version' in 'app'; write it like \"1.10.0\".",
      invalid: { found in
        found.isEmpty
          ? "'version' cannot be empty; write it like \"1.10.0\"."
          : "'\(found)' is not a version; write it like \"1.10.0\"."
      },
      into: { $0.version = $1 },
      read: { $0.string($1, at: $2()) }
    ),
    .value(
      "build", .string(minLength: 1), default: "none", "the build number",
      invalid: { _ in "'build' cannot be empty; leave it out or write it like \"41\"." },
      into: { $0.build = $1 },
      read: { $0.string($1, at: $2()) }
    ),
  ]
}

// Each object's fields are described from its table only when asked: a table is built when a
// manifest first holds its object, not because another table's shape names it.
extension ManifestObjectInfo {
  static let defaults = Self(name: "defaults") { ManifestFields.defaults.infos() }
  static let step = Self(
    name: "step", isDefinition: true, fields: { ManifestFields.step.infos() },
    rules: { ManifestFields.stepRules.map(\.info) })
  static let retry = Self(name: "retry", isDefinition: true) { ManifestFields.retry.infos() }
  static let fallback = Self(name: "fallback") { ManifestFields.fallback.infos() }
  static let splash = Self(name: "splash") { ManifestFields.splash.infos() }
  static let app = Self(name: "app") { ManifestFields.app.infos() }
  static let cache = Self(name: "cache") { ManifestFields.cache.infos() }
  static let when = Self(name: "when") { ManifestFields.when.infos() }
  static let safeMode = Self(name: "safeMode") { ManifestFields.safeMode.infos() }
  static let topLevel = Self(name: "manifest") { ManifestFields.topLevel.infos() }
}

extension StepDeclaration {
  /// A step before any of its members is read: copied for each step, which costs less than
  /// making it from its initializer's defaults.
  static let unread = StepDeclaration(id: "", plugin: "")
}

/// A manifest's top level as it is read, before defaults fill what was left out.
struct ManifestDraft {
  var schemaReference: String?
  var version: Int?
  var name: String?
  var maxConcurrency: Int?
  var defaults = StepDefaults()
  var milestones: [MilestoneDeclaration] = []
  var splash: SplashPolicy?
  var app: AppInfo?
  var signals: [String] = []
  var safeMode: SafeModePolicy?
  var steps: [StepDeclaration] = []
}
