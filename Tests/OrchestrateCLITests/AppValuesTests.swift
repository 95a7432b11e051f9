import Foundation
import LaunchOrchestrator
import Testing

@testable import OrchestrateCLI

/// What `orchestrate run` hands a launch in place of an app: its version and a data folder,
/// and what it shows of the splash.
@Suite("orchestrate run: app values", .timeLimit(.minutes(10)))
struct AppValuesTests {
  @Test func anAppVersionFromTheCommandLineRoutesToTheUpdateScreen() async throws {
    let routed = try await Orchestrate.run(
      ["run", "manifests/gated.json", "--app-version", "1.9.0", "--quiet"])
    #expect(routed.status == 0)
    #expect(routed.stdout.contains("KeepItFresh: routed to 'updateRequired' by 'version'"))
    // Without the flag, the manifest's default (1.10.0) is above the minimum (1.9.2).
    let through = try await Orchestrate.run(["run", "manifests/gated.json", "--quiet"])
    #expect(through.status == 0)
    #expect(through.stdout.contains("KeepItFresh: succeeded"))
  }

  @Test func aMissingAppVersionStopsTheRunBeforeAnyStepNamingTheFlag() async throws {
    let folder = try TemporaryFolder()
    let gated = try String(
      contentsOf: Orchestrate.packageRoot.appendingPathComponent("manifests/gated.json"),
      encoding: .utf8)
    let withoutDefault = gated.replacingOccurrences(
      of: #""app": { "version": "1.10.0" },"#, with: "")
    #expect(withoutDefault != gated)
    let manifest = folder.url.appendingPathComponent("gated.json")
    try withoutDefault.write(to: manifest, atomically: true, encoding: .utf8)
    let result = try await Orchestrate.run(["run", manifest.path])
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "Error: Step 'version' (gate.version) requires AppInfo, which this run does not have; pass '--app-version 1.2.3' (or '1.2.3+45'), or give the manifest an \"app\": { \"version\": \"1.2.3\" } default. Nothing was run.\n"
    )
    let empty = try await Orchestrate.run(["run", manifest.path, "--app-version", ""])
    #expect(
      empty.stderr.hasPrefix(
        "Error: The value for '--app-version <version[+build]>' is empty; give a version[+build]."))
    for malformed in ["1.9+", "banana", "1..0", "1."] {
      let result = try await Orchestrate.run(
        ["run", manifest.path, "--app-version", malformed])
      #expect(result.status == 64)
      #expect(
        result.stderr.hasPrefix(
          "Error: The value '\(malformed)' for '--app-version' is not a version; write it like '1.9.0' or '1.9.0+41'."
        ), "\(result.stderr)")
    }
  }

  @Test func dataPathsResolveAgainstTheDataFolderAndTheSplashIsCharted() async throws {
    let data = try TemporaryFolder()
    let report = data.url.appendingPathComponent("report.json")
    let result = try await Orchestrate.run(
      ["run", "manifests/music.json", "--data-dir", data.url.path, "--report", report.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      FileManager.default.fileExists(
        atPath: data.url.appendingPathComponent(".data/music.sqlite").path))
    // music.json holds its splash for at least 300ms, and a skeleton replaces it from 450ms:
    // usually the launch is quicker, but a loaded machine (or a sanitizer) can make it slower.
    let parsed = try readReport(report.path)
    let interactive = try #require(parsed.time(ofMilestone: "interactive") ?? nil)
    let contentAt = max(.milliseconds(300), interactive)
    let skeletonFrom: Duration? = interactive > .milliseconds(450) ? .milliseconds(450) : nil
    #expect(parsed.splash == SplashTiming(contentAt: contentAt, skeletonFrom: skeletonFrom))
    let shown = String(format: "%.3fs", contentAt.seconds)
    #expect(result.stdout.contains("milestone  interactive (splash: content at \(shown)"))
    #expect(result.stdout.contains("(splash)    ░░░░"))
    #expect(result.stdout.contains("content at \(shown)"))

    let missing = try await Orchestrate.run(
      ["run", "manifests/music.json", "--data-dir", data.url.appendingPathComponent("nope").path])
    #expect(missing.status == 66)
    #expect(
      missing.stderr
        == "Error: The data folder '\(data.url.path)/nope' given to '--data-dir' does not exist; create it first.\n"
    )
  }

  @Test func marksTheSkeletonOnTheMilestonesLineAndTheTimeline() {
    let splash = SplashPolicy(minimum: .milliseconds(300), skeletonAfter: .milliseconds(150))
    let late = LaunchEvent(time: .milliseconds(600), kind: .milestone(name: "interactive"))
    #expect(
      EventLog.line(for: late, splash: splash)
        == "milestone  interactive (splash: content at 0.600s, skeleton from 0.450s)")
    let early = LaunchEvent(time: .milliseconds(100), kind: .milestone(name: "interactive"))
    #expect(
      EventLog.line(for: early, splash: splash)
        == "milestone  interactive (splash: content at 0.300s)")

    var report = LaunchReport(
      manifest: "m.json", name: "T", outcome: .succeeded, route: nil, duration: .milliseconds(800),
      milestones: [.init(name: "interactive", time: .milliseconds(600))], criticalPath: [],
      steps: [
        .init(
          id: "page", plugin: "p", state: .succeeded, start: .zero, end: .milliseconds(600),
          attempts: 1, usedFallback: false, error: nil)
      ])
    report.splash = SplashTiming(policy: splash, readyAt: .milliseconds(600), endedAt: .zero)
    #expect(
      Timeline.render(report, width: 8) == [
        "            0s 0.800s",
        "  page      ██████    0.600s",
        "  (splash)  ░░░░▓▓    content at 0.600s, skeleton from 0.450s",
      ])
  }

  /// A folder whose name is not UTF-8 is said to be so, not to be missing: Swift repairs such
  /// an argument, and the repaired name names nothing.
  @Test func anArgumentThatIsNotUTF8IsSaidToBeSo() async throws {
    let folder = try TemporaryFolder()
    let manifest = try folder.write(
      "app.json", #"{ "version": 1, "steps": [ { "id": "a", "plugin": "simulate" } ] }"#)
    let (status, output) = try await runTool([
      "python3", "-c",
      """
      import os, subprocess, sys
      folder = os.fsencode(sys.argv[2]) + b'/d\\xff'
      os.mkdir(folder)
      result = subprocess.run([sys.argv[1], 'run', sys.argv[3], '--data-dir', folder],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
      sys.stdout.write(result.stderr.decode('utf-8', 'replace'))
      sys.exit(result.returncode)
      """,
      Orchestrate.buildFolder.appendingPathComponent("orchestrate").path, folder.path(""),
      manifest,
    ])
    #expect(status == 64)
    #expect(
      output
        == "Error: The argument '\(folder.path(""))/d\u{FFFD}' is not valid UTF-8 (1 byte sequence shown as \u{FFFD}); orchestrate reads names as UTF-8. Rename the file or folder, or reach it through a symbolic link whose name is UTF-8.\n"
    )
  }
}
