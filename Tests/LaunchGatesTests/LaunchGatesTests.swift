import Foundation
import LaunchGatesPlugin
import LaunchOrchestrator
import PluginTestSupport
import Testing

@Suite("launch gates", .timeLimit(.minutes(10)))
struct LaunchGatesTests {
  private let plugins: [any StepPlugin.Type] = [
    MaintenanceGate.self, VersionGate.self, SessionGate.self, HouseholdGate.self,
  ]

  private let chain = """
    { "version": 1, "app": { "version": "1.10.0" }, "steps": [
      { "id": "maintenance", "plugin": "gate.maintenance", "params": { "metadata": "metadata.json" } },
      { "id": "version", "plugin": "gate.version", "dependsOn": ["maintenance"],
        "params": { "metadata": "metadata.json" } },
      { "id": "session", "plugin": "gate.session", "dependsOn": ["version"], "params": { "session": "session.json" } },
      { "id": "household", "plugin": "gate.household", "dependsOn": ["session"], "params": { "profile": "profile.json" } }
    ] }
    """

  private func folder(
    metadata: String = #"{ "isUnderMaintenance": false, "minimumVersion": "1.9.2" }"#,
    session: String? = #"{ "userId": "u1", "token": "t", "expiresAt": "2999-01-01T00:00:00Z" }"#,
    profile: String = #"{ "householdIds": ["h1", "h2"], "lastSelectedHouseholdId": "h2" }"#
  ) throws -> ScratchFolder {
    let folder = try ScratchFolder()
    try folder.write("metadata.json", metadata)
    if let session { try folder.write("session.json", session) }
    try folder.write("profile.json", profile)
    return folder
  }

  @Test func letsTheLaunchThroughWhenEveryGateIsOpen() async throws {
    let report = try await launch(chain, in: try folder(), plugins: plugins).report
    #expect(report.outcome == .succeeded)
    #expect(report.route == nil)
  }

  @Test func routesToMaintenanceAndSkipsTheRest() async throws {
    let report = try await launch(
      chain,
      in: try folder(
        metadata: #"{ "isUnderMaintenance": true, "maintenanceMessage": "Back at 10:00" }"#),
      plugins: plugins
    ).report
    #expect(report.outcome == .routed)
    #expect(report.route == .maintenance)
    #expect(report.step("maintenance")?.notes == ["Back at 10:00"])
    #expect(report.step("version")?.state == .skipped)
  }

  @Test func routesToUpdateRequiredComparingVersionsAsNumbers() async throws {
    let report = try await launch(
      chain,
      in: try folder(metadata: #"{ "isUnderMaintenance": false, "minimumVersion": "1.11" }"#),
      plugins: plugins
    ).report
    #expect(report.route == .updateRequired)
    #expect(report.step("version")?.notes == ["version 1.10.0 is below the minimum 1.11"])
  }

  @Test(arguments: [
    nil, #"{ "userId": "u1" }"#,
    #"{ "userId": "u1", "token": "t", "expiresAt": "2001-01-01T00:00:00Z" }"#,
  ])
  func routesToLoginWithoutAValidSession(session: String?) async throws {
    let report = try await launch(chain, in: try folder(session: session), plugins: plugins).report
    #expect(report.route == .loginRequired)
  }

  @Test func routesToCreateOrSelectAHousehold() async throws {
    let none = try await launch(
      chain, in: try folder(profile: #"{ "householdIds": [] }"#), plugins: plugins
    ).report
    #expect(none.route == .createHousehold)
    let unselected = try await launch(
      chain,
      in: try folder(profile: #"{ "householdIds": ["h1"], "lastSelectedHouseholdId": "gone" }"#),
      plugins: plugins
    ).report
    #expect(unselected.route == .selectHousehold)
  }

  @Test func refusesAnEmptyFilePathWhenTheManifestLoads() {
    let manifest = """
      { "version": 1, "steps": [
        { "id": "maintenance", "plugin": "gate.maintenance", "params": { "metadata": "" } },
        { "id": "version", "plugin": "gate.version", "params": { "metadata": "" } },
        { "id": "session", "plugin": "gate.session", "params": { "session": "" } },
        { "id": "household", "plugin": "gate.household", "params": { "profile": "" } }
      ] }
      """
    #expect(
      loadProblems(manifest, plugins: plugins) == [
        "steps[0].params.metadata: 'metadata' cannot be empty.",
        "steps[1].params.metadata: 'metadata' cannot be empty.",
        "steps[2].params.session: 'session' cannot be empty.",
        "steps[3].params.profile: 'profile' cannot be empty.",
      ])
  }

  @Test func failsClearlyOnAMissingOrMalformedFile() async throws {
    let broken = try folder(metadata: #"{ "isUnderMaintenance": "no" }"#)
    let report = try await launch(chain, in: broken, plugins: plugins).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("maintenance")?.error
        == "'isUnderMaintenance' in '\(broken.file("metadata.json").path)' must be true or false, not a string"
    )
    let missing = try folder()
    try FileManager.default.removeItem(at: missing.file("profile.json"))
    let noProfile = try await launch(chain, in: missing, plugins: plugins).report
    #expect(
      noProfile.step("household")?.error
        == "the profile file '\(missing.file("profile.json").path)' does not exist")
  }

  @Test func refusesAFIFOOrAnOversizedFileInsteadOfWaitingOnItOrReadingItAll() async throws {
    let fifo = try folder()
    let metadata = fifo.file("metadata.json")
    try FileManager.default.removeItem(at: metadata)
    try #require(mkfifo(metadata.path, 0o600) == 0)
    let report = try await launch(chain, in: fifo, plugins: plugins).report
    #expect(
      report.step("maintenance")?.error
        == "'\(metadata.path)' is a FIFO (named pipe), not a regular file; a gate needs a readable JSON file of at most 1 MiB there"
    )

    let big = try folder(profile: "{ \"pad\": \"" + String(repeating: "x", count: 1 << 20) + "\" }")
    let oversized = try await launch(chain, in: big, plugins: plugins).report
    #expect(
      oversized.step("household")?.error
        == "'\(big.file("profile.json").path)' is over the 1048576-byte limit; a gate needs a readable JSON file of at most 1 MiB there"
    )
  }

  @Test func followsALinkToItsFileAndTakesALinkToNothingForNoFile() async throws {
    let linked = try folder()
    // The metadata is a relative link to the file, as an app's build may ship it.
    try FileManager.default.moveItem(
      at: linked.file("metadata.json"), to: linked.file("shipped-metadata.json"))
    try FileManager.default.createSymbolicLink(
      atPath: linked.file("metadata.json").path, withDestinationPath: "shipped-metadata.json")
    // The session is a link to a file that is gone: no session, so the user logs in.
    try FileManager.default.removeItem(at: linked.file("session.json"))
    try FileManager.default.createSymbolicLink(
      atPath: linked.file("session.json").path, withDestinationPath: "signed-out.json")
    let report = try await launch(chain, in: linked, plugins: plugins).report
    #expect(report.step("version")?.state == .succeeded)
    #expect(report.route == .loginRequired)
  }

  @Test func failsOnAnAppVersionThatIsNotOne() async throws {
    var environment = LaunchEnvironment()
    environment[AppInfo.self] = AppInfo(version: "one point ten")
    let report = try await launch(
      chain, in: try folder(), plugins: plugins, environment: environment
    ).report
    #expect(report.outcome == .failed)
    #expect(
      report.step("version")?.error
        == "the app's version 'one point ten' is not a version; write it like 1.9.2")
  }

  @Test func theAppsOwnVersionWinsOverTheManifestsDefault() async throws {
    var environment = LaunchEnvironment()
    environment[AppInfo.self] = AppInfo(version: "1.9.0", build: "7")
    let report = try await launch(
      chain, in: try folder(), plugins: plugins, environment: environment
    ).report
    #expect(report.route == .updateRequired)
    #expect(report.step("version")?.notes == ["version 1.9.0 is below the minimum 1.9.2"])
  }

  @Test func refusesToStartWithoutTheAppsVersion() async throws {
    let manifest = chain.replacingOccurrences(of: #""app": { "version": "1.10.0" }, "#, with: "")
    #expect(manifest != chain)
    let (report, events) = try await launch(manifest, in: try folder(), plugins: plugins)
    #expect(report.outcome == .failed)
    #expect(
      report.error
        == "the launch did not start: step 'version' (gate.version) requires AppInfo in the launch environment, and none was provided. Put the value in the LaunchEnvironment the launch runs with."
    )
    #expect(report.steps.allSatisfy { $0.state == .skipped && $0.start == nil })
    #expect(!events.contains { if case .started = $0.kind { true } else { false } })
  }

  @Test func comparesSemanticVersions() throws {
    func version(_ text: String) throws -> SemanticVersion { try #require(SemanticVersion(text)) }
    #expect(try version("1.10.0") > version("1.9.2"))
    #expect(try version("2") > version("1.99.99"))
    #expect(try version("1.2") == version("1.2.0"))
    #expect(try version("1.2.0-beta.2") < version("1.2.0"))
    #expect(try version("1.2.0-beta.2") > version("1.2.0-beta.1"))
    #expect(SemanticVersion("1..2") == nil)
    #expect(SemanticVersion("") == nil)
  }
}
