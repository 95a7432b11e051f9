import Foundation
import LaunchOrchestrator
import SQLiteStore

/// `images.cleanup`: removes images of reviewed scans, and orphaned files older than `maxAge`,
/// from one directory.
///
/// It only ever removes entries it found by walking its own directory with `lstat`: it never
/// leaves the directory, never descends through a symbolic link, and removes a link itself at
/// most, never its target. With a store among its dependencies, images its scans still
/// reference are kept; without one, every file older than `maxAge` counts as orphaned.
public struct ImageCleanupStep: StepPlugin {
  /// The kind name.
  public static let kind = "images.cleanup"
  /// What the step does.
  public static let summary =
    "Removes reviewed scan images and orphaned files older than maxAge from one directory, never following links."
  /// It uses the store's scans when a dependency provides one.
  public static let inputs: [StepInput] = [.optional(StoreHandle.self)]
  /// The parameters.
  public static let parameterDescriptions: [ParameterDescription] = [
    .init(
      "directory", .path, required: true, "The image directory; relative to the manifest's folder."),
    .init("maxAge", .duration, default: "24h", "Orphaned files younger than this are kept."),
    .init("dryRun", .boolean, default: "false", "Report what would be removed, remove nothing."),
  ]

  /// What a manifest gives the step.
  public struct Parameters: Decodable, Sendable {
    var directory: String
    var maxAge: DurationParameter?
    var dryRun: Bool?
  }

  private let directory: String
  private let maxAge: Duration
  private let dryRun: Bool

  /// Checks the parameters.
  public init(parameters: Parameters) throws {
    guard !parameters.directory.isEmpty else {
      throw ParameterError("directory", "'directory' cannot be empty.")
    }
    directory = parameters.directory
    maxAge = parameters.maxAge?.duration ?? .seconds(86_400)
    dryRun = parameters.dryRun ?? false
  }

  /// File and SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Cleans the directory.
  public func run(_ context: StepContext) async throws -> ImageCleanupResult {
    let root = context.resolve(directory)
    let files = FileManager.default
    guard let rootType = try? files.attributesOfItem(atPath: root.path)[.type] as? FileAttributeType
    else {
      context.log("no directory at \(root.path); nothing to clean")
      return ImageCleanupResult(removedFiles: 0, removedBytes: 0, dryRun: dryRun)
    }
    guard rootType == .typeDirectory else {
      throw StepFailure(
        "'\(root.path)' is not a directory (a symbolic link is not followed); name the real folder")
    }

    let store = context.inputs(StoreHandle.self).first
    var referenced: Set<String> = []
    var reviewed: [String: [Int64]] = [:]
    if let store {
      let connection = try store.connect()
      let scans = try connection.query(
        "SELECT id, image_path, reviewed FROM scans WHERE image_path IS NOT NULL"
      ) {
        (id: $0.integer(0), path: $0.text(1) ?? "", reviewed: $0.integer(2) != 0)
      }
      for scan in scans {
        if scan.reviewed {
          reviewed[scan.path, default: []].append(scan.id)
        } else {
          referenced.insert(scan.path)
        }
      }
    }

    let cutoff = Date().addingTimeInterval(-maxAge.seconds)
    var removed = (reviewed: 0, orphaned: 0, bytes: Int64(0))
    var clearedScans: [Int64] = []
    for entry in try walk(root) {
      let isReviewed = reviewed[entry.relativePath] != nil
      let isOrphaned =
        !isReviewed && !referenced.contains(entry.relativePath) && entry.modified < cutoff
      guard isReviewed || isOrphaned else { continue }
      if !dryRun {
        // unlink never follows a link and never removes a directory.
        guard unlink(entry.url.path) == 0 else {
          context.log("could not remove \(entry.relativePath): \(String(cString: strerror(errno)))")
          continue
        }
      }
      removed.bytes += entry.size
      if isReviewed {
        removed.reviewed += 1
        clearedScans += reviewed[entry.relativePath] ?? []
      } else {
        removed.orphaned += 1
      }
    }
    if let store, !dryRun, !clearedScans.isEmpty, !store.isReadOnly {
      let connection = try store.connect()
      try connection.immediateTransaction {
        for id in clearedScans {
          try connection.run("UPDATE scans SET image_path = NULL WHERE id = ?", [.integer(id)])
        }
      }
    }
    let count = removed.reviewed + removed.orphaned
    let size = ByteCountFormatter.string(fromByteCount: removed.bytes, countStyle: .file)
    context.log(
      "\(dryRun ? "dry run: would remove" : "removed") \(count) files (\(size)): "
        + "\(removed.reviewed) reviewed scan images, \(removed.orphaned) orphaned files")
    return ImageCleanupResult(removedFiles: count, removedBytes: removed.bytes, dryRun: dryRun)
  }

  private struct Entry {
    var url: URL
    var relativePath: String
    var modified: Date
    var size: Int64
  }

  /// Regular files and links below `root`, found with `lstat`; real subdirectories are
  /// walked, linked ones are not.
  private func walk(_ root: URL) throws -> [Entry] {
    let files = FileManager.default
    var entries: [Entry] = []
    var pending = [(url: root, relative: "")]
    while let (folder, relative) = pending.popLast() {
      for name in try files.contentsOfDirectory(atPath: folder.path).sorted() {
        let url = folder.appendingPathComponent(name)
        let path = relative.isEmpty ? name : "\(relative)/\(name)"
        let attributes = try files.attributesOfItem(atPath: url.path)
        switch attributes[.type] as? FileAttributeType {
        case .typeDirectory?:
          pending.append((url, path))
        case .typeRegular?, .typeSymbolicLink?:
          entries.append(
            Entry(
              url: url, relativePath: path,
              modified: attributes[.modificationDate] as? Date ?? .distantFuture,
              size: (attributes[.size] as? NSNumber)?.int64Value ?? 0))
        default:
          continue
        }
      }
    }
    return entries
  }
}

/// What `images.cleanup` did.
public struct ImageCleanupResult: Sendable, Equatable {
  /// Files (or links) removed, or that would be in a dry run.
  public var removedFiles: Int
  /// Their size in bytes.
  public var removedBytes: Int64
  /// Whether nothing was actually removed.
  public var dryRun: Bool
}
