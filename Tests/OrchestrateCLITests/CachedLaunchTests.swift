import Foundation
import LaunchOrchestrator
import SQLiteStore
import Testing

/// The shipped ScreenSort launch (seed 001) through the real binary: a first run fills the
/// cache, the second shows its results from it and refreshes them behind.
@Suite("orchestrate run with cached steps", .timeLimit(.minutes(10)))
struct CachedLaunchTests {
  @Test func theSecondScreenSortLaunchServesTheResultsFromTheCacheAndRefreshesThem() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    let first = try await Orchestrate.run(["run", manifest, "--report", folder.path("1.json")])
    #expect(first.status == 0)
    #expect(first.stdout.contains("log        results: cache not used: no entry yet"))
    let before = try readReport(folder.path("1.json"))
    #expect(before.outcome == .succeeded)
    #expect(before.step("sampleData")?.notes == ["added 7 sample rows from sample.sql"])
    #expect(before.step("results")?.state == .succeeded)
    #expect(before.step("results")?.notes.last == "loaded 4 results (hasMore: false)")
    let entry = folder.path(".orchestrate-cache/ScreenSort/results.json")
    #expect(FileManager.default.fileExists(atPath: entry))

    let second = try await Orchestrate.run(["run", manifest, "--report", folder.path("2.json")])
    #expect(second.status == 0)
    #expect(second.stdout.contains("cached     results (refreshing behind)"))
    #expect(second.stdout.contains("refreshed  results"))
    #expect(second.stdout.contains("  results (refresh)  "))
    let after = try readReport(folder.path("2.json"))
    let results = try #require(after.step("results"))
    #expect(results.state == .cached)
    #expect(results.start != nil && results.start == results.end)
    #expect(results.notes.first?.hasPrefix("served from the cache (saved ") == true)
    let refresh = try #require(results.refresh)
    #expect(refresh.state == .succeeded)
    // The refresh ran once its store was ready, behind the first screen; the first screen
    // waited for neither the store nor the query.
    let storeEnd = try #require(after.step("sampleData")?.end)
    #expect(try #require(refresh.start) >= storeEnd)
    let chain = try #require(after.criticalChains.first { $0.milestone == "interactive" })
    #expect(Set(chain.links.map(\.step)).isSubset(of: ["results", "restore"]))
    #expect(
      after.step("sampleData")?.notes == ["'results' already has rows; no sample data added"])
    let store = try SQLiteConnection(
      url: folder.url.appendingPathComponent(".data/screensort.sqlite"), mode: .readOnly)
    #expect(try store.integer("SELECT count(*) FROM results") == 4)
  }

  @Test func planSaysWhichStepsACacheServes() async throws {
    let folder = try TemporaryFolder()
    let plan = try await Orchestrate.run(["plan", try folder.copyShipped("screensort.json")])
    #expect(plan.status == 0)
    #expect(
      plan.stdout.hasSuffix(
        "cached: 'results': this plan times a launch without its saved output; with it, the step is served at once and runs again behind\n"
      ))
  }

  @Test func noCacheRunsTheStepAndCacheClearRemovesTheEntries() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    _ = try await Orchestrate.run(["run", manifest, "--quiet"])
    let fresh = try await Orchestrate.run([
      "run", manifest, "--no-cache", "--report", folder.path("r.json"), "--quiet",
    ])
    #expect(fresh.status == 0)
    let report = try readReport(folder.path("r.json"))
    #expect(report.step("results")?.state == .succeeded)
    #expect(
      report.step("results")?.notes.first
        == "cache not used: cached outputs are off for this launch")
    // A first launch has no cached outputs: its rehearsal serves none.
    let first = try await Orchestrate.run([
      "run", manifest, "--first-launch", "--report", folder.path("first.json"), "--quiet",
    ])
    #expect(first.status == 0)
    #expect(try readReport(folder.path("first.json")).step("results")?.state == .succeeded)

    let cleared = try await Orchestrate.run(["cache", "clear", manifest])
    #expect(cleared.status == 0)
    #expect(
      cleared.stdout
        == "Removed 1 cached output of 'ScreenSort' from '\(folder.path(".orchestrate-cache"))'.\n")
    #expect(!FileManager.default.fileExists(atPath: folder.path(".orchestrate-cache/ScreenSort")))
    let again = try await Orchestrate.run(["cache", "clear", manifest])
    #expect(again.stdout.hasPrefix("Removed 0 cached outputs of 'ScreenSort' from "))

    let wrong = try await Orchestrate.run(["cache", "empty", manifest])
    #expect(wrong.status == 64)
    #expect(
      wrong.stderr.hasPrefix(
        "Error: Unknown action 'empty' for 'cache'; the one action is 'clear' (orchestrate cache clear <manifest>)."
      ))
  }

  @Test func twoLaunchesAtOnceLeaveAWholeEntry() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    _ = try await Orchestrate.run(["run", manifest, "--quiet"])
    for _ in 0..<3 {
      async let one = Orchestrate.run(["run", manifest, "--quiet"])
      async let two = Orchestrate.run(["run", manifest, "--no-cache", "--quiet"])
      let (first, second) = try await (one, two)
      #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
    }
    let next = try await Orchestrate.run(["run", manifest, "--report", folder.path("r.json")])
    #expect(next.status == 0)
    #expect(try readReport(folder.path("r.json")).step("results")?.state == .cached)
    let names = try FileManager.default.contentsOfDirectory(
      atPath: folder.path(".orchestrate-cache/ScreenSort"))
    #expect(names == ["results.json"])
  }

  @Test func cacheClearToleratesALaunchSavingAtTheSameMomentAndTouchesNothingElse() async throws {
    let folder = try TemporaryFolder()
    // 40 cached steps of a kind only the helper knows: each of its launches saves 40 entries
    // while `orchestrate cache clear` (which reads just the manifest's name) runs again and
    // again.
    let steps = (1...40).map {
      #"{ "id": "s\#($0)", "plugin": "helper.snapshot", "params": { "value": "v\#($0)" }, "cache": {} }"#
    }
    let manifest = try folder.write(
      "snap.json",
      #"{ "version": 1, "name": "Snap", "steps": [\#(steps.joined(separator: ", "))] }"#)
    let mine = try folder.write("keep.txt", "mine")
    try FileManager.default.createDirectory(
      atPath: folder.path(".orchestrate-cache/Other"), withIntermediateDirectories: true)
    let other = try folder.write(".orchestrate-cache/Other/s1.json", "another manifest's")
    var clears: [CommandResult] = []
    let launches = try await Orchestrate.run(
      ["cache-launches", manifest, "400"], binary: "orchestrate-test-helper"
    ) { process, _ in
      while process.isRunning {
        clears.append(try await Orchestrate.run(["cache", "clear", manifest]))
      }
    }
    #expect(launches.status == 0, "\(launches.stderr)")
    #expect(launches.stdout.hasSuffix("launched 400\n"))
    // At least one clear ran while the launches saved; how many depends on the machine (under
    // a sanitizer, starting `orchestrate` can outlast all 400 launches).
    #expect(!clears.isEmpty)
    for clear in clears {
      #expect(clear.status == 0, "\(clear.stderr)")
      #expect(clear.stdout.hasPrefix("Removed "))
    }
    let last = try await Orchestrate.run(["cache", "clear", manifest])
    #expect(last.status == 0)
    #expect(!FileManager.default.fileExists(atPath: folder.path(".orchestrate-cache/Snap")))
    #expect(try String(contentsOfFile: mine, encoding: .utf8) == "mine")
    #expect(try String(contentsOfFile: other, encoding: .utf8) == "another manifest's")
  }

  @Test func cacheClearWorksOnAManifestThatNoLongerLoads() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.copyShipped("screensort.json")
    _ = try await Orchestrate.run(["run", manifest, "--quiet"])
    let renamed = try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(
      of: "results.load", with: "results.first")
    try renamed.write(toFile: manifest, atomically: true, encoding: .utf8)
    let cleared = try await Orchestrate.run(["cache", "clear", manifest])
    #expect(cleared.status == 0)
    #expect(cleared.stdout.hasPrefix("Removed 1 cached output of 'ScreenSort' from "))
    #expect(
      cleared.stderr
        == "Note: the manifest '\(manifest)' has errors ('orchestrate validate' lists them); clearing the cache of 'ScreenSort' all the same.\n"
    )
  }
}
