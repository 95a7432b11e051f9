import Foundation
import LaunchOrchestrator
import ManifestFuzzing
import SQLiteStore

extension Benchmarks {
  /// The first page of 50 songs from libraries of 1,000 and 1,000,000 songs, each load in a
  /// process of its own so that its peak resident memory can be read.
  func musicPage() async throws -> Result {
    var result = Result(name: "musicPage")
    let small = try MusicLibraryBuilder.library(songs: 1_000)
    let large = try MusicLibraryBuilder.library(songs: 1_000_000)
    var peaks: [String: Int] = [:]
    func load(_ name: String, _ library: URL) throws -> Double {
      let (seconds, peak) = try firstPageInChildProcess(library)
      peaks[name] = max(peaks[name] ?? 0, peak)
      return seconds
    }
    let samples = try await interleaved(
      repetitions: quick ? 5 : 15,
      [("1k", { try load("1k", small) }), ("1M", { try load("1M", large) })])
    let smallSeconds = samples["1k"]?.median ?? .nan
    let largeSeconds = samples["1M"]?.median ?? .nan
    result.field("firstPage1kSeconds", smallSeconds)
    result.field("firstPage1MSeconds", largeSeconds)
    result.field("ratio", largeSeconds / smallSeconds)
    result.field("peakResidentBytes1k", peaks["1k"] ?? 0)
    result.field("peakResidentBytes1M", peaks["1M"] ?? 0)
    result.lines.append(
      "first page of 50 (music.page step time; peak resident memory of its process):")
    result.lines.append(
      "  1,000 songs      \(samples["1k"]?.text(scale: 1000, unit: "ms", digits: 3) ?? "-")  \((peaks["1k"] ?? 0) / 1024) KiB"
    )
    result.lines.append(
      "  1,000,000 songs  \(samples["1M"]?.text(scale: 1000, unit: "ms", digits: 3) ?? "-")  \((peaks["1M"] ?? 0) / 1024) KiB"
    )
    result.lines.append(String(format: "  ratio %.2fx", largeSeconds / smallSeconds))
    return result
  }

  /// Time to `interactive` of the shipped `manifests/music.json` (`store.init` read-write,
  /// `sample.data`'s check, then the first page of 50) on stores of 1,000 and 1,000,000 songs,
  /// each launch in a process of its own, as an app's cold start.
  func musicLaunch() async throws -> Result {
    var result = Result(name: "musicLaunch")
    let small = try MusicLibraryBuilder.dataFolder(songs: 1_000)
    let large = try MusicLibraryBuilder.dataFolder(songs: 1_000_000)
    // The first read-write launch of a store built outside store.init switches it to WAL and
    // records its schema; apps pay that once, so it is not measured.
    for library in [small, large] { _ = try numbersFromChild("music-launch", library.path) }
    var storeSeconds: [String: [Double]] = [:]
    func launch(_ name: String, _ library: URL) throws -> Double {
      let numbers = try numbersFromChild("music-launch", library.path)
      storeSeconds[name, default: []].append(numbers.last ?? .nan)
      return numbers[0]
    }
    let samples = try await interleaved(
      repetitions: quick ? 5 : 15,
      [("1k", { try launch("1k", small) }), ("1M", { try launch("1M", large) })])
    func storeMedian(_ name: String) -> Double {
      let sorted = (storeSeconds[name] ?? []).sorted()
      return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }
    let smallSeconds = samples["1k"]?.median ?? .nan
    let largeSeconds = samples["1M"]?.median ?? .nan
    result.field("interactive1kSeconds", smallSeconds)
    result.field("interactive1MSeconds", largeSeconds)
    result.field("ratio", largeSeconds / smallSeconds)
    result.field("storeInit1kSeconds", storeMedian("1k"))
    result.field("storeInit1MSeconds", storeMedian("1M"))
    result.lines.append(
      "interactive of manifests/music.json (store.init, sample.data, the first page of 50; store.init's median):"
    )
    result.lines.append(
      "  1,000 songs      \(samples["1k"]?.text(scale: 1000, unit: "ms", digits: 3) ?? "-")  store.init \(String(format: "%.3fms", storeMedian("1k") * 1000))"
    )
    result.lines.append(
      "  1,000,000 songs  \(samples["1M"]?.text(scale: 1000, unit: "ms", digits: 3) ?? "-")  store.init \(String(format: "%.3fms", storeMedian("1M") * 1000))"
    )
    result.lines.append(
      String(format: "  ratio %.2fx (goal: at most 1.2x)", largeSeconds / smallSeconds))
    return result
  }

  /// The child side of ``musicLaunch()``: runs the shipped `manifests/music.json` on the data
  /// folder `data` and prints the time to `interactive` and `store.init`'s duration.
  func launchInteractive(data: String) async throws {
    let plan = try ManifestLoader(registry: registry).load(
      url: URL(fileURLWithPath: "manifests/music.json"),
      dataDirectory: URL(fileURLWithPath: data))
    let report = await runEngine(plan)
    guard report.outcome == .succeeded,
      let interactive = report.time(ofMilestone: "interactive") ?? nil
    else {
      throw BenchmarkError("the launch failed: \(report.steps.compactMap(\.error))")
    }
    print(interactive.secondsValue, report.step("store")?.duration?.secondsValue ?? .nan)
  }

  private func firstPageInChildProcess(_ library: URL) throws -> (seconds: Double, peakBytes: Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["music-page", library.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let parts = text.split(separator: " ").compactMap {
      Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    guard parts.count == 2 else { throw BenchmarkError("music-page printed '\(text)'") }
    return (parts[0], Int(parts[1]))
  }

  /// The child side: loads the first page through the real plugins and prints the page
  /// step's seconds and the process's peak resident bytes.
  func firstPage(of library: String) async throws {
    let library = URL(fileURLWithPath: library).path
    let manifest = """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init",
          "params": { "path": "\(library)", "schema": "music", "readOnly": true, "integrityCheck": false } },
        { "id": "page", "plugin": "music.page", "dependsOn": ["store"], "params": { "limit": 50 } }
      ] }
      """
    let plan = try ManifestLoader(registry: registry).load(
      bytes: Array(manifest.utf8), file: "music-page.json", directory: URL(fileURLWithPath: "/"))
    let report = await runEngine(plan)
    guard report.outcome == .succeeded, let duration = report.step("page")?.duration else {
      throw BenchmarkError("the page did not load: \(report.steps.compactMap(\.error))")
    }
    print(duration.secondsValue, peakResidentBytes())
  }

  /// This process's peak resident memory. `VmHWM` rather than `getrusage`'s `ru_maxrss`,
  /// which on Linux carries the parent's peak across `fork` and `exec`.
  private func peakResidentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
      return kilobytes * 1024
    }
    return 0
  }
}

/// Builds the music libraries the benchmark reads, once, under `.build/bench-data/`.
enum MusicLibraryBuilder {
  /// A data folder for `manifests/music.json` whose `.data/music.sqlite` links to the library
  /// of `songs` songs; SQLite follows the link, so its WAL lives beside the library.
  static func dataFolder(songs: Int) throws -> URL {
    let library = try library(songs: songs)
    let folder = URL(fileURLWithPath: ".build/bench-data/launch-\(songs)")
    let store = folder.appendingPathComponent(".data/music.sqlite")
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: store.path)) == nil {
      try FileManager.default.createDirectory(
        at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(
        atPath: store.path, withDestinationPath: library.standardizedFileURL.path)
    }
    return folder
  }

  static func library(songs: Int) throws -> URL {
    let folder = URL(fileURLWithPath: ".build/bench-data")
    let url = folder.appendingPathComponent("music-\(songs).sqlite")
    if FileManager.default.fileExists(atPath: url.path) { return url }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let partial = folder.appendingPathComponent("music-\(songs).partial.sqlite")
    try? FileManager.default.removeItem(at: partial)
    FileHandle.standardError.write(
      Data("building a library of \(songs) songs in \(url.path)...\n".utf8))
    do {
      let connection = try SQLiteConnection(url: partial, mode: .create)
      let migrations = StoreSchema.music.migrations
      try connection.execute(migrations[0].checkedSQL())
      // Rows first, then the indexes and the full-text index: the same schema, built faster.
      try connection.immediateTransaction {
        let insert = try connection.prepare(
          "INSERT INTO songs (title, artist, album, duration, play_count, last_played_at, added_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
        )
        var generator = SeededGenerator(seed: 7)
        for n in 0..<songs {
          let played = Int64.random(in: 0..<1_000, using: &generator)
          try insert.bind([
            .text("Song \(n) \(UInt32.random(in: 0..<UInt32.max, using: &generator))"),
            .text("Artist \(n % 5_000)"),
            .text("Album \(n % 50_000)"), .real(Double.random(in: 90..<600, using: &generator)),
            .integer(played),
            played == 0 ? .null : .real(Double(n)), .real(Double(n)),
          ])
          while try insert.step() {}
        }
      }
      try connection.execute(migrations[1].checkedSQL())
      try connection.execute(migrations[2].checkedSQL())
      try connection.execute("PRAGMA user_version = \(StoreSchema.music.latestVersion)")
    }
    try FileManager.default.moveItem(at: partial, to: url)
    return url
  }
}

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
