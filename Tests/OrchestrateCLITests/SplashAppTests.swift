import Foundation
import SQLiteStore
import Testing

/// The example app, run as a built binary the way its developer would: the shipped music
/// manifest, data in a writable folder of its own, the splash rule, and the first page taken
/// from the step's output.
@Suite("Example app", .timeLimit(.minutes(10)))
struct SplashAppTests {
  /// Without a manifest, the example runs the shipped music launch from any folder, not only
  /// from the repository's root.
  @Test func runsTheShippedMusicLaunchWhenCalledFromAnotherFolder() async throws {
    let data = try TemporaryFolder()
    let result = try await Orchestrate.run(
      ["--data-dir", data.url.path], in: data.url, binary: "splash-app")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.split(separator: "\n").contains("outcome: succeeded"), "\(result.stdout)")
  }

  @Test func showsTheSplashThenTheContentWithTheFirstPageOfSongs() async throws {
    let data = try TemporaryFolder()
    let result = try await Orchestrate.run(
      ["manifests/music.json", "--data-dir", data.url.path], binary: "splash-app")
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)

    let screens = lines.filter { $0.hasPrefix("screen: ") }
    /// The time a screen line says it showed at, in milliseconds.
    func time(_ line: String) -> Int? {
      line.split(separator: " ").dropLast().last.flatMap { Int($0) }
    }
    // music.json holds the splash for 300ms: content never shows before it. A skeleton
    // replaces the splash only when the content is not there by 450ms, which a loaded
    // machine (or a sanitizer) can make happen: the app decides it on its own clock, and a
    // content printed just past 450ms may have been in before the skeleton's turn, so either
    // sequence is right, and a skeleton never shows before 450ms.
    let contentAt = try #require(screens.last.flatMap(time))
    #expect(contentAt >= 300)
    let names = screens.map { String($0.split(separator: " ")[1]) }
    #expect(names == ["splash", "content"] || names == ["splash", "skeleton", "content"])
    if names.count == 3 {
      #expect(try #require(time(screens[1])) >= 450)
    }
    #expect(lines.contains("outcome: succeeded"))

    // The store was created in the data folder, not next to the manifest, and the page the
    // app printed is the store's most played songs, in order.
    let store = data.url.appendingPathComponent(".data/music.sqlite")
    let connection = try SQLiteConnection(url: store, mode: .readOnly)
    let count = try #require(try connection.integer("SELECT count(*) FROM songs"))
    let expected = try connection.query(
      "SELECT title, artist, play_count FROM songs ORDER BY play_count DESC, id LIMIT 5"
    ) { "  \($0.text(0) ?? "") - \($0.text(1) ?? "") (\($0.integer(2)) plays)" }
    #expect(
      lines.contains("first page: \(min(count, 50)) songs\(count > 50 ? ", more to load" : "")"))
    let printed = lines.drop { !$0.hasPrefix("first page: ") }.dropFirst()
    #expect(Array(printed) == expected)
    #expect(expected.count == 5)
  }
}
