import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Walks one open folder at a time and removes what qualifies: reviewed scan images, and
/// files older than the cutoff (and younger than the store) that no scan references, each
/// file checked again (identity and age) right before it goes.
struct ImageCleaner {
  /// Folders nested deeper than this are left alone: the walk holds one descriptor a level.
  static let maximumDepth = 64

  let cutoff: Double
  /// When the store was created (seconds since 1970), if it records it: a file older than
  /// the store is no orphan, since the store never knew what the app wrote before it.
  var storeCreated: Double?
  let dryRun: Bool
  /// The reviewed scans by the identity of the file the file system finds at their path.
  let reviewed: [DirectoryHandle.Identity: [Int64]]
  let referenced: Set<String>
  let keepsReviewed: Bool
  let log: (String) -> Void
  /// Called with each file's path between its listing and the check right before its
  /// removal: the moment another process may replace or touch it (tests do exactly that).
  var willRemove: (String) -> Void = { _ in }
  /// Throws when the launch no longer wants the cleanup.
  var checkCancellation: () throws -> Void = {}

  var removedReviewed = 0
  var removedOrphans = 0
  var removedBytes: Int64 = 0
  var clearedScans: [Int64] = []
  var keptForReadOnlyStore = 0
  /// Files no scan names that are older than the store.
  var keptOlderThanStore = 0
  var skippedNames = 0
  var skippedChanged = 0
  var skippedFailed = 0
  /// SQLite databases and their `-wal`, `-shm` and `-journal` files found in a subfolder: a
  /// store, perhaps of another launch, never an image.
  var keptDatabases = 0

  /// Cleans `folder`, reached as `relativePath` from the images directory, and the folders
  /// in it.
  mutating func clean(_ folder: DirectoryHandle, relativePath: String = "", depth: Int = 0) throws {
    let names: [[CChar]]
    do {
      names = try folder.entryNames()
    } catch {
      skippedFailed += 1
      log("could not list \(relativePath.isEmpty ? "the directory" : relativePath)")
      return
    }
    for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      try checkCancellation()
      guard
        let text = String(
          validating: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
      else {
        skippedNames += 1
        continue
      }
      let path = relativePath.isEmpty ? text : "\(relativePath)/\(text)"
      guard let listed = folder.status(of: name) else {
        skippedChanged += 1
        continue
      }
      switch listed.kind {
      case .directory:
        guard depth < Self.maximumDepth else {
          skippedFailed += 1
          log("left \(path) alone: folders nest deeper than \(Self.maximumDepth) levels")
          continue
        }
        let child: DirectoryHandle
        do {
          child = try folder.openDirectory(name)
        } catch {
          // Swapped for a link or removed since it was listed: not ours to follow.
          skippedChanged += 1
          continue
        }
        guard child.ownStatus()?.identity == listed.identity else {
          skippedChanged += 1
          continue
        }
        try clean(child, relativePath: path, depth: depth + 1)
      case .regular, .symbolicLink:
        remove(name, path: path, listed: listed, in: folder)
      case .other:
        continue
      }
    }
  }

  /// Whether `name` is a SQLite database, or the journal or shared memory of one beside it.
  private func isDatabase(_ name: [CChar], in folder: DirectoryHandle) -> Bool {
    if folder.isSQLiteDatabase(name) { return true }
    let bytes = name.dropLast().map { UInt8(bitPattern: $0) }
    for suffix in Self.databaseSuffixes
    where bytes.count > suffix.count && bytes.suffix(suffix.count).elementsEqual(suffix) {
      let base = bytes.dropLast(suffix.count).map { CChar(bitPattern: $0) } + [0]
      return folder.isSQLiteDatabase(base)
    }
    return false
  }

  private static let databaseSuffixes = ["-wal", "-shm", "-journal"].map { Array($0.utf8) }

  private func qualifies(_ path: String, _ status: DirectoryHandle.Status) -> Bool {
    isReviewed(path, status) || (isUnnamedAndOld(path, status) && !isOlderThanStore(status))
  }

  /// Whether the file is a reviewed scan's image that no scan not yet reviewed names.
  private func isReviewed(_ path: String, _ status: DirectoryHandle.Status) -> Bool {
    reviewed[status.identity] != nil && !referenced.contains(path)
  }

  private func isUnnamedAndOld(_ path: String, _ status: DirectoryHandle.Status) -> Bool {
    !referenced.contains(path) && status.modified < cutoff
  }

  private func isOlderThanStore(_ status: DirectoryHandle.Status) -> Bool {
    storeCreated.map { status.modified < $0 } ?? false
  }

  private mutating func remove(
    _ name: [CChar], path: String, listed: DirectoryHandle.Status, in folder: DirectoryHandle
  ) {
    guard qualifies(path, listed) else {
      if !isReviewed(path, listed), isUnnamedAndOld(path, listed) {
        keptOlderThanStore += 1
      }
      return
    }
    let isReviewed = self.isReviewed(path, listed)
    let scans = isReviewed ? reviewed[listed.identity] : nil
    if isReviewed && keepsReviewed {
      keptForReadOnlyStore += 1
      return
    }
    willRemove(path)
    // Checked again right before removal: a file replaced or saved again since it was
    // listed is not the file that qualified.
    guard let current = folder.status(of: name), current.identity == listed.identity,
      current.kind == listed.kind, qualifies(path, current)
    else {
      skippedChanged += 1
      return
    }
    if current.kind == .regular, isDatabase(name, in: folder) {
      keptDatabases += 1
      return
    }
    if !dryRun, let code = folder.remove(name) {
      if code == ENOENT {
        skippedChanged += 1
      } else {
        skippedFailed += 1
        log("could not remove \(path): \(String(cString: strerror(code)))")
      }
      return
    }
    removedBytes += current.size
    if isReviewed {
      removedReviewed += 1
      clearedScans += scans ?? []
    } else {
      removedOrphans += 1
    }
  }
}
