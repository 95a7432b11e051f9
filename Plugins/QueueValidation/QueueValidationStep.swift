import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `queue.validate`: drops persisted enrichment-queue entries whose work no longer exists in
/// the store, and rewrites the queue file atomically.
///
/// The queue is a JSON array of objects, each with an integer `workId`; other members are kept
/// as they are. A missing queue is an empty one; an unreadable one is moved aside, never lost.
public struct QueueValidationStep: StepPlugin {
  /// The kind name.
  public static let kind = "queue.validate"
  /// What the step does.
  public static let summary =
    "Drops enrichment-queue entries whose work no longer exists in the store; rewrites the queue atomically."
  /// It needs the store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "path", .path, required: true,
      "The queue file: a JSON array of entries with an integer 'workId'.")
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var path: String
  }

  private let path: String

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    guard !parameters.path.isEmpty else { throw ParameterError("path", "'path' cannot be empty.") }
    path = parameters.path
  }

  /// File and SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Validates the queue against the store.
  public func run(_ context: StepContext) async throws -> QueueValidationResult {
    let url = context.resolve(path)
    guard FileManager.default.fileExists(atPath: url.path) else {
      context.log("no queue at \(url.path); nothing to validate")
      return QueueValidationResult(kept: 0, dropped: 0, movedAside: nil)
    }
    let entries: [(workId: Int64, value: JSONValue)]
    do {
      entries = try Self.read(Array(try Data(contentsOf: url)))
    } catch let problem as QueueFormatProblem {
      let aside = try SafeFiles.moveAside(url, label: "unreadable")
      context.log(
        "the queue was unreadable (\(problem.reason)); moved it aside to \(aside.lastPathComponent)"
      )
      return QueueValidationResult(kept: 0, dropped: 0, movedAside: aside)
    }

    let store = try context.input(StoreHandle.self)
    let connection = try store.connect()
    var existing: Set<Int64> = []
    let ids = Array(Set(entries.map(\.workId)))
    for start in stride(from: 0, to: ids.count, by: 500) {
      let chunk = ids[start..<min(start + 500, ids.count)]
      let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
      existing.formUnion(
        try connection.query(
          "SELECT id FROM works WHERE id IN (\(marks))", chunk.map { .integer($0) }
        ) {
          $0.integer(0)
        })
    }
    let kept = entries.filter { existing.contains($0.workId) }
    let dropped = entries.count - kept.count
    if dropped > 0 {
      let text = JSONWriter.prettyPrinted(JSONValue(.array(kept.map(\.value))))
      try SafeFiles.writeAtomically(Data(text.utf8), to: url)
      context.log(
        "dropped \(dropped) queue entries whose work no longer exists; kept \(kept.count)")
    } else {
      context.log("all \(kept.count) queue entries are valid")
    }
    return QueueValidationResult(kept: kept.count, dropped: dropped, movedAside: nil)
  }

  private struct QueueFormatProblem: Error {
    var reason: String
  }

  private static func read(_ bytes: [UInt8]) throws(QueueFormatProblem) -> [(
    workId: Int64, value: JSONValue
  )] {
    let root: JSONValue
    do {
      root = try JSONParser.parse(bytes).root
    } catch {
      throw QueueFormatProblem(reason: "invalid JSON: \(error.message)")
    }
    guard let elements = root.elements else {
      throw QueueFormatProblem(
        reason: "expected an array of entries, found \(root.typeDescription)")
    }
    var entries: [(workId: Int64, value: JSONValue)] = []
    for (index, element) in elements.enumerated() {
      guard case .number(let number)? = element["workId"]?.kind, let workId = Int64(exactly: number)
      else {
        throw QueueFormatProblem(reason: "entry \(index) has no integer 'workId'")
      }
      entries.append((workId, element))
    }
    return entries
  }
}

/// What `queue.validate` did.
public struct QueueValidationResult: Sendable, Equatable {
  /// Entries left in the queue.
  public var kept: Int
  /// Entries removed because their work is gone.
  public var dropped: Int
  /// Where an unreadable queue was moved.
  public var movedAside: URL?
}
