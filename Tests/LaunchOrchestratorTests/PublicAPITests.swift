import Foundation
import Testing

/// The package's public surface, listed in docs/public-api.txt, so that a declaration made
/// `public` by accident shows up in review as a change to that file.
@Suite("Public API")
struct PublicAPITests {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  /// The folders of the library products, whose public declarations apps and plugins use.
  private static let folders = [
    "Sources/LaunchOrchestrator", "Sources/LaunchJSON", "Sources/LaunchTesting",
    "Sources/OrchestrateCLI", "Plugins",
  ]

  /// One line per public or open declaration: `file: declaration`, up to its body, with a
  /// signature that spans lines joined into one, so a changed parameter shows too.
  static func surface() throws -> String {
    var lines: [String] = []
    for folder in folders {
      let base = root.appendingPathComponent(folder)
      let files = try #require(FileManager.default.enumerator(atPath: base.path))
        .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
      for file in files {
        let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
        for declaration in declarations(in: text) {
          lines.append("\(folder)/\(file): \(declaration)")
        }
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The public and open declarations of a Swift file, attributes before them left out
  /// (`@discardableResult public func` is as public as `public func`), with the cases of a
  /// public enum and the requirements of a public protocol, which are public without saying so
  /// (a new case breaks an app's `switch`; a new requirement, a conformance). A declaration
  /// inside a type or extension is prefixed with it (`[LaunchReport.Step] public var id`), and
  /// one written over several lines is joined whole, up to its body: its `throws` and return
  /// type on a line of their own too.
  static func declarations(in text: String) -> [String] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    var declarations: [String] = []
    var pending: (text: String, depth: Int, context: String)?
    /// The braces open before the current line.
    var braces = 0
    /// The public enums and protocols whose bodies are open: their kind, and the brace depth
    /// of their members.
    var bodies: [(isProtocol: Bool, depth: Int)] = []
    var expectsBody: Bool?
    /// The types and extensions whose bodies are open, and the one whose `{` is still to come.
    var scopes: [(name: String, depth: Int)] = []
    var openingScope: String?
    for (index, code) in lines.enumerated() {
      let lineBraces = braceBalance(of: code)
      let context = scopes.isEmpty ? "" : "[\(scopes.map(\.name).joined(separator: "."))] "
      let continues = index + 1 < lines.count && continuesDeclaration(lines[index + 1])
      defer {
        if let isProtocol = expectsBody, code.contains("{") {
          bodies.append((isProtocol, braces + 1))
          expectsBody = nil
        }
        if let name = scopeName(declaredBy: code) ?? openingScope {
          if code.contains("{") {
            scopes.append((name, braces + 1))
            openingScope = nil
          } else {
            openingScope = name
          }
        }
        braces += lineBraces
        while let last = bodies.last, braces < last.depth { bodies.removeLast() }
        while let last = scopes.last, braces < last.depth { scopes.removeLast() }
      }
      if let open = pending {
        let joined = open.text + (open.text.hasSuffix("(") ? "" : " ") + code
        let depth = open.depth + parenthesisBalance(of: code)
        if depth <= 0 && (joined.contains("{") || !continues) {
          declarations.append(open.context + upToBody(joined))
          pending = nil
        } else {
          pending = (joined, depth, open.context)
        }
        continue
      }
      let declaration = withoutAttributes(code)
      if let body = bodies.last, body.depth == braces, isImplicitlyPublic(declaration, body) {
        // A requirement has no body: its `{ get }` says what it asks for.
        declarations.append(context + (body.isProtocol ? declaration : upToBody(declaration)))
        continue
      }
      guard declaration.hasPrefix("public ") || declaration.hasPrefix("open ") else { continue }
      if declaration.contains(" enum ") { expectsBody = false }
      if declaration.contains(" protocol ") { expectsBody = true }
      let depth = parenthesisBalance(of: declaration)
      if depth > 0 || (!declaration.contains("{") && continues) {
        pending = (declaration, depth, context)
      } else {
        declarations.append(context + upToBody(declaration))
      }
    }
    return declarations
  }

  /// Whether `line` goes on with the declaration above it: its effects, return type, generic
  /// constraints or conformances.
  private static func continuesDeclaration(_ line: String) -> Bool {
    ["->", "throws", "rethrows", "async", "where ", "&", ",", ")"].contains { line.hasPrefix($0) }
  }

  /// The name of the type a line declares, or what an extension extends (with its conformances
  /// and constraints, which tell same-named members apart); `nil` for other lines.
  private static func scopeName(declaredBy code: String) -> String? {
    let modifiers: Set = [
      "public", "package", "internal", "fileprivate", "private", "open", "final", "indirect",
    ]
    var words = withoutAttributes(code).split(separator: " ")[...]
    while let first = words.first, modifiers.contains(String(first)) { words = words.dropFirst() }
    guard let keyword = words.first, words.count > 1 else { return nil }
    let rest = words.dropFirst().joined(separator: " ")
    let header = rest.split(separator: "{", maxSplits: 1).first.map(String.init) ?? rest
    switch keyword {
    case "extension": return header.trimmingCharacters(in: .whitespaces)
    case "struct", "class", "enum", "protocol", "actor":
      return String(header.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    default: return nil
    }
  }

  /// Whether `declaration`, a member of a public enum or protocol, is public without saying so.
  private static func isImplicitlyPublic(
    _ declaration: String, _ body: (isProtocol: Bool, depth: Int)
  ) -> Bool {
    guard body.isProtocol else { return declaration.hasPrefix("case ") }
    let requirements = [
      "var ", "func ", "static ", "associatedtype ", "init(", "init?(", "subscript", "mutating ",
    ]
    return requirements.contains { declaration.hasPrefix($0) }
  }

  private static func braceBalance(of code: String) -> Int {
    // Braces in string literals and comments are rare in declarations; lines that are only a
    // comment are left out.
    guard !code.hasPrefix("//") else { return 0 }
    return code.reduce(0) { $0 + ($1 == "{" ? 1 : $1 == "}" ? -1 : 0) }
  }

  private static func withoutAttributes(_ code: String) -> String {
    var rest = Substring(code)
    while rest.hasPrefix("@") {
      var depth = 0
      var end = rest.endIndex
      for index in rest.indices {
        switch rest[index] {
        case "(": depth += 1
        case ")": depth -= 1
        case " " where depth == 0: end = index
        default: continue
        }
        if end != rest.endIndex { break }
      }
      guard end != rest.endIndex else { return String(rest) }
      rest = rest[end...].drop { $0 == " " }
    }
    return String(rest)
  }

  private static func parenthesisBalance(of code: String) -> Int {
    code.reduce(0) { $0 + ($1 == "(" ? 1 : $1 == ")" ? -1 : 0) }
  }

  /// The declaration before its body: up to the first `{` outside parentheses (a closure
  /// as a default value is part of the signature).
  private static func upToBody(_ declaration: String) -> String {
    var depth = 0
    for index in declaration.indices {
      switch declaration[index] {
      case "(": depth += 1
      case ")": depth -= 1
      case "{" where depth == 0:
        return declaration[..<index].trimmingCharacters(in: .whitespaces)
      default: continue
      }
    }
    return declaration.trimmingCharacters(in: .whitespaces)
  }

  @Test func readsSignaturesWholeAndSeesPastAttributes() {
    let text = """
      @discardableResult public func run(
        _ plan: LaunchPlan,
        events: Int? = nil,
        date: @escaping () -> Date = { Date() }
      ) async -> Report {
      @MainActor @available(iOS 18, *) public var screen: Screen
      package func hidden()
      public init(_ value: Int) { self.value = value }
      public func withLock<T>(_ body: () throws -> T) throws
        -> T
      {
      public struct Outer {
        public struct Inner: Sendable
        {
          public var value: Int
        }
        public var after: Int
      }
      extension Outer where Value: Equatable {
        public init(same: Int) {}
      }
      """
    #expect(
      Self.declarations(in: text) == [
        "public func run(_ plan: LaunchPlan, events: Int? = nil, date: @escaping () -> Date = { Date() } ) async -> Report",
        "public var screen: Screen", "public init(_ value: Int)",
        "public func withLock<T>(_ body: () throws -> T) throws -> T", "public struct Outer",
        "[Outer] public struct Inner: Sendable", "[Outer.Inner] public var value: Int",
        "[Outer] public var after: Int", "[Outer where Value: Equatable] public init(same: Int)",
      ])
  }

  @Test func listsTheCasesOfPublicEnumsAndTheRequirementsOfPublicProtocols() {
    let text = """
      public enum Screen: Sendable {
        /// The splash.
        case splash
        case failed(LaunchFailure)
        var isSettled: Bool { true }
      }
      enum Hidden {
        case inner
      }
      public protocol Step: Sendable {
        associatedtype Output
        static var kind: String { get }
        func run(_ context: Context) async throws -> Output
      }
      extension Step {
        public static var kind: String { "" }
      }
      """
    #expect(
      Self.declarations(in: text) == [
        "public enum Screen: Sendable", "[Screen] case splash",
        "[Screen] case failed(LaunchFailure)",
        "public protocol Step: Sendable", "[Step] associatedtype Output",
        "[Step] static var kind: String { get }",
        "[Step] func run(_ context: Context) async throws -> Output",
        "[Step] public static var kind: String",
      ])
  }

  @Test func theListedSurfaceIsTheSurfaceInTheCode() throws {
    let listing = Self.root.appendingPathComponent("docs/public-api.txt")
    let surface = try Self.surface()
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
      try surface.write(to: listing, atomically: true, encoding: .utf8)
      return
    }
    let listed = try String(contentsOf: listing, encoding: .utf8)
    #expect(
      listed == surface,
      "the public API changed; review it, then rerun with RECORD_SNAPSHOTS=1 to update docs/public-api.txt"
    )
  }

  @Test func implementationHelpersAreNotPublic() throws {
    let surface = try Self.surface()
    for helper in ["class Locked", "enum Suggestions", "enum DurationText", "struct LaunchEvents"] {
      #expect(!surface.contains(helper), "\(helper) is public")
    }
  }

  /// What an app author reads stays one page: the core's public lines, counted as the issue
  /// that set the limit counts them (`grep -c public`), comments included.
  @Test func theCoreStaysWithinItsPublicLines() throws {
    let base = Self.root.appendingPathComponent("Sources/LaunchOrchestrator")
    let files = try #require(FileManager.default.enumerator(atPath: base.path))
      .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
    var count = 0
    for file in files {
      let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
      count +=
        text.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { $0.contains("public") }.count
    }
    #expect(count <= 280, "Sources/LaunchOrchestrator has \(count) public lines, over 280")
  }
}
