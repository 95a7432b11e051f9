import Foundation
import LaunchJSON

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Launch reports kept on the device, in a folder the app chooses, for the app to read back
/// and upload with its own analytics: bounded, rolling (the oldest go first), written
/// atomically, and safe with two processes appending at once (while its lock file,
/// `.reports.lock`, can be locked: see below).
///
/// ```swift
/// let store = LaunchReportStore(folder: caches.appending(path: "launch-reports"))
/// let launch = LaunchSession(reportStore: store)  // appends each finished launch
/// // later, when the app uploads:
/// let reports = try store.reports()
/// for report in reports { analytics.send(report.jsonText) }
/// try store.removeAll(where: reports.contains)  // what was sent; one appended since stays
/// ```
///
/// Each report is one file, `report-<sequence>.json` with the sequence in at least 12 digits
/// (`report-000000000042.json`), written beside its place and renamed into it, so a reader
/// sees whole reports only. Only the names the store writes are entries: any other file, even
/// one named nearly so (`report-42.json`, `report-+42.json`), is never counted, read or
/// removed. Appending holds a lock file (`.reports.lock`) while it numbers, writes and trims,
/// and lists only the store's own folder, which never holds more than `maxReports` entries;
/// where a folder stands at the lock file's name, it appends without the lock rather than
/// lose the report. A damaged entry is skipped when reading, with a note, and ages out like
/// any other.
public struct LaunchReportStore: Sendable {
  /// The folder the reports are kept in; created on the first append.
  package let folder: URL
  /// The most reports kept; appending one more drops the oldest.
  package let maxReports: Int
  /// The most bytes the reports may take together; the oldest are dropped to stay under it.
  package let maxBytes: Int

  /// A store in `folder` keeping at most `maxReports` reports and `maxBytes` bytes.
  public init(folder: URL, maxReports: Int = 100, maxBytes: Int = 2_000_000) {
    self.folder = folder
    self.maxReports = max(1, maxReports)
    self.maxBytes = max(1, maxBytes)
  }

  /// Adds `report` as the newest, then drops the oldest beyond the store's bounds.
  /// - Throws: when the folder cannot be created or written, another process held the store
  ///   for five seconds, the report alone is larger than `maxBytes`, or the newest entry's
  ///   sequence is the largest an `Int` holds (``removeAll(where:)`` empties the store, and
  ///   numbering starts again).
  public func append(_ report: LaunchReport) throws {
    let data = Data((JSONWriter.compact(report.json) + "\n").utf8)
    guard data.count <= maxBytes else {
      throw StoreError(
        "the report (\(data.count) bytes) is larger than the store's maxBytes (\(maxBytes))")
    }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try withLock {
      var entries = try entries()
      // Only a file put there by hand can stand at the last sequence (it takes 2^63 appends):
      // refused with a reason, as a trap would stop the app that appends.
      let (sequence, overflow) = (entries.last?.sequence ?? 0).addingReportingOverflow(1)
      if overflow, let last = entries.last {
        throw StoreError(
          "cannot add a report to '\(folder.path)': its newest entry '\(last.name)' has the"
            + " largest sequence there is, so none can follow it; removeAll() empties the store"
            + " and numbering starts again")
      }
      let entry = Entry(sequence: sequence, bytes: data.count)
      try SafeFiles.writeAtomically(
        data, to: folder.appendingPathComponent(entry.name), followingLinks: false)
      entries.append(entry)
      var total = entries.reduce(0) { $0 + $1.bytes }
      var dropped = 0
      while entries.count - dropped > maxReports || total > maxBytes {
        let oldest = entries[dropped]
        unlink(folder.appendingPathComponent(oldest.name).path)
        total -= oldest.bytes
        dropped += 1
      }
    }
  }

  /// The reports kept, oldest first; damaged entries are left out.
  /// - Throws: when the folder exists and cannot be listed.
  public func reports() throws -> [LaunchReport] {
    var notes: [String] = []
    return try reports(notes: &notes)
  }

  /// The reports kept, oldest first; each damaged entry is left out and `notes` gets a line
  /// naming it and what is wrong.
  /// - Throws: when the folder exists and cannot be listed.
  public func reports(notes: inout [String]) throws -> [LaunchReport] {
    var reports: [LaunchReport] = []
    for entry in try entries() {
      let url = folder.appendingPathComponent(entry.name)
      do {
        // Gone since the listing: another process trimmed it.
        guard let data = try SafeFiles.contentsOfRegularFile(at: url, limit: maxBytes) else {
          continue
        }
        reports.append(try LaunchReport(jsonText: String(decoding: data, as: UTF8.self)))
      } catch {
        notes.append("the stored report '\(url.path)' is damaged and was skipped: \(error)")
      }
    }
    return reports
  }

  /// Removes the entries read as a report for which `isRemoved` is true; without it, every
  /// entry, the unread ones included. Other files in the folder stay.
  ///
  /// After an upload, `removeAll(where: reports.contains)` removes what ``reports()``
  /// returned and nothing else: a report appended since (by an app extension, or a launch
  /// during the upload) and an entry `reports()` skipped (damaged, or of a newer format a
  /// newer build of the app can read) are not sent, so they stay. Entries are matched by what
  /// they hold, read again under the lock appending takes, so a report appended at the same
  /// moment is never removed unread.
  /// - Throws: when the folder exists and cannot be listed.
  public func removeAll(where isRemoved: ((LaunchReport) -> Bool)? = nil) throws {
    guard FileManager.default.fileExists(atPath: folder.path) else { return }
    try withLock {
      for entry in try entries() {
        let url = folder.appendingPathComponent(entry.name)
        if let isRemoved {
          // An entry that cannot be read was never handed out: it stays, and ages out.
          guard let data = try? SafeFiles.contentsOfRegularFile(at: url, limit: maxBytes),
            let report = try? LaunchReport(jsonText: String(decoding: data, as: UTF8.self)),
            isRemoved(report)
          else { continue }
        }
        unlink(url.path)
      }
    }
  }

  /// The store's entries, oldest first: the files named as entries, with their sizes.
  private func entries() throws -> [Entry] {
    guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
    return try FileManager.default.contentsOfDirectory(atPath: folder.path).compactMap { name in
      guard let sequence = Entry.sequence(in: name) else { return nil }
      var info = stat()
      let path = folder.appendingPathComponent(name).path
      guard lstat(path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
        return nil
      }
      return Entry(sequence: sequence, bytes: Int(info.st_size))
    }.sorted { $0.sequence < $1.sequence }
  }

  /// Runs `body` holding the store's lock, which every append and removal takes. Where the
  /// lock cannot be taken (a folder at its name), it runs without: an app appending alone
  /// loses no report, where a refusal would lose every one; two processes appending at that
  /// very moment may take one number, and one report replaces the other.
  private func withLock<T>(_ body: () throws -> T) throws -> T {
    try SharedFile(url: folder.appendingPathComponent("reports")).withWriteLock(
      unusable: .writeUnlocked, stopsWhenCancelled: false, body)
  }

  /// One report file: `report-000000000042.json`.
  private struct Entry {
    var sequence: Int
    var bytes: Int

    var name: String {
      let digits = String(sequence)
      return "report-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits + ".json"
    }

    /// The sequence of the entry named `name`, when `name` is exactly what ``name`` makes of
    /// it. Looser names (`report-+2.json`, `report-7.json`) would count as entries that
    /// trimming and `removeAll()` then look for under their padded names, never removing
    /// them; so they are not entries.
    static func sequence(in name: String) -> Int? {
      guard name.hasPrefix("report-"), name.hasSuffix(".json"),
        let sequence = Int(name.dropFirst(7).dropLast(5)), sequence > 0,
        // Bytes, not `String` equality, which would take a name only equivalent in Unicode.
        Entry(sequence: sequence, bytes: 0).name.utf8.elementsEqual(name.utf8)
      else { return nil }
      return sequence
    }
  }

  /// Why the store could not take a report.
  private struct StoreError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }
}
