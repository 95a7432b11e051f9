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
  /// (a new case breaks an app's `switch`; a new requirement, a conformance).
  static func declarations(in text: String) -> [String] {
    var declarations: [String] = []
    var pending: (text: String, depth: Int)?
    /// The braces open before the current line.
    var braces = 0
    /// The public enums and protocols whose bodies are open: their kind, and the brace depth
    /// of their members.
    var bodies: [(isProtocol: Bool, depth: Int)] = []
    var expectsBody: Bool?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let code = line.trimmingCharacters(in: .whitespaces)
      let lineBraces = braceBalance(of: code)
      defer {
        if let isProtocol = expectsBody, code.contains("{") {
          bodies.append((isProtocol, braces + 1))
          expectsBody = nil
        }
        braces += lineBraces
        while let last = bodies.last, braces < last.depth { bodies.removeLast() }
      }
      if let open = pending {
        let joined = open.text + (open.text.hasSuffix("(") ? "" : " ") + code
        let depth = open.depth + parenthesisBalance(of: code)
        if depth <= 0 {
          declarations.append(upToBody(joined))
          pending = nil
        } else {
          pending = (joined, depth)
        }
        continue
      }
      let declaration = withoutAttributes(code)
      if let body = bodies.last, body.depth == braces, isImplicitlyPublic(declaration, body) {
        // A requirement has no body: its `{ get }` says what it asks for.
        declarations.append(body.isProtocol ? declaration : upToBody(declaration))
        continue
      }
      guard declaration.hasPrefix("public ") || declaration.hasPrefix("open ") else { continue }
      if declaration.contains(" enum ") { expectsBody = false }
      if declaration.contains(" protocol ") { expectsBody = true }
      let depth = parenthesisBalance(of: declaration)
      if depth > 0 {
        pending = (declaration, depth)
      } else {
        declarations.append(upToBody(declaration))
      }
    }
    return declarations
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
      """
    #expect(
      Self.declarations(in: text) == [
        "public func run(_ plan: LaunchPlan, events: Int? = nil, date: @escaping () -> Date = { Date() } ) async -> Report",
        "public var screen: Screen", "public init(_ value: Int)",
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
        "public enum Screen: Sendable", "case splash", "case failed(LaunchFailure)",
        "public protocol Step: Sendable", "associatedtype Output",
        "static var kind: String { get }",
        "func run(_ context: Context) async throws -> Output", "public static var kind: String",
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
