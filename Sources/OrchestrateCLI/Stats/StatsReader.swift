import Foundation
import LaunchOrchestrator
import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Reads every report under the paths `stats` is given, on every core, in bounded memory:
/// JSON Lines files are split into chunks at line ends, and each thread reads its chunks
/// through a fixed buffer and keeps only its own running figures, merged at the end.
struct StatsReader {
  /// One piece of work: a whole JSON file, or a byte range of a JSON Lines file.
  enum Item: Sendable {
    case document(path: String)
    case lines(path: String, range: Range<Int>)
  }

  /// JSON Lines files are read in chunks of this many bytes, one thread each.
  static let chunkSize = 32 << 20
  /// The read buffer of each thread.
  static let bufferSize = 4 << 20
  /// A single JSON file larger than this is skipped: no report is.
  static let documentLimit = 512 << 20

  var grouping: StatsGrouping?

  /// The work for `paths`: files as given, folders' files (not hidden ones) sorted, through
  /// subfolders; and what was passed over in folders, each with why.
  ///
  /// A symbolic link named on the command line is followed, as `ls` and `find -H` do: the
  /// user chose it. A link met inside a folder is not (it may lead out of the folder, or
  /// round in a loop); it is passed over and counted.
  /// - Throws: a ``CLIError`` (exit 66) for a path that does not exist.
  static func items(for paths: [String]) throws(CLIError) -> (items: [Item], skipped: [String]) {
    var items: [Item] = []
    var skipped: [String] = []
    for path in paths {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
        throw CLIError(
          message: "Cannot read '\(path)': there is no such file or folder.",
          exitCode: .missingInput)
      }
      guard isFolder.boolValue else {
        items += fileItems(path)
        continue
      }
      // The folder itself, when `path` is a link to it: listing the link lists nothing.
      let folder =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
        ? URL(fileURLWithPath: path).resolvingSymlinksInPath().path : path
      let files =
        (FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? [])
        .filter { relative in !relative.split(separator: "/").contains { $0.hasPrefix(".") } }
        .sorted()
      for relative in files {
        let file = (path as NSString).appendingPathComponent(relative)
        let type =
          (try? FileManager.default.attributesOfItem(atPath: file))?[.type] as? FileAttributeType
        if type == .typeSymbolicLink {
          skipped.append("'\(file)': a symbolic link inside a folder, not followed")
          continue
        }
        // Folders are gone through; anything else (a FIFO would block the read) is named.
        if type == .typeDirectory { continue }
        guard type == .typeRegular else {
          skipped.append("'\(file)': \(Self.describe(file)), not a regular file")
          continue
        }
        if isJSONLines(file) || file.hasSuffix(".json") {
          items += fileItems(file)
        } else {
          skipped.append("'\(file)': not a .json, .jsonl or .ndjson file")
        }
      }
    }
    return (items, skipped)
  }

  /// What stands at `path`, in words, for a file passed over that is not a regular one.
  private static func describe(_ path: String) -> String {
    var info = stat()
    guard lstat(path, &info) == 0 else { return "gone or unreadable" }
    return SafeFiles.describeType(info.st_mode & mode_t(S_IFMT))
  }

  /// Whether `path` holds one report per line: `.jsonl`, or `.ndjson` as some tools name
  /// the same format.
  static func isJSONLines(_ path: String) -> Bool {
    path.hasSuffix(".jsonl") || path.hasSuffix(".ndjson")
  }

  /// The paths of `items`, each once.
  static func files(_ items: [Item]) -> [String] {
    var files: [String] = []
    for item in items {
      switch item {
      case .document(let path): files.append(path)
      case .lines(let path, _): if files.last != path { files.append(path) }
      }
    }
    return files
  }

  private static func fileItems(_ path: String) -> [Item] {
    guard isJSONLines(path) else { return [.document(path: path)] }
    var info = stat()
    let size = stat(path, &info) == 0 ? Int(info.st_size) : 0
    guard size > chunkSize else { return [.lines(path: path, range: 0..<max(size, 1))] }
    return stride(from: 0, to: size, by: chunkSize).map {
      .lines(path: path, range: $0..<min($0 + chunkSize, size))
    }
  }

  /// Reads `items` on up to one thread per core and merges what each gathered.
  func read(_ items: [Item]) -> FleetStats {
    let threads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, items.count))
    let next = Atomic<Int>(0)
    // `Locked`, not `Mutex`: its lock is one the thread sanitizer sees, so CI can check this.
    let results = Locked<[FleetStats]>([])
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      var stats = FleetStats()
      var buffer = [UInt8](repeating: 0, count: Self.bufferSize)
      while true {
        let index = next.add(1, ordering: .relaxed).oldValue
        guard index < items.count else { break }
        switch items[index] {
        case .document(let path):
          readDocument(path, item: index, into: &stats)
        case .lines(let path, let range):
          readLines(path, range: range, item: index, buffer: &buffer, into: &stats)
        }
      }
      results.withLock { $0.append(stats) }
    }
    return results.withLock { parts in
      parts.reduce(into: FleetStats()) { $0.merge($1) }
    }
  }

  private func readDocument(_ path: String, item: Int, into stats: inout FleetStats) {
    let seen = FirstSeen(item: item, offset: 0, position: 0)
    let data: Data
    do {
      guard
        let read = try SafeFiles.contentsOfRegularFile(
          followingLinksAt: URL(fileURLWithPath: path), limit: Self.documentLimit)
      else {
        stats.skip("'\(path)': it is gone", at: seen)
        return
      }
      data = read
    } catch {
      stats.skip("'\(path)': \(error)", at: seen)
      return
    }
    stats.filesRead += 1
    let scanned = data.withUnsafeBytes { raw in
      Result { () throws(ReportScanner.Refusal) in
        try ReportScanner.scan(raw.bindMemory(to: UInt8.self))
      }
    }
    switch scanned {
    case .success(let report): stats.add(report, at: seen, grouping: grouping)
    case .failure(let refusal): stats.skip("'\(path)': \(refusal.reason)", at: seen)
    }
  }

  /// Reads the lines that start in `range` of the JSON Lines file at `path`: the line that
  /// starts before it is the previous chunk's, and the last one is read to its end.
  private func readLines(
    _ path: String, range: Range<Int>, item: Int, buffer: inout [UInt8],
    into stats: inout FleetStats
  ) {
    // Opened as a report file is (`readDocument`): a FIFO named on the command line is
    // refused, never waited on for a writer that may not come.
    let descriptor: Int32
    do throws(SafeFiles.ReadProblem) {
      guard let opened = try SafeFiles.openRegularFile(followingLinksAt: path) else {
        stats.skip(
          "'\(path)': it is gone", at: FirstSeen(item: item, offset: range.lowerBound, position: 0))
        return
      }
      descriptor = opened
    } catch {
      stats.skip(
        "'\(path)': \(error)", at: FirstSeen(item: item, offset: range.lowerBound, position: 0))
      return
    }
    defer { close(descriptor) }
    if range.lowerBound == 0 { stats.filesRead += 1 }
    var position = max(0, range.lowerBound - 1)
    // Past the previous chunk's last line: up to the first line end at or after the byte
    // before this chunk.
    var skipping = range.lowerBound > 0
    var lineStart = position
    var pending: [UInt8] = []
    let capacity = buffer.count
    reading: while true {
      let count = buffer.withUnsafeMutableBytes {
        pread(descriptor, $0.baseAddress, capacity, off_t(position))
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else {
        if !skipping, lineStart < range.upperBound, !pending.isEmpty {
          pending.withUnsafeBufferPointer {
            line($0, at: lineStart, item: item, path: path, into: &stats)
          }
        }
        break
      }
      var finished = false
      buffer.withUnsafeBufferPointer { bytes in
        var index = 0
        while index < count {
          guard
            let newline = memchr(bytes.baseAddress! + index, 0x0A, count - index)
          else {
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<count]))
            return
          }
          let end = bytes.baseAddress!.distance(
            to: newline.assumingMemoryBound(to: UInt8.self))
          if skipping {
            skipping = false
          } else if pending.isEmpty {
            line(
              UnsafeBufferPointer(rebasing: bytes[index..<end]), at: lineStart, item: item,
              path: path, into: &stats)
          } else {
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
            pending.withUnsafeBufferPointer {
              line($0, at: lineStart, item: item, path: path, into: &stats)
            }
          }
          pending.removeAll(keepingCapacity: true)
          lineStart = position + end + 1
          index = end + 1
          if lineStart >= range.upperBound {
            finished = true
            return
          }
        }
      }
      if finished { break reading }
      position += count
    }
  }

  /// Whether a line of a JSON Lines file is blank: JSON's spaces and tabs only, and the CR of
  /// a CRLF line end. `export` skips the same lines; any other line is read as a report.
  static func isBlankLine(_ bytes: some Sequence<UInt8>) -> Bool {
    !bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }
  }

  /// Reads one line: blank lines are nothing, anything else a report or a skipped line.
  private func line(
    _ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, item: Int, path: String,
    into stats: inout FleetStats
  ) {
    guard !Self.isBlankLine(bytes) else { return }
    let seen = FirstSeen(item: item, offset: offset, position: 0)
    do throws(ReportScanner.Refusal) {
      stats.add(try ReportScanner.scan(bytes), at: seen, grouping: grouping)
    } catch {
      stats.skip("'\(path)', the line at byte \(offset + 1): \(error.reason)", at: seen)
    }
  }
}
