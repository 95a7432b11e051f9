import Dispatch
import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StateRestorePlugin
import StoreInitPlugin
import Synchronization
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// What seed 001's results screen saves: the result at the top of the list and the tab.
private struct ResultsPosition: Codable, Equatable {
  var scrollAnchor: String?
  var selectedTab: String
}

@Suite("state.restore", .timeLimit(.minutes(10)))
struct StateRestoreTests {
  private let manifest = """
    { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore" } ] }
    """
  private let plugins: [any StepPlugin.Type] = [StateRestoreStep.self]

  private func restore(
    _ manifest: String? = nil, in folder: ScratchFolder
  ) async throws -> (state: RestoredState?, notes: [String], outcome: LaunchOutcome) {
    let report = try await launch(manifest ?? self.manifest, in: folder, plugins: plugins).report
    return (
      report.output(of: "restore", as: RestoredState.self), report.step("restore")?.notes ?? [],
      report.outcome
    )
  }

  /// The folder's files but the state's write lock, which stays (see SharedFile).
  private func names(_ folder: ScratchFolder, _ path: String = ".state") throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.file(path).path).filter {
      !$0.hasSuffix(".lock")
    }.sorted()
  }

  @Test func handsBackWhatTheAppSavedTyped() async throws {
    let folder = try ScratchFolder()
    var saved = RestoredState()
    try saved.set("result-42", for: "scrollAnchor")
    try saved.set(2, for: "selectedTab")
    try saved.set(0.123456789, for: "offset")
    try LaunchStateFile(dataDirectory: folder.url).save(saved)

    let (state, notes, outcome) = try await restore(in: folder)
    #expect(outcome == .succeeded)
    #expect(state == saved)
    #expect(state?.value(for: "scrollAnchor", as: String.self) == "result-42")
    #expect(state?.value(for: "selectedTab", as: Int.self) == 2)
    // Saved numbers come back exactly, not rounded as reports round them.
    #expect(state?.value(for: "offset", as: Double.self) == 0.123456789)
    #expect(
      notes == [
        "restored 3 values (offset, scrollAnchor, selectedTab) from '\(folder.file(".state/launch-state.json").path)'"
      ])
  }

  @Test func aValueReadAsAnotherTypeIsNilNotACrash() throws {
    var state = RestoredState()
    try state.set(2, for: "selectedTab")
    try state.set(["a", "b"], for: "recent")
    #expect(state.value(for: "selectedTab", as: String.self) == nil)
    #expect(state.value(for: "recent", as: [Int].self) == nil)
    #expect(state.value(for: "missing", as: String.self) == nil)
    #expect(state.decode(as: ResultsPosition.self) == nil)
    #expect(state.value(for: "recent", as: [String].self) == ["a", "b"])
  }

  @Test func anAppTypeSavedWholeComesBackWhole() async throws {
    let folder = try ScratchFolder()
    let position = ResultsPosition(scrollAnchor: "result-7", selectedTab: "history")
    try LaunchStateFile(dataDirectory: folder.url).save(position)
    let state = try #require(try await restore(in: folder).state)
    #expect(state.decode(as: ResultsPosition.self) == position)
    #expect(state.value(for: "selectedTab", as: String.self) == "history")
    #expect(
      try String(contentsOf: folder.file(".state/launch-state.json"), encoding: .utf8)
        == "{\n  \"scrollAnchor\": \"result-7\",\n  \"selectedTab\": \"history\"\n}\n")
  }

  /// The app side, as docs/app-integration.md shows it (without SwiftUI).
  @MainActor @Test func theAppReadsTheRestoredStateFromTheSessionAndSavesItBack() async throws {
    let folder = try ScratchFolder()
    let path = try folder.write("launch.json", manifest).path
    var registry = PluginRegistry()
    registry.register(plugins)
    let plan = try ManifestLoader(registry: registry).load(path: path)

    // First launch: nothing saved yet, so the app starts at the top on its default tab.
    let launch = LaunchSession()
    _ = await launch.run(plan, on: LaunchEngine())
    let restored = launch.output(of: "restore", as: RestoredState.self) ?? RestoredState()
    var anchor = restored.value(for: "scrollAnchor", as: String.self)
    var tab = restored.value(for: "selectedTab", as: String.self) ?? "results"
    #expect(anchor == nil && tab == "results")

    // The screen disappears: save once, not on every scroll event.
    anchor = "result-42"
    tab = "history"
    let stateFile = LaunchStateFile(dataDirectory: plan.dataDirectory)
    var state = RestoredState()
    try state.set(anchor, for: "scrollAnchor")
    try state.set(tab, for: "selectedTab")
    try stateFile.save(state)

    let next = LaunchSession()
    _ = await next.run(plan, on: LaunchEngine())
    let back = try #require(next.output(of: "restore", as: RestoredState.self))
    #expect(back.value(for: "scrollAnchor", as: String.self) == "result-42")
    #expect(back.value(for: "selectedTab", as: String.self) == "history")
  }

  @Test func aMissingFileIsEmptyStateAndANote() async throws {
    let folder = try ScratchFolder()
    let (state, notes, outcome) = try await restore(in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(
      notes == [
        "no saved state at '\(folder.file(".state/launch-state.json").path)'; started from empty state"
      ])
  }

  @Test(arguments: [
    ("{ \"scrollAnchor\": \"res", "it is not valid JSON: unterminated string at line 1, column 19"),
    ("[\"result-42\"]", "it holds an array, not a JSON object"),
    ("", "it is empty"),
    (
      "{ \"tab\": 1, \"tab\": 2 }",
      "it has the key 'tab' twice, so which one counts is ambiguous"
    ),
  ])
  func aCorruptFileIsMovedAsideByteForByteAndTheLaunchGoesOn(text: String, reason: String)
    async throws
  {
    let folder = try ScratchFolder()
    let file = try folder.write(".state/launch-state.json", text)
    let (state, notes, outcome) = try await restore(in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    let aside = try #require(try names(folder).first)
    #expect(try names(folder).count == 1)
    #expect(aside.hasPrefix("launch-state.json.unreadable-"))
    #expect(try String(contentsOf: folder.file(".state/\(aside)"), encoding: .utf8) == text)
    #expect(
      notes == [
        "the saved state '\(file.path)' was unreadable (\(reason)); moved it aside to '\(aside)' and started from empty state"
      ])

    // The next save writes a fresh file beside what was moved aside.
    try LaunchStateFile(dataDirectory: folder.url).save(RestoredState())
    #expect(try names(folder) == [aside, "launch-state.json"].sorted())
  }

  @Test func aFileOverTheLimitIsMovedAsideAndASaveOverItIsRefused() async throws {
    let folder = try ScratchFolder()
    let big = "{ \"blob\": \"" + String(repeating: "x", count: LaunchStateFile.maximumSize) + "\" }"
    let file = try folder.write(".state/launch-state.json", big)
    let (state, notes, _) = try await restore(in: folder)
    #expect(state?.isEmpty == true)
    let aside = try #require(try names(folder).first)
    #expect(
      notes == [
        "the saved state '\(file.path)' was unreadable (it is \(big.utf8.count) bytes, over the 65536-byte limit); moved it aside to '\(aside)' and started from empty state"
      ])

    try LaunchStateFile(dataDirectory: folder.url).save(["selectedTab": "results"])
    var tooMuch = RestoredState()
    try tooMuch.set(String(repeating: "y", count: LaunchStateFile.maximumSize), for: "blob")
    let error = #expect(throws: StepFailure.self) {
      try LaunchStateFile(dataDirectory: folder.url).save(tooMuch)
    }
    #expect(
      error?.message
        == "cannot save the launch state to '\(file.path)': it would be 65553 bytes, over the 65536-byte limit, so the file was left as it was; save ids and choices, not the data they point to"
    )
    #expect(
      try String(contentsOf: file, encoding: .utf8) == "{\n  \"selectedTab\": \"results\"\n}\n")
  }

  @Test func aFolderWhereTheFileShouldBeIsLeftAndNoted() async throws {
    let folder = try ScratchFolder()
    let file = folder.file(".state/launch-state.json")
    try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
    let (state, notes, outcome) = try await restore(in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(
      notes == [
        "cannot use '\(file.path)': it is a folder, not a regular file, and replacing it could destroy it; name a regular file instead; started from empty state and left it as it was"
      ])
    #expect(try names(folder) == ["launch-state.json"])
  }

  @Test func keysRestoresOnlyThoseAndNotesTheOnesNeverSaved() async throws {
    let folder = try ScratchFolder()
    try folder.write(
      "state/screen.json", #"{ "scrollAnchor": "result-3", "selectedTab": "history" }"#)
    let (state, notes, _) = try await restore(
      """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "state/screen.json", "keys": ["selectedTab", "filter"] } } ] }
      """, in: folder)
    #expect(state?.keys == ["selectedTab"])
    #expect(
      notes == [
        "nothing saved for 'filter'",
        "restored 1 value (selectedTab) from '\(folder.file("state/screen.json").path)'",
      ])
  }

  @Test func saveFollowsASymlinkAndKeepsPermissions() throws {
    let folder = try ScratchFolder()
    let real = try folder.write("real.json", "{}")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: real.path)
    try FileManager.default.createDirectory(
      at: folder.file(".state"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: folder.file(".state/launch-state.json").path, withDestinationPath: real.path)
    try LaunchStateFile(dataDirectory: folder.url).save(["selectedTab": "history"])
    #expect(
      try FileManager.default.destinationOfSymbolicLink(
        atPath: folder.file(".state/launch-state.json").path) == real.path)
    #expect(try String(contentsOf: real, encoding: .utf8).contains("history"))
    let mode = try FileManager.default.attributesOfItem(atPath: real.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o600)
  }

  @Test func anUnreadableFileALinkLeadsToIsMovedAsideBesideItselfAndTheLinkStays() async throws {
    let folder = try ScratchFolder()
    let text = #"{"a": 1,"#
    let real = try folder.write("real/state.json", text)
    let link = folder.file("state.json")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "real/state.json")
    let (state, notes, outcome) = try await restore(
      """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "state.json" } } ] }
      """, in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "real/state.json")
    #expect(!FileManager.default.fileExists(atPath: real.path))
    let aside = try #require(try names(folder, "real").first)
    #expect(try names(folder, "real").count == 1)
    #expect(aside.hasPrefix("state.json.unreadable-"))
    #expect(try Data(contentsOf: folder.file("real/\(aside)")) == Data(text.utf8))
    #expect(!(try names(folder, ".")).contains { $0.contains("unreadable") })
    #expect(
      notes == [
        "the saved state '\(link.path)' was unreadable (it is not valid JSON: unexpected end of file; expected a key in double quotes at line 1, column 9); moved the file it links to, '\(real.path)', aside to '\(aside)' (the link stays) and started from empty state"
      ])

    // The link now leads to nothing: the app's next save creates the file where it leads,
    // beside what was moved aside, and the link stays; the next launch restores that save.
    try LaunchStateFile(url: link).save(["selectedTab": "history"])
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "real/state.json")
    #expect(try names(folder, "real") == [aside, "state.json"].sorted())
    #expect(try Data(contentsOf: folder.file("real/\(aside)")) == Data(text.utf8))
    let (restored, laterNotes, _) = try await restore(
      """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "state.json" } } ] }
      """, in: folder)
    #expect(restored?.value(for: "selectedTab", as: String.self) == "history")
    #expect(laterNotes == ["restored 1 value (selectedTab) from '\(link.path)'"])
  }

  /// A store named where the state goes is neither moved aside (its WAL, with rows not yet
  /// in the database file, would stay behind, and the next launch make a new store) nor
  /// replaced by the app's save.
  @Test func aStoreNamedAsTheStateFileIsNeitherMovedAsideNorReplaced() async throws {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "library.sqlite" } } ] }"#,
      in: folder, plugins: [StoreInitStep.self])
    let store = folder.file("library.sqlite")
    let connection = try SQLiteConnection(url: store, mode: .readWrite)
    try connection.run("INSERT INTO works (id, title) VALUES (1, 'Kindred')")
    let before = try Data(contentsOf: store)
    let (state, notes, outcome) = try await restore(
      """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "library.sqlite" } } ] }
      """, in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(
      notes == [
        "the saved state '\(store.path)' is a SQLite database, not a state file (is 'file' a store's path?); started from empty state and left it as it was"
      ])
    #expect(
      throws: StepFailure(
        "cannot save the launch state to '\(store.path)': it is a SQLite database, not a state file, so it was left as it was; save the state to a file of its own"
      )
    ) { try LaunchStateFile(url: store).save(["selectedTab": "history"]) }
    #expect(try Data(contentsOf: store) == before)
    #expect(try connection.integer("SELECT count(*) FROM works") == 1)
    #expect(!(try names(folder, ".")).contains { $0.contains("unreadable") })
  }

  @Test(arguments: [
    ("nowhere/state.json", "is not a folder that exists; create the folder or change the link"),
    ("state.json", "a chain of more than 32 symbolic links (a loop?)"),
  ])
  func aLinkToNothingOrALoopOfLinksIsEmptyStateAndStays(target: String, problem: String)
    async throws
  {
    let folder = try ScratchFolder()
    let link = folder.file("state.json")
    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)
    let (state, notes, outcome) = try await restore(
      """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "state.json" } } ] }
      """, in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target)
    #expect(try names(folder, ".") == ["launch.json", "state.json"])
    #expect(notes.count == 1)
    #expect(notes.first?.contains(problem) == true, "\(notes)")
    #expect(notes.first?.hasSuffix("; started from empty state and left it as it was") == true)
  }

  @Test func aLinkToNothingInAFolderThatExistsIsNoStateYetAndTheFirstSaveCreatesItsTarget()
    async throws
  {
    let folder = try ScratchFolder()
    try FileManager.default.createDirectory(
      at: folder.file("shared"), withIntermediateDirectories: false)
    let link = folder.file("state.json")
    try FileManager.default.createSymbolicLink(
      atPath: link.path, withDestinationPath: "shared/state.json")
    let manifest = """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore",
        "params": { "file": "state.json" } } ] }
      """
    let (state, notes, outcome) = try await restore(manifest, in: folder)
    #expect(outcome == .succeeded)
    #expect(state?.isEmpty == true)
    #expect(notes == ["no saved state at '\(link.path)'; started from empty state"])

    try LaunchStateFile(url: link).save(["selectedTab": "history"])
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "shared/state.json")
    let (saved, savedNotes, _) = try await restore(manifest, in: folder)
    #expect(saved?.value(for: "selectedTab", as: String.self) == "history")
    #expect(savedNotes == ["restored 1 value (selectedTab) from '\(link.path)'"])
  }

  @Test func concurrentSavesNeverLeaveATornFile() throws {
    let folder = try ScratchFolder()
    let stateFile = LaunchStateFile(dataDirectory: folder.url)
    // Each writer saves its own complete state; a torn file would be none of them.
    let expected = (0..<4).map { writer in
      ResultsPosition(
        scrollAnchor: String(repeating: "\(writer)", count: 4000), selectedTab: "tab-\(writer)")
    }
    let failures = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 4) { writer in
      for _ in 0..<25 {
        do {
          try stateFile.save(expected[writer])
          let read = try JSONDecoder().decode(
            ResultsPosition.self, from: Data(contentsOf: stateFile.url))
          if !expected.contains(read) { failures.withLock { $0.append("a torn file") } }
        } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }
    }
    #expect(failures.withLock { $0 } == [])
    #expect(try names(folder) == ["launch-state.json"])
  }

  @Test func aSaverKilledMidSaveLeavesThePreviousStateAndTheNextSaveClearsItsLeftover()
    async throws
  {
    let folder = try ScratchFolder()
    let stateFile = LaunchStateFile(dataDirectory: folder.url)
    try stateFile.save(ResultsPosition(scrollAnchor: "result-3", selectedTab: "results"))
    // A real process writes half a state into the temporary file a save of its own would use,
    // then is killed with SIGKILL before it can rename it over the state file.
    let saver = Process()
    saver.executableURL = URL(fileURLWithPath: "/bin/sh")
    saver.arguments = [
      "-c",
      #"printf '{ "scrollAnchor": "result-9' > "$1/.launch-state.json.writing-0"; exec sleep 3600"#,
      "saver", folder.file(".state").path,
    ]
    try saver.run()
    let leftover = SafeFiles.temporaryName(for: "launch-state.json", slot: 0)
    while ((try? Data(contentsOf: folder.file(".state/\(leftover)")))?.count ?? 0) == 0 {
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(saver.processIdentifier, SIGKILL)
    saver.waitUntilExit()
    #expect(saver.terminationReason == .uncaughtSignal)

    let state = try #require(try await restore(in: folder).state)
    #expect(
      state.decode(as: ResultsPosition.self)
        == ResultsPosition(scrollAnchor: "result-3", selectedTab: "results"))
    #expect(try names(folder) == [leftover, "launch-state.json"])

    try stateFile.save(ResultsPosition(scrollAnchor: "result-4", selectedTab: "results"))
    #expect(try names(folder) == ["launch-state.json"])
  }

  @Test(arguments: [
    (
      #"{ "file": "" }"#,
      "steps[0].params.file: 'file' cannot be empty; leave it out for '.state/launch-state.json'."
    ),
    (
      #"{ "keys": [] }"#,
      "steps[0].params.keys: 'keys' cannot be empty; leave it out instead."
    ),
  ])
  func refusesParamsThatMakeNoSense(params: String, problem: String) {
    let manifest = """
      { "version": 1, "steps": [ { "id": "restore", "plugin": "state.restore", "params": \(params) } ] }
      """
    #expect(loadProblems(manifest, plugins: plugins) == [problem])
  }
}
