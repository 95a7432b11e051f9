import Foundation
import LaunchOrchestrator
import PluginTestSupport
import SQLiteStore
import StoreInitPlugin
import Testing

@testable import MusicLibraryPlugin

@Suite("music.page and music.search", .timeLimit(.minutes(10)))
struct MusicLibraryTests {
  private let plugins: [any StepPlugin.Type] = [
    StoreInitStep.self, MusicPageStep.self, MusicSearchStep.self,
  ]

  /// A music store with `count` songs titled "Song 0001"...; song n was played n % 97 times.
  private func library(songs count: Int) async throws -> ScratchFolder {
    let folder = try ScratchFolder()
    _ = try await launch(
      #"{ "version": 1, "steps": [ { "id": "store", "plugin": "store.init", "params": { "path": "music.sqlite", "schema": "music" } } ] }"#,
      in: folder, plugins: plugins)
    let connection = try SQLiteConnection(url: folder.file("music.sqlite"), mode: .readWrite)
    try connection.immediateTransaction {
      let insert = try connection.prepare(
        "INSERT INTO songs (id, title, artist, album, play_count, last_played_at, added_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
      )
      for n in 1...count {
        try insert.bind([
          .integer(Int64(n)), .text(String(format: "Song %04d", n)),
          .text(n % 2 == 0 ? "Nina Simone" : "Miles Davis"),
          .text("Album \(n % 10)"), .integer(Int64(n % 97)), n % 3 == 0 ? .null : .real(Double(n)),
          .real(Double(n)),
        ])
        while try insert.step() {}
      }
    }
    return folder
  }

  private func page(_ params: String, in folder: ScratchFolder, kind: String = "music.page")
    async throws -> LaunchReport
  {
    try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "music.sqlite", "schema": "music" } },
        { "id": "page", "plugin": "\(kind)", "dependsOn": ["store"], "params": \(params) }
      ] }
      """, in: folder, plugins: plugins
    ).report
  }

  @Test func pagesThroughTheFirstMiddleAndLastPage() async throws {
    let folder = try await library(songs: 120)
    let first = try await page(#"{ "limit": 50, "sort": "alphabetical" }"#, in: folder)
    #expect(
      first.step("page")?.notes == ["loaded 50 songs by alphabetical from offset 0 (hasMore: true)"]
    )
    let middle = try await page(
      #"{ "limit": 50, "offset": 50, "sort": "alphabetical" }"#, in: folder)
    #expect(
      middle.step("page")?.notes == [
        "loaded 50 songs by alphabetical from offset 50 (hasMore: true)"
      ])
    let last = try await page(
      #"{ "limit": 50, "offset": 100, "sort": "alphabetical" }"#, in: folder)
    #expect(
      last.step("page")?.notes == [
        "loaded 20 songs by alphabetical from offset 100 (hasMore: false)"
      ])
    let exact = try await page(
      #"{ "limit": 60, "offset": 60, "sort": "alphabetical" }"#, in: folder)
    #expect(
      exact.step("page")?.notes == [
        "loaded 60 songs by alphabetical from offset 60 (hasMore: false)"
      ])
  }

  @Test func returnsThePageItsDependentsReceive() async throws {
    let folder = try await library(songs: 300)
    let handle = StoreHandle(
      url: folder.file("music.sqlite"), schema: .music, version: 3, isReadOnly: true,
      busyTimeout: .seconds(1))
    let context = StepContext(stepID: "page", manifestDirectory: folder.url, outputs: { [handle] })
    let mostPlayed = try await MusicPageStep(parameters: .init(limit: 5))
      .run(context)
    #expect(mostPlayed.items.map(\.playCount) == [96, 96, 96, 95, 95])
    #expect(mostPlayed.items.map(\.id) == [96, 193, 290, 95, 192])
    let added = try await MusicPageStep(
      parameters: .init(limit: 3, offset: 1, sort: .recentlyAdded)
    ).run(context)
    #expect(added.items.map(\.id) == [299, 298, 297])
    let played = try await MusicPageStep(
      parameters: .init(limit: 2, sort: .recentlyPlayed)
    ).run(context)
    #expect(played.items.map(\.id) == [299, 298])
  }

  private func handle(_ folder: ScratchFolder) -> StoreHandle {
    StoreHandle(
      url: folder.file("music.sqlite"), schema: .music, version: 3, isReadOnly: true,
      busyTimeout: .seconds(1))
  }

  @Test(arguments: SongOrder.allCases)
  func servesEveryOrderFromAnIndexWithoutSorting(order: SongOrder) async throws {
    let folder = try await library(songs: 10)
    let connection = try handle(folder).connect()
    let first = try connection.query(
      "EXPLAIN QUERY PLAN "
        + order.keyset.query(select: MusicStore.columns, from: "songs", after: nil), [51, 0]
    ) { $0.text(3) ?? "" }
    // An index scan that stops after the page: the first page costs the same for any library size.
    #expect(first.count == 1 && first[0].hasPrefix("SCAN songs USING "), "\(first)")
    #expect(first[0].contains("INDEX songs_"), "\(first)")

    // A NULL key only comes from an order whose key may be missing.
    let keys: [SQLiteValue] = order.keyset.isNullable ? [.integer(5), .null] : [.integer(5)]
    for key in keys {
      let cursor = PageCursor(order: order.rawValue, key: key, id: 3, offset: 50, limit: 50)
      let later = try connection.query(
        "EXPLAIN QUERY PLAN "
          + order.keyset.query(select: MusicStore.columns, from: "songs", after: cursor),
        [key, 3, 51]
      ) { $0.text(3) ?? "" }
      // Each range seeks into the index and stops after the page; only those few rows are
      // sorted together.
      let reads = later.filter { $0.contains("songs") && !$0.contains("subquery") }
      #expect(!reads.isEmpty, "\(later)")
      #expect(
        reads.allSatisfy { $0.hasPrefix("SEARCH songs USING ") && $0.contains("INDEX songs_") },
        "\(later)")
    }
  }

  @Test(arguments: SongOrder.allCases)
  func pagesByCursorThroughTiesAndMissingKeysAsOneListing(order: SongOrder) async throws {
    let folder = try await library(songs: 120)
    let store = handle(folder)
    let whole = try store.connect().query(
      "SELECT songs.id FROM songs ORDER BY \(order.keyset.orderBy)"
    ) { $0.integer(0) }
    let context = StepContext(stepID: "page", manifestDirectory: folder.url, outputs: { [store] })
    var page = try await MusicPageStep(
      parameters: .init(limit: 7, sort: order)
    ).run(context)
    var ids = page.items.map(\.id)
    var offsets = [page.offset]
    while let next = page.next {
      page = try MusicPageStep.page(after: next, in: store)
      ids += page.items.map(\.id)
      offsets.append(page.offset)
    }
    #expect(ids == whole)
    #expect(offsets == Array(stride(from: 0, to: 120, by: 7)))
    #expect(!page.hasMore)
  }

  @Test func searchesByPrefixAcrossTitleArtistAndAlbum() async throws {
    let folder = try await library(songs: 40)
    let byTitle = try await page(#"{ "term": "song 001" }"#, in: folder, kind: "music.search")
    #expect(byTitle.step("page")?.notes == ["found 10 songs for 'song 001' (hasMore: false)"])
    let byArtist = try await page(
      #"{ "term": "nina", "limit": 5 }"#, in: folder, kind: "music.search")
    #expect(byArtist.step("page")?.notes == ["found 5 songs for 'nina' (hasMore: true)"])
    let syntax = try await page(#"{ "term": "\"OR NEAR(" }"#, in: folder, kind: "music.search")
    #expect(syntax.outcome == .succeeded)
  }

  @Test func aPageReadOnADamagedStoreRecordsItAndTheNextLaunchRecovers() async throws {
    let folder = try await library(songs: 2000)
    let url = folder.file("music.sqlite")
    // Every page but the first, which holds the schema: opening the store reads no table, so
    // the damage shows when the page is read.
    let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
    let handle = try FileHandle(forWritingTo: url)
    for page in 1..<(size / 4096) {
      try handle.seek(toOffset: UInt64(page * 4096))
      try handle.write(contentsOf: Data(repeating: 0xFF, count: 16))
    }
    try handle.close()

    let damaged = try await page(#"{ "limit": 50 }"#, in: folder)
    #expect(damaged.step("store")?.state == .succeeded)
    #expect(
      damaged.step("page")?.error
        == "the store '\(url.path)' is damaged (database disk image is malformed); the next launch moves it aside and creates a new one"
    )
    #expect(FileManager.default.fileExists(atPath: url.path + ".damaged"))

    let recovered = try await page(#"{ "limit": 50 }"#, in: folder)
    #expect(recovered.outcome == .succeeded)
    #expect(
      recovered.step("store")?.notes.first?.hasPrefix(
        "the store was damaged (recorded by an earlier launch: database disk image is malformed); moved it aside to music.sqlite.corrupt-"
      ) == true)
    #expect(
      recovered.step("page")?.notes == [
        "loaded 0 songs by mostPlayed from offset 0 (hasMore: false)"
      ])
  }

  @Test func failsClearlyOnABooksStore() async throws {
    let folder = try ScratchFolder()
    let report = try await launch(
      """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "books.sqlite" } },
        { "id": "page", "plugin": "music.page", "dependsOn": ["store"] }
      ] }
      """, in: folder, plugins: plugins
    ).report
    #expect(
      report.step("page")?.error
        == "'music.page' needs a music store, and its store holds a books library; give store.init \"schema\": \"music\""
    )
  }

  @Test func rejectsBadParametersWhenTheManifestLoads() {
    let manifest = """
      { "version": 1, "steps": [
        { "id": "store", "plugin": "store.init", "params": { "path": "m.sqlite", "schema": "music" } },
        { "id": "page", "plugin": "music.page", "dependsOn": ["store"], "params": { "limit": -5 } },
        { "id": "sorted", "plugin": "music.page", "dependsOn": ["store"], "params": { "sort": "mostplayed" } },
        { "id": "search", "plugin": "music.search", "dependsOn": ["store"], "params": { "term": "  " } },
        { "id": "empty", "plugin": "music.search", "dependsOn": ["store"], "params": { "term": "" } },
        { "id": "many", "plugin": "music.search", "dependsOn": ["store"], "params": { "term": "a", "limit": 501 } }
      ] }
      """
    #expect(
      loadProblems(manifest, plugins: plugins) == [
        "steps[1].params.limit: 'limit' must be from 1 to 1000, not -5.",
        "steps[2].params.sort: unknown sort 'mostplayed'. Did you mean 'mostPlayed'? Use one of: mostPlayed, recentlyPlayed, recentlyAdded, alphabetical.",
        "steps[3].params.term: 'term' needs at least one word.",
        "steps[4].params.term: 'term' cannot be empty.",
        "steps[5].params.limit: 'limit' must be from 1 to 500, not 501.",
      ])
  }

  @Test func acceptsACursorOnlyOfAPageSizeAndOffsetItsParametersAllow() async throws {
    let folder = try await library(songs: 3)
    let store = handle(folder)
    var registry = PluginRegistry()
    registry.register(MusicPageStep.self)
    let limit = registry.descriptor(for: "music.page")?.parameters.first { $0.name == "limit" }
    #expect(limit?.type == .integer(minimum: 1, maximum: 1000))
    func cursor(limit: Int, offset: Int = 0) -> PageCursor {
      PageCursor(order: "mostPlayed", key: .integer(100), id: 0, offset: offset, limit: limit)
    }
    #expect(try MusicPageStep.page(after: cursor(limit: 1000), in: store).items.count == 3)
    #expect(
      throws: StepFailure(
        "the cursor asks for pages of 1001 songs, and music.page pages hold from 1 to 1000; use a cursor from a music.page page"
      )
    ) { try MusicPageStep.page(after: cursor(limit: 1001), in: store) }
    #expect(
      throws: StepFailure(
        "the cursor asks for pages of 0 songs, and music.page pages hold from 1 to 1000; use a cursor from a music.page page"
      )
    ) { try MusicPageStep.page(after: cursor(limit: 0), in: store) }
    #expect(
      throws: StepFailure(
        "the cursor's offset is -1, and a listing has no songs before its first; use a cursor from a music.page page"
      )
    ) { try MusicPageStep.page(after: cursor(limit: 10, offset: -1), in: store) }
  }
}

extension MusicPageStep.Parameters {
  /// Parameters made in code, as a manifest would give them.
  fileprivate init(limit: Int, offset: Int = 0, sort: SongOrder = .mostPlayed) {
    self.init()
    self.limit = limit
    self.offset = offset
    self.sort = sort
  }
}
