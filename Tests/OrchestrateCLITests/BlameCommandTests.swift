import Foundation
import LaunchOrchestrator
import Testing

@Suite("orchestrate blame", .timeLimit(.minutes(10)))
struct BlameCommandTests {
  /// A report whose `interactive` waited 1.5s for a slot `store` held, then for `page`.
  private func writeReport(in folder: TemporaryFolder) throws -> String {
    typealias Link = LaunchReport.CriticalChain.Link
    var report = LaunchReport(
      manifest: "m.json", name: "Music", outcome: .succeeded, route: nil,
      duration: .milliseconds(2500),
      milestones: [
        .init(name: "firstFrame", time: .seconds(1)), .init(name: "interactive", time: .seconds(2)),
      ],
      criticalPath: ["store", "page", "warm"],
      steps: [
        .init(
          id: "store", plugin: "simulate", state: .succeeded, start: .zero,
          end: .milliseconds(1500),
          attempts: 1, usedFallback: false, error: nil),
        .init(
          id: "page", plugin: "simulate", state: .succeeded, start: .milliseconds(1500),
          end: .seconds(2), attempts: 1, usedFallback: false, error: nil),
      ])
    report.criticalChains = [
      .init(
        milestone: "interactive",
        links: [
          Link(
            step: "store", heldVia: nil, start: .zero, end: .milliseconds(1500), wait: .zero,
            work: .milliseconds(1500)),
          Link(
            step: "page", heldVia: .slot, start: .milliseconds(1600), end: .seconds(2),
            wait: .milliseconds(100), work: .milliseconds(400)),
        ]),
      .init(
        milestone: nil,
        links: [
          Link(
            step: "warm", heldVia: nil, start: .zero, end: .milliseconds(2500), wait: .zero,
            work: .milliseconds(2500))
        ]),
    ]
    return try folder.write("r.json", report.jsonText)
  }

  @Test func listsTheStepsOnInteractivesChainByHowLongEachHeldItBack() async throws {
    let folder = try TemporaryFolder()
    let result = try await Orchestrate.run(["blame", try writeReport(in: folder)])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    try expectMatchesGolden(result.stdout, "blame.txt")
  }

  @Test func blamesTheMilestoneNamed() async throws {
    let folder = try TemporaryFolder()
    let path = try writeReport(in: folder)
    let missing = try await Orchestrate.run(["blame", path, "--milestone", "firstFrame"])
    #expect(missing.status == 64)
    #expect(
      missing.stderr.contains(
        "Error: The report '\(path)' has no critical chain to 'firstFrame': its reached milestones are 'interactive'."
      ))
  }

  @Test func refusesAReportWrittenBeforeCriticalChains() async throws {
    let folder = try TemporaryFolder()
    let path = try folder.write(
      "old.json",
      """
      { "manifest": "m.json", "name": "m", "outcome": "succeeded", "route": null, "duration": 0.5,
        "milestones": { "interactive": 0.5 }, "criticalPath": ["a"],
        "steps": [ { "id": "a", "plugin": "simulate", "state": "succeeded", "start": 0, "end": 0.5,
          "attempts": 1, "usedFallback": false, "error": null } ] }
      """)
    let result = try await Orchestrate.run(["blame", path])
    #expect(result.status == 65)
    #expect(
      result.stderr.contains(
        "Error: The report '\(path)' has no critical chains: it was written by an older orchestrate or no step ran; run the launch again with 'orchestrate run --report'."
      ))
  }
}
