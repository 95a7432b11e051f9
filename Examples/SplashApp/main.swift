import Foundation
import LaunchOrchestrator
import LaunchPlugins
import Observation

/// An app's launch, the way its first screens see it: the manifest shipped with the app, the
/// data in a writable folder, the app's own `AppInfo`, and the session driving the splash.
///
/// `splash-app [MANIFEST] [--data-dir DIR]` prints each screen change with its time, then the
/// first page of songs taken from the `firstPage` step's output. The SwiftUI view an app would
/// bind to the same session is in SplashView.swift.
@MainActor
func launchApp(manifest: URL, dataDirectory: URL) async -> Int32 {
  var registry = PluginRegistry.builtIn
  registry.register(kind: "app.analytics", summary: "The app's own step.") { _ in }
  let plan: LaunchPlan
  do {
    try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
    plan = try ManifestLoader(registry: registry).load(url: manifest, dataDirectory: dataDirectory)
  } catch {
    print("cannot load the launch: \(error)")
    return 65
  }

  var environment = LaunchEnvironment()
  environment[AppInfo.self] = AppInfo(version: "2.3.0", build: "41")

  let session = LaunchSession()
  let printer = ScreenPrinter(session: session)
  printer.observe()
  let report = await session.run(plan, on: LaunchEngine(), environment: environment)
  printer.flush()

  print("outcome: \(report.outcome.rawValue)")
  guard let page = session.output(of: "firstPage", as: MusicPage.self) else {
    print("no first page")
    return 1
  }
  print("first page: \(page.items.count) songs\(page.hasMore ? ", more to load" : "")")
  for song in page.items.prefix(5) {
    print("  \(song.title) - \(song.artist) (\(song.playCount) plays)")
  }
  return report.outcome == .failed ? 1 : 0
}

/// Prints the session's screen each time it changes, with the time since the launch began.
@MainActor
final class ScreenPrinter {
  private let session: LaunchSession
  private let start = ContinuousClock.now
  private var printed: LaunchScreen?

  init(session: LaunchSession) {
    self.session = session
  }

  /// Prints the current screen and prints again at its next change.
  func observe() {
    flush()
    withObservationTracking {
      _ = session.screen
    } onChange: {
      // Called before the change lands; print once the session has moved on.
      Task { @MainActor in self.observe() }
    }
  }

  /// Prints the screen if it changed since the last line.
  func flush() {
    let screen = session.screen
    guard screen != printed else { return }
    printed = screen
    let elapsed = (ContinuousClock.now - start).components
    let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    print("screen: \(Self.name(of: screen)) at \(milliseconds) ms")
  }

  private static func name(of screen: LaunchScreen) -> String {
    switch screen {
    case .splash: "splash"
    case .skeleton: "skeleton"
    case .content: "content"
    case .routed(let route): "routed(\(route.name))"
    case .failed(let failure): "failed(\(failure.message))"
    case .cancelled: "cancelled"
    }
  }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var dataDirectory: URL?
if let flag = arguments.firstIndex(of: "--data-dir"), flag + 1 < arguments.count {
  dataDirectory = URL(fileURLWithPath: arguments[flag + 1])
  arguments.removeSubrange(flag...(flag + 1))
}
// Without an argument, the repository's music launch, wherever `swift run` is called from.
let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .appendingPathComponent("../../manifests/music.json").standardizedFileURL
let manifest = arguments.first.map { URL(fileURLWithPath: $0) } ?? shipped
// In an app: Bundle.main.url(forResource:) for the manifest, and Application Support for data.
let data =
  dataDirectory
  ?? FileManager.default.temporaryDirectory.appendingPathComponent("splash-app-data")
exit(await launchApp(manifest: manifest, dataDirectory: data))
