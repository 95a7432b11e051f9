import Foundation
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// `images.cleanup`: removes images of reviewed scans, and orphaned files older than `maxAge`,
/// from one directory.
///
/// It opens its directory one component at a time without following links, then works only
/// through that open folder's descriptor (`openat`, `fstatat`, `unlinkat`, never a path), so
/// a folder swapped for a link while it runs cannot lead it elsewhere; it removes a link
/// itself at most, never its target. Each file's identity and age are checked again right
/// before it is removed. It refuses `/`, the home folder, system folders, and any folder
/// that is or holds the manifest's folder, the data folder or the store, or that holds any
/// SQLite database (a store it does not depend on); a database, with its `-wal`, `-shm` and
/// `-journal` files, found in a subfolder is kept. Names that are not UTF-8 and files that
/// vanish are skipped and counted. With a store among its dependencies, images its scans
/// still reference are kept, and with a read-only store the reviewed ones too; without a
/// store, every file older than `maxAge` counts as orphaned.
public struct ImageCleanupStep: StepPlugin {
  /// The kind name.
  public static let kind = "images.cleanup"
  /// What the step does.
  public static let summary =
    "Removes reviewed scan images and orphaned files older than maxAge from one directory, never following links."
  /// It uses the store's scans when a dependency provides one.
  public static let inputs: [StepInput] = [.optional(StoreHandle.self)]
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    @Parameter(
      "The image directory; relative to the launch's data folder.", isPath: true,
      removesFiles: true)
    var directory: String
    @Parameter("Orphaned files younger than this are kept.") var maxAge = Duration.seconds(86_400)
    @Parameter("Report what would be removed, remove nothing.") var dryRun = false

    /// No directory yet: a manifest must give one.
    public init() {}
  }

  private let directory: String
  private let maxAge: Duration
  private let dryRun: Bool

  /// Keeps the parameters, which their declarations checked.
  public init(parameters: Parameters) {
    directory = parameters.directory
    maxAge = parameters.maxAge
    dryRun = parameters.dryRun
  }

  /// File and SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Cleans the directory.
  public func run(_ context: StepContext) async throws -> ImageCleanupResult {
    let root = directory.hasPrefix("/") ? directory : context.dataDirectory.path + "/" + directory
    let shown = context.resolve(directory).path
    let store = context.inputs(StoreHandle.self).first
    let folder: DirectoryHandle
    let physicalPath: [String]
    do {
      let (handle, physical) = try DirectoryHandle.openFolder(atPath: root)
      physicalPath = physical
      let protected = ProtectedFolders(
        manifestDirectory: context.manifestDirectory, dataDirectory: context.dataDirectory,
        store: store?.url, home: NSHomeDirectory())
      // A store the step does not depend on is unknown to it, but still no image.
      if let reason = protected.reason(for: handle, physicalPath: physical)
        ?? handle.firstSQLiteDatabase().map({ "it holds the SQLite database '\($0)' (a store)" })
      {
        throw StepFailure(
          "images.cleanup will not clean '\(shown)': \(reason), and it deletes files in the "
            + "folder it is given; name the images folder itself (a folder that holds only images)")
      }
      folder = handle
    } catch let failure as DirectoryHandle.PathFailure {
      switch failure {
      case .missing:
        context.log("no directory at \(shown); nothing to clean")
        return ImageCleanupResult(removedFiles: 0, removedBytes: 0, dryRun: dryRun)
      case .symbolicLink(let link):
        throw StepFailure(
          "'\(shown)' passes through the symbolic link '\(link)', and images.cleanup never "
            + "follows links (one swapped in could lead it to delete elsewhere); name the real folder"
        )
      case .notADirectory(let path):
        throw StepFailure("'\(path)' is not a directory; name the images folder")
      case .system(let code, let path):
        throw StepFailure("cannot open '\(path)': \(String(cString: strerror(code)))")
      }
    }

    if let reason = store?.newStoreReason {
      // Every image is unknown to a new store: none of them is an orphan.
      context.log("removed nothing: \(reason), so an image no scan names may still be the app's")
      return ImageCleanupResult(removedFiles: 0, removedBytes: 0, dryRun: dryRun)
    }

    // Paths inside the folder, however the store spells them: an image any scan that is not
    // reviewed names, or reaches through links in the folder, is kept, even when a reviewed
    // scan names it too.
    var referenced: Set<String> = []
    // A reviewed scan's image goes whatever its age: it is the file the file system finds at
    // the scan's path, by its identity, never a name equal to it only in Swift's eyes (`café`
    // composed, and not: two files on Linux, one on Apple's systems). A name kept is kept
    // however it is spelled (`referenced`): keeping too much is safe.
    var reviewedPaths: Set<String> = []
    var reviewed: [DirectoryHandle.Identity: [Int64]] = [:]
    if let store {
      let references = ImageReferences(
        folder: root, physicalPath: physicalPath, dataDirectory: context.dataDirectory)
      let connection = try store.connect()
      let scans: [(id: Int64, path: String, reviewed: Bool)]
      do {
        scans = try connection.query(
          "SELECT id, image_path, reviewed FROM scans WHERE image_path IS NOT NULL"
        ) {
          (id: $0.integer(0), path: $0.text(1) ?? "", reviewed: $0.integer(2) != 0)
        }
      } catch let error as SQLiteError where error.message.hasPrefix("no such table") {
        // A store of another schema: SQLite's words alone name no cause.
        throw StepFailure(
          "the \(store.schema.name) store '\(store.url.path)' has no scans (\(error.message)); "
            + "images.cleanup judges images against a store with a 'scans' table, such as the "
            + "screensort schema's: depend on that store's step, or on none; nothing was removed")
      }
      for scan in scans {
        let paths = references.paths(for: scan.path)
        guard scan.reviewed else {
          // With the links it passes through and what they lead to: the app follows them.
          for path in paths { referenced.formUnion(references.reached(from: path, in: folder)) }
          continue
        }
        // One that names nothing inside the folder removes nothing.
        guard !paths.isEmpty else { continue }
        reviewedPaths.formUnion(paths)
        for spelling in references.spellings(of: scan.path) {
          var info = stat()
          guard lstat(spelling, &info) == 0 else { continue }
          reviewed[DirectoryHandle.Identity(info), default: []].append(scan.id)
        }
      }
      // Counted by name for the note; each file is checked against the names kept as it goes.
      let shared = reviewedPaths.filter(referenced.contains)
      if !shared.isEmpty {
        context.log(
          "kept \(shared.count) images of reviewed scans that scans not yet reviewed also name")
      }
    }

    // The store knows nothing the app wrote before it became new: older files are no orphans.
    // Read after the scans: a store a launch beside this one recovered is recorded by then.
    let storeCreated: Date?
    do {
      storeCreated = try store?.recordedCreation()
    } catch {
      context.log(
        "removed nothing: cannot tell when the store became new (\(error)), and so which files"
          + " it knows")
      return ImageCleanupResult(removedFiles: 0, removedBytes: 0, dryRun: dryRun)
    }
    var cleaner = ImageCleaner(
      cutoff: Date().timeIntervalSince1970 - maxAge / .seconds(1),
      storeCreated: storeCreated?.timeIntervalSince1970, dryRun: dryRun,
      reviewed: reviewed, referenced: referenced,
      // A read-only store cannot forget a removed image, so its scans' images stay.
      keepsReviewed: store?.isReadOnly ?? false, log: { context.log($0) })
    cleaner.checkCancellation = { try Task.checkCancellation() }
    try cleaner.clean(folder)

    if let store, !dryRun, !cleaner.clearedScans.isEmpty, !store.isReadOnly {
      let connection = try store.connect()
      try connection.immediateTransaction {
        for id in cleaner.clearedScans {
          try connection.run("UPDATE scans SET image_path = NULL WHERE id = ?", [.integer(id)])
        }
      }
    }
    let count = cleaner.removedReviewed + cleaner.removedOrphans
    let size = ByteCountFormatter.string(fromByteCount: cleaner.removedBytes, countStyle: .file)
    context.log(
      "\(dryRun ? "dry run: would remove" : "removed") \(count) files (\(size)): "
        + "\(cleaner.removedReviewed) reviewed scan images, \(cleaner.removedOrphans) orphaned files"
    )
    if cleaner.keptForReadOnlyStore > 0 {
      context.log(
        "kept \(cleaner.keptForReadOnlyStore) reviewed scan images: the store is read-only, so "
          + "their scans would still name them")
    }
    if cleaner.keptOlderThanStore > 0, let storeCreated {
      context.log(
        "kept \(cleaner.keptOlderThanStore) files no scan names that are older than the store"
          + " (new at \(storeCreated.formatted(.iso8601))): it does not know what the app wrote"
          + " before")
    }
    if cleaner.keptDatabases > 0 {
      context.log(
        "kept \(cleaner.keptDatabases) SQLite database files found in subfolders: a store is never "
          + "an image; move it out of the images folder")
    }
    if cleaner.skippedNames > 0 {
      context.log(
        "skipped \(cleaner.skippedNames) entries whose names are not UTF-8; rename them to clean them"
      )
    }
    if cleaner.skippedChanged > 0 {
      context.log(
        "skipped \(cleaner.skippedChanged) entries that vanished, were replaced or changed while "
          + "cleaning")
    }
    return ImageCleanupResult(
      removedFiles: count, removedBytes: cleaner.removedBytes, dryRun: dryRun,
      skipped: cleaner.skippedNames + cleaner.skippedChanged + cleaner.skippedFailed)
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
  /// Entries left alone: names that are not UTF-8, files that vanished or changed while
  /// cleaning, and files that could not be removed.
  public var skipped: Int = 0
}
