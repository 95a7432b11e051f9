import Foundation
import LaunchJSON
import LaunchOrchestrator

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A folder of earlier runs, as `orchestrate run --history` keeps it: one file per run, named
/// `launch-<sequence>-<UTC time to the microsecond>-<process id>-<random>.json`. The runs are
/// ordered by the sequence, one above the highest in the folder when the run was recorded,
/// never by the time: a wall clock set back (by NTP, by hand, a machine restored) would put
/// the newest run first. The process id and random tag keep two processes recording at once
/// apart, even when they take the same sequence. Names without a sequence
/// (`launch-<time>-<pid>-<random>.json`, as earlier versions wrote them) are read too, as
/// older than any with one.
///
/// Only files with such a name that are marked as entries inside are the history's own: any
/// other file in the folder is never read as a run and never removed.
package struct HistoryFolder: Sendable {
  /// The folder as the user named it.
  package var path: String
  /// The entries, oldest first (by sequence, then name), with their file names.
  package private(set) var entries: [(name: String, entry: HistoryEntry)] = []
  /// Files named like entries that could not be read, with why; left alone.
  package private(set) var unreadable: [(name: String, reason: String)] = []
  /// The names of the other files in the folder, hidden ones (`.DS_Store`) left out: what
  /// a folder that is no history holds.
  package private(set) var others: [String] = []

  /// How many runs `--keep` keeps when not told.
  package static let defaultKeep = 50

  /// Reads every entry in the folder at `path`.
  /// - Throws: a ``CLIError`` when `path` is not a readable folder.
  package init(reading path: String) throws(CLIError) {
    self.path = path
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: path)
    } catch {
      throw CLIError(
        message: "Cannot read the history folder '\(path)': \(Self.reason(error)).",
        exitCode: .missingInput)
    }
    let ordered = names.compactMap { name in Self.sequence(in: name).map { (name, $0) } }
      .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    others = names.filter { !$0.hasPrefix(".") && Self.sequence(in: $0) == nil }.sorted()
    for (name, _) in ordered {
      let file = file(name)
      do {
        // Gone since the listing: another process recording into the folder pruned it.
        guard let entry = try Self.readEntry(file) else { continue }
        entries.append((name, entry))
      } catch {
        unreadable.append((name, error.message))
      }
    }
  }

  /// Whether `path` names a folder (through links).
  static func isFolder(_ path: String) -> Bool {
    var isFolder: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
      && isFolder.boolValue
  }

  /// The folder for `run --history`: created when it does not exist (its parent must), and
  /// checked to be a writable folder, before the launch.
  /// - Throws: a ``CLIError`` (exit 73) saying what is in the way.
  package static func prepare(_ path: String, option: ArgumentDeclaration) throws(CLIError) {
    var isFolder: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
      guard isFolder.boolValue else {
        throw CLIError(
          message:
            "'\(option.name) \(path)' is a file, not a folder; name a folder for the history (it is created if missing).",
          exitCode: .cannotCreate)
      }
    } else {
      let parentPath = parent(of: path)
      guard Self.isFolder(parentPath) else {
        throw CLIError(
          message:
            "The folder for '\(option.name) \(path)' cannot be created: '\(parentPath)' does not exist; create it first.",
          exitCode: .cannotCreate)
      }
      do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      } catch {
        // Another process recording at the same moment may have made it first.
        guard Self.isFolder(path) else {
          throw CLIError(
            message:
              "Cannot create the history folder '\(path)' for '\(option.name)': \(reason(error)).",
            exitCode: .cannotCreate)
        }
      }
    }
    guard access(path, W_OK | X_OK) == 0 else {
      throw CLIError(
        message:
          "The history folder '\(path)' given to '\(option.name)' is not writable; make it writable or name another folder.",
        exitCode: .cannotCreate)
    }
  }

  /// Writes `entry` as the file `name` (made by ``entryName(sequence:at:pid:tag:)``),
  /// atomically.
  package static func append(_ entry: HistoryEntry, to path: String, named name: String)
    throws(CLIError)
  {
    let url = URL(fileURLWithPath: path).appendingPathComponent(name)
    do {
      try SafeFiles.writeAtomically(Data(entry.jsonText.utf8), to: url)
    } catch {
      throw CLIError(
        message: "Cannot add this run to the history '\(path)': \(error).",
        exitCode: .cannotCreate)
    }
  }

  /// Removes the oldest entries beyond `keep`, never the entry `spared` (the run just
  /// recorded: however the others are ordered, removing it would lose the run the user just
  /// made); returns the names that could not be removed, with why. Only readable entries count
  /// and go: a file of the folder's own naming that is not a readable entry may be someone's,
  /// so it stays.
  package func prune(keeping keep: Int, sparing spared: String? = nil) -> [(
    name: String, reason: String
  )] {
    // Every entry has a name of its own, so no later write to it would clean up after a
    // writer killed mid-write: the folder's prune does.
    SafeFiles.removeAbandonedTemporaryFiles(
      in: URL(fileURLWithPath: path), forNamesStartingWith: Self.entryNamePrefix)
    var failures: [(String, String)] = []
    let others = entries.filter { $0.name != spared }
    let room = others.count < entries.count ? max(0, keep - 1) : keep
    for (name, _) in others.dropLast(room) {
      if unlink(file(name)) != 0, errno != ENOENT {
        failures.append((name, String(cString: strerror(errno))))
      }
    }
    return failures
  }

  /// How every entry's name begins.
  static let entryNamePrefix = "launch-"

  /// The width of the sequence in a name; a larger one takes more digits.
  private static let sequenceDigits = 12

  /// `launch-000000000042-20261123T135726.123456Z-4242-0a1b2c3d.json`: the sequence, padded
  /// so that names list in order, then the UTC time (when it was recorded, for people); the
  /// process id and a random tag keep two writers apart.
  package static func entryName(sequence: Int, at date: Date, pid: Int32, tag: UInt32) -> String {
    let seconds = date.timeIntervalSince1970
    var whole = time_t(seconds.rounded(.down))
    let micros = min(999_999, Int(((seconds - Double(whole)) * 1_000_000).rounded(.down)))
    var parts = tm()
    gmtime_r(&whole, &parts)
    let stamp = String(
      format: "%04d%02d%02dT%02d%02d%02d.%06dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), micros)
    let hex = String(tag, radix: 16)
    return
      "\(entryNamePrefix)\(padded(max(1, sequence)))-\(stamp)-\(pid)-\(String(repeating: "0", count: 8 - hex.count))\(hex).json"
  }

  /// The sequence for a run recorded into the folder at `path` now: one above the highest
  /// of the names there (0 for a name without one). Only names are listed, nothing is read;
  /// a process recording at the same moment may take the same one, and the names order them.
  package static func nextSequence(in path: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    let highest = names.compactMap(sequence(in:)).max() ?? 0
    // A name put there by hand may hold the largest `Int`: the run shares it, after it.
    return highest == Int.max ? highest : highest + 1
  }

  /// The ISO 8601 form of the time in an entry's name: `2026-11-23T13:57:26.123456Z`.
  package static func recordedAt(fromName name: String) -> String {
    var rest = name.dropFirst(entryNamePrefix.count)
    if let sequence = sequence(in: name), sequence > 0, let dash = rest.firstIndex(of: "-") {
      rest = rest[rest.index(after: dash)...]
    }
    let stamp = Array(rest.prefix(22))
    let text = { (range: Range<Int>) in String(stamp[range]) }
    return
      "\(text(0..<4))-\(text(4..<6))-\(text(6..<8))T\(text(9..<11)):\(text(11..<13)):\(text(13..<22))Z"
  }

  /// Whether `name` is one ``entryName(sequence:at:pid:tag:)`` makes, or one without a
  /// sequence that earlier versions made.
  package static func isEntryName(_ name: String) -> Bool {
    sequence(in: name) != nil
  }

  /// The sequence in the entry name `name`: 0 for a name without one (earlier versions');
  /// `nil` when `name` is not an entry's.
  static func sequence(in name: String) -> Int? {
    guard name.hasPrefix(entryNamePrefix), name.hasSuffix(".json") else { return nil }
    var middle = Substring(name.dropFirst(entryNamePrefix.count).dropLast(".json".count))
    var sequence = 0
    // Leading digits then a dash are a sequence; a time's are its date's eight, then a `T`.
    let digits = middle.prefix { Self.digits.contains($0) }
    if middle.dropFirst(digits.count).first == "-" {
      // Only the padded form ``entryName(sequence:at:pid:tag:)`` writes: two spellings of
      // one number would be two entries of the same place.
      guard let number = Int(digits), number > 0, digits == padded(number) else { return nil }
      sequence = number
      middle = middle.dropFirst(digits.count + 1)
    }
    return hasStampPidAndTag(Array(middle)) ? sequence : nil
  }

  private static let digits = Set("0123456789")

  /// `sequence` as a name writes it: at least ``sequenceDigits`` digits.
  private static func padded(_ sequence: Int) -> String {
    let digits = String(sequence)
    return String(repeating: "0", count: max(0, sequenceDigits - digits.count)) + digits
  }

  /// Whether `middle` is `<UTC time>-<pid>-<tag>`, as every entry name ends.
  private static func hasStampPidAndTag(_ middle: [Character]) -> Bool {
    let shape = Array("00000000T000000.000000Z-")
    guard middle.count > shape.count + 2 else { return false }
    for (character, expected) in zip(middle, shape) {
      if expected == "0" ? !digits.contains(character) : character != expected { return false }
    }
    let rest = middle.dropFirst(shape.count).split(separator: "-", omittingEmptySubsequences: false)
    return rest.count == 2 && !rest[0].isEmpty && rest[0].allSatisfy(digits.contains)
      && rest[1].count == 8 && rest[1].allSatisfy(\.isHexDigit)
  }

  /// The largest entry read: a report of 100,000 steps is a few tens of megabytes.
  private static let maximumEntrySize = 1 << 30

  /// The entry in `file`; `nil` when there is no longer a file. It is checked and read
  /// through one descriptor, without following a link or waiting on a FIFO.
  private static func readEntry(_ file: String) throws(HistoryFormatError) -> HistoryEntry? {
    let bytes: Data?
    do {
      bytes = try SafeFiles.contentsOfRegularFile(
        at: URL(fileURLWithPath: file), limit: maximumEntrySize)
    } catch {
      switch error.reason {
      case .notRegular: throw HistoryFormatError("it is not a regular file")
      case .tooLarge(let limit): throw HistoryFormatError("it is over \(limit) bytes")
      case .unreadable(let why): throw HistoryFormatError("it cannot be read (\(why.lowercased()))")
      }
    }
    guard let bytes else { return nil }
    let root: JSONValue
    do {
      root = try JSONParser.parse(Array(bytes)).root
    } catch {
      throw HistoryFormatError("it is not valid JSON (\(error.message))")
    }
    guard let entry = try HistoryEntry.read(root) else {
      throw HistoryFormatError("it is not marked as a history entry ('\(HistoryEntry.formatKey)')")
    }
    return entry
  }

  /// The folder holding `path`, by its text: `.` for a bare name. (Foundation's
  /// `deletingLastPathComponent` on `NSString` traps on some relative paths on Linux.)
  private static func parent(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// The system's words for a file error, without Foundation's wrapping: `it does not exist`.
  static func reason(_ error: any Error) -> String {
    let error = error as NSError
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain
    {
      return String(cString: strerror(Int32(underlying.code))).lowercased()
    }
    if error.domain == NSCocoaErrorDomain {
      switch CocoaError.Code(rawValue: error.code) {
      case .fileReadNoSuchFile, .fileNoSuchFile: return "it does not exist"
      case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
      default: break
      }
    }
    var text = error.localizedDescription
    while text.hasSuffix(".") { text.removeLast() }
    return text
  }
}
