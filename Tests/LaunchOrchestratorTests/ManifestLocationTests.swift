import Foundation
import Testing

@testable import LaunchOrchestrator

/// A manifest's location, worked out on its path's text, is what Foundation's
/// `standardizedFileURL` and `deletingLastPathComponent()` give: the same file path, the same
/// folder URL (which plans keep and plugins resolve their files against).
@Suite("Manifest location")
struct ManifestLocationTests {
  /// Foundation's answer for `path`.
  private func foundation(_ path: String) -> (path: String, directory: URL) {
    let standardized = URL(fileURLWithPath: path).standardizedFileURL
    return (standardized.path, standardized.deletingLastPathComponent())
  }

  private func expectSameAsFoundation(_ path: String) {
    let location = ManifestLocation(path: path)
    let expected = foundation(path)
    #expect(location.path == expected.path, "path of \(path.debugDescription)")
    #expect(location.directory == expected.directory, "folder of \(path.debugDescription)")
    #expect(
      location.directory.absoluteString == expected.directory.absoluteString,
      "folder of \(path.debugDescription)")
  }

  @Test(arguments: [
    "app.json", "./app.json", "manifests/app.json", "x/../app.json", "x//y/app.json",
    "/a//b/c.json", "/../a.json", "/a/./b/../../../c.json", "x/y/", "x/y/..", "x/..", "..",
    "../..", ".", "/", "/x", "a b/ü.json", "x/%41.json", "/a/b/.", "/a/b/./", "x/...",
    "/a/b/c/../../", "x/.hidden", "/tmp/../tmp/./a.json", "//a/b.json", "///a.json", "",
    "~/launch.json", "~", "a/~/b.json", "x/a?b#c.json", "emoji/😀.json", "/private",
    "/private/var/launch.json", "/var/automount/x.json", "/a:b;c/launch.json", "a..b/..c/x",
  ])
  func aPathIsLocatedAsFoundationLocatesIt(_ path: String) {
    expectSameAsFoundation(path)
  }

  @Test func generatedPathsAreLocatedAsFoundationLocatesThem() {
    let pieces = [
      "a", ".", "..", "", "b c", "é", "x.json", "%41", "...", "~", ".d", "a:b;c", "..d",
    ]
    // Seeded, so that a failure can be run again.
    var generator = SplitMix(seed: 24)
    for _ in 0..<2_000 {
      let count = Int.random(in: 0...6, using: &generator)
      let body = (0..<count).map { _ in pieces.randomElement(using: &generator)! }
        .joined(separator: "/")
      let path = Bool.random(using: &generator) ? "/" + body : body
      expectSameAsFoundation(path)
      // The URL an app passes, made from the same path.
      let url = URL(fileURLWithPath: path)
      let location = ManifestLocation(url: url)
      #expect(location.path == url.standardizedFileURL.path, "\(url)")
      #expect(
        location.directory == url.standardizedFileURL.deletingLastPathComponent(), "\(url)")
    }
  }

  @Test func aFileURLIsLocatedAsFoundationLocatesIt() {
    let base = URL(fileURLWithPath: "/srv/app/", isDirectory: true)
    let urls = [
      URL(fileURLWithPath: "/srv/app/../launch/./manifest.json"),
      URL(fileURLWithPath: "launch.json", relativeTo: base),
      URL(fileURLWithPath: "../up/launch.json", relativeTo: base),
      URL(string: "file:///srv/a%20b/launch.json")!,
      URL(string: "file:///srv//../a/./b/..//launch.json")!,
      URL(string: "file:///srv/app/")!,
      URL(string: "https://example.com/launch.json")!,
    ]
    for url in urls {
      let location = ManifestLocation(url: url)
      let standardized = url.standardizedFileURL
      #expect(location.path == standardized.path, "\(url)")
      #expect(location.directory == standardized.deletingLastPathComponent(), "\(url)")
    }
  }

  @Test func aPlanKeepsItsFoldersStandardizedWhicheverWayItWasLoaded() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "manifest-location-\(UUID().uuidString)")
    let data = folder.appendingPathComponent("data")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let manifest = folder.appendingPathComponent("launch.json")
    let text = #"{ "version": 1, "steps": [] }"#
    try Data(text.utf8).write(to: manifest)
    let loader = ManifestLoader(registry: PluginRegistry())
    let roundabout = URL(fileURLWithPath: data.path + "/../data/./", isDirectory: true)

    let byURL = try loader.load(url: manifest, dataDirectory: roundabout)
    #expect(byURL.dataDirectory == roundabout.standardizedFileURL)
    #expect(byURL.manifestDirectory == manifest.standardizedFileURL.deletingLastPathComponent())

    let byPath = try loader.load(path: folder.path + "/data/../launch.json")
    #expect(byPath.manifestDirectory == manifest.standardizedFileURL.deletingLastPathComponent())
    #expect(byPath.dataDirectory == byPath.manifestDirectory)

    let byBytes = try loader.load(
      bytes: Array(text.utf8), file: "launch.json", directory: roundabout)
    #expect(byBytes.manifestDirectory == roundabout)
    #expect(byBytes.dataDirectory == roundabout.standardizedFileURL)
  }

  /// Foundation resolves symbolic links before it removes a `..` from a path that exists, as
  /// the kernel does when it opens the path: `link/../launch.json` is the file beside the
  /// link's target, and so is the manifest's folder.
  @Test func aDotDotAfterASymbolicLinkLeadsWhereTheKernelGoes() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(
      "manifest-location-links-\(UUID().uuidString)")
    let shared = root.appendingPathComponent("shared")
    let work = root.appendingPathComponent("work")
    try FileManager.default.createDirectory(
      at: shared.appendingPathComponent("configs"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createSymbolicLink(
      at: work.appendingPathComponent("configs"),
      withDestinationURL: shared.appendingPathComponent("configs"))
    try Data("{}".utf8).write(to: shared.appendingPathComponent("launch.json"))
    let path = work.path + "/configs/../launch.json"
    let location = ManifestLocation(path: path)
    #expect(location.path == shared.path + "/launch.json")
    #expect(location.path == foundation(path).path)
    #expect(location.directory == foundation(path).directory)
    let byURL = ManifestLocation(url: URL(fileURLWithPath: path))
    #expect(byURL.path == shared.path + "/launch.json")
  }
}
