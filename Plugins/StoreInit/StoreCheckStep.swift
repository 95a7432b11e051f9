import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `store.check`: the full integrity check of the store, meant to run deferred, after
/// `interactive`, since it reads every page; a damaged store is recorded and the next launch's
/// `store.init` moves it aside and creates a new one.
public struct StoreCheckStep: StepPlugin {
  /// The kind name.
  public static let kind = "store.check"
  /// What the step does.
  public static let summary =
    "Checks the whole store for damage (PRAGMA quick_check), off the launch path: run it with deferUntil; a damaged store is recovered at the next launch."
  /// It needs the store.
  public static let inputs: [StepInput] = [.required(StoreHandle.self)]
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter(
      "Run PRAGMA integrity_check, which also checks indexes against their tables (slower).")
    var full = false

    /// The quick check.
    public init() {}
  }

  private let full: Bool

  /// Reads the parameters.
  public init(parameters: Parameters) {
    full = parameters.full
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Checks the store; fails, after recording the damage, when it finds any.
  public func run(_ context: StepContext) async throws -> StoreCheckResult {
    let store = try context.input(StoreHandle.self)
    let pragma = full ? "integrity_check" : "quick_check"
    let problems: [String]
    do {
      let connection = try SQLiteConnection(
        url: store.url, mode: .readOnly, busyTimeout: store.busyTimeout)
      connection.interruptsWhenCancelled()
      problems = try connection.query("PRAGMA \(pragma)") { $0.text(0) ?? "" }.filter {
        $0 != "ok"
      }
    } catch let error as SQLiteError where error.isCorruption {
      problems = [error.message]
    } catch let error as SQLiteError where error.isInterrupted {
      throw CancellationError()
    }
    guard !problems.isEmpty else {
      context.log("the store passed PRAGMA \(pragma)")
      return StoreCheckResult(problems: [])
    }
    let finding = "PRAGMA \(pragma) found: \(problems.prefix(3).joined(separator: "; "))"
    guard !store.isReadOnly else {
      throw StepFailure(
        "the store '\(store.url.path)' is damaged (\(finding)); open it read-write to have it moved aside and recreated"
      )
    }
    try store.recordDamage(finding)
    throw StepFailure(
      "the store '\(store.url.path)' is damaged (\(finding)); the next launch moves it aside and creates a new one"
    )
  }
}

/// What `store.check` found.
public struct StoreCheckResult: Sendable, Equatable {
  /// SQLite's findings; empty when the store is intact.
  public var problems: [String]
}
