import LaunchJSON

/// What a parameter declares of others (`requires:`, `excludes:` of ``Parameter``): checked
/// when params are decoded, stated in the manifest's JSON Schema and by `orchestrate plugins`.
///
/// A parameter counts as given when the params hold a value for it other than `null`, which
/// leaves it out, and `false`, which leaves it off.
enum ParameterRules {
  /// Says that `name` is given without `other`, which it requires.
  static func requires(_ name: String, _ other: String) -> String {
    "'\(name)' needs '\(other)' too; give '\(other)', or remove '\(name)'."
  }

  /// Says that `name` is given with `other`, which it excludes.
  static func excludes(_ name: String, _ other: String) -> String {
    "'\(name)' cannot be used with '\(other)'; remove one of them."
  }

  /// Whether `members` give the parameter `key`.
  static func isGiven(_ key: String, in members: [JSONMember]) -> Bool {
    guard let member = members.first(where: { $0.key == key }) else { return false }
    switch member.value.kind {
    case .null, .bool(false): return false
    default: return true
    }
  }
}
