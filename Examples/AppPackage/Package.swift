// swift-tools-version: 6.0
import PackageDescription

// An app's own package depending on the orchestrator by path, the way an app team adopts it:
// `.ci/run` builds and runs it, and runs its tests, to prove the README's snippets compile and
// work outside the package (`swift run --package-path Examples/AppPackage AppLaunch`,
// `swift test --package-path Examples/AppPackage`).
let package = Package(
  name: "AppPackage",
  platforms: [.iOS(.v18), .macOS(.v15), .tvOS(.v18), .visionOS(.v2)],
  dependencies: [.package(name: "LaunchOrchestrator", path: "../..")],
  targets: [
    .executableTarget(
      name: "AppLaunch",
      dependencies: [
        .product(name: "LaunchOrchestrator", package: "LaunchOrchestrator"),
        .product(name: "LaunchPlugins", package: "LaunchOrchestrator"),
        .product(name: "SQLiteStore", package: "LaunchOrchestrator"),
        // Stand-in work for the demo's steps: an app asks for it by name.
        .product(name: "SimulatePlugin", package: "LaunchOrchestrator"),
      ],
      resources: [.copy("launch.json")]
    ),
    // An app that opens only its store links the store family alone, not `LaunchPlugins`.
    .executableTarget(
      name: "StoreOnlyLaunch",
      dependencies: [
        .product(name: "LaunchOrchestrator", package: "LaunchOrchestrator"),
        .product(name: "StoreInitPlugin", package: "LaunchOrchestrator"),
      ]
    ),
    // The app's own tests, with the test kit: a manual clock, typed failures and output keys.
    .testTarget(
      name: "AppLaunchTests",
      dependencies: [
        .product(name: "LaunchOrchestrator", package: "LaunchOrchestrator"),
        .product(name: "LaunchTesting", package: "LaunchOrchestrator"),
        .product(name: "SQLiteStore", package: "LaunchOrchestrator"),
        .product(name: "StoreInitPlugin", package: "LaunchOrchestrator"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
