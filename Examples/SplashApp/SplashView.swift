#if canImport(SwiftUI)
  import LaunchOrchestrator
  import LaunchPlugins
  import SwiftUI

  /// The same launch in a SwiftUI app: the splash, the skeleton and the first screen follow
  /// the session's `screen`, and the first page comes from the `firstPage` step's output.
  struct LaunchRootView: View {
    @State private var launch = LaunchSession()
    let plan: LaunchPlan
    let environment: LaunchEnvironment

    var body: some View {
      Group {
        switch launch.screen {
        case .splash:
          ProgressView(value: launch.progress) { Text("Loading your library") }
        case .skeleton:
          List(0..<8, id: \.self) { _ in
            Text("Song title placeholder").redacted(reason: .placeholder)
          }
        case .content:
          List(launch.output(of: "firstPage", as: MusicPage.self)?.items ?? [], id: \.id) { song in
            VStack(alignment: .leading) {
              Text(song.title)
              Text(song.artist).font(.caption)
            }
          }
        case .routed(let route):
          Text("Route: \(route.name)")
        case .failed(let failure):
          Text(failure.userMessage)
        }
      }
      .task { await launch.run(plan, on: LaunchEngine(), environment: environment) }
    }
  }
#endif
