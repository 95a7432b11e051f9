// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "LaunchOrchestrator",
  // Task executors (blocking steps on threads of their own) need these releases.
  platforms: [.iOS(.v18), .macOS(.v15), .tvOS(.v18), .visionOS(.v2)],
  products: [
    .library(name: "LaunchOrchestrator", targets: ["LaunchOrchestrator"]),
    // For plugins that read the app's JSON files: strict parsing with byte offsets, repeated
    // keys and exact numbers, so a file can be judged and rewritten without loss.
    .library(name: "LaunchJSON", targets: ["LaunchJSON"]),
    // For an app's tests: a manual clock and helpers to run a plugin or a manifest.
    .library(name: "LaunchTesting", targets: ["LaunchTesting"]),
    // Every built-in kind an app may use; `simulate` only with its own product.
    .library(name: "LaunchPlugins", targets: ["LaunchPlugins"]),
    // Each family on its own, registered with one call (`registry.registerStore()`): an app
    // links what it uses.
    .library(name: "StoreInitPlugin", targets: ["StoreInitPlugin"]),
    .library(name: "SampleDataPlugin", targets: ["SampleDataPlugin"]),
    .library(name: "QueueValidationPlugin", targets: ["QueueValidationPlugin"]),
    .library(name: "ImageCleanupPlugin", targets: ["ImageCleanupPlugin"]),
    .library(name: "BooksLibraryPlugin", targets: ["BooksLibraryPlugin"]),
    .library(name: "MusicLibraryPlugin", targets: ["MusicLibraryPlugin"]),
    .library(name: "LaunchGatesPlugin", targets: ["LaunchGatesPlugin"]),
    .library(name: "ScreenSortPlugin", targets: ["ScreenSortPlugin"]),
    .library(name: "StateRestorePlugin", targets: ["StateRestorePlugin"]),
    .library(name: "SimulatePlugin", targets: ["SimulatePlugin"]),
    .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
    .library(name: "OrchestrateCLI", targets: ["OrchestrateCLI"]),
    .executable(name: "orchestrate", targets: ["orchestrate"]),
    .executable(name: "orchestrate-bench", targets: ["orchestrate-bench"]),
  ],
  targets: [
    .target(name: "LaunchJSON"),
    .target(name: "LaunchOrchestrator", dependencies: ["LaunchJSON"]),
    .target(name: "LaunchTesting", dependencies: ["LaunchOrchestrator"]),
    .target(name: "OrchestrateCLI", dependencies: ["LaunchOrchestrator", "LaunchJSON"]),
    .executableTarget(
      name: "orchestrate", dependencies: ["OrchestrateCLI", "LaunchPlugins", "SimulatePlugin"]),
    .executableTarget(
      name: "custom-orchestrate",
      dependencies: ["OrchestrateCLI", "LaunchPlugins", "SimulatePlugin", "LaunchOrchestrator"],
      path: "Examples/CustomOrchestrate",
      exclude: ["greet.json"]
    ),
    // Reports as a fleet would upload them, for trying `orchestrate stats` (docs/field.md).
    .executableTarget(
      name: "field-reports",
      dependencies: ["LaunchOrchestrator", "LaunchJSON"],
      path: "manifests/simulated/field-reports"
    ),
    .executableTarget(
      name: "splash-app",
      dependencies: ["LaunchOrchestrator", "LaunchPlugins"],
      path: "Examples/SplashApp"
    ),
    .systemLibrary(
      name: "CSQLite",
      path: "Plugins/CSQLite",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    .target(
      name: "SQLiteStore",
      dependencies: ["CSQLite", "LaunchOrchestrator"],
      path: "Plugins/SQLiteStore"
    ),
    .target(
      name: "StoreInitPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/StoreInit"
    ),
    .target(
      name: "SampleDataPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/SampleData"
    ),
    .target(
      name: "QueueValidationPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore", "LaunchJSON"],
      path: "Plugins/QueueValidation"
    ),
    .target(
      name: "ImageCleanupPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/ImageCleanup"
    ),
    .target(
      name: "MusicLibraryPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/MusicLibrary"
    ),
    .target(
      name: "ScreenSortPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/ScreenSort"
    ),
    .target(
      name: "BooksLibraryPlugin",
      dependencies: ["LaunchOrchestrator", "SQLiteStore"],
      path: "Plugins/BooksLibrary"
    ),
    .target(
      name: "LaunchGatesPlugin",
      dependencies: ["LaunchOrchestrator", "LaunchJSON"],
      path: "Plugins/LaunchGates"
    ),
    .target(
      name: "SimulatePlugin",
      dependencies: ["LaunchOrchestrator"],
      path: "Plugins/Simulate"
    ),
    .target(
      name: "StateRestorePlugin",
      dependencies: ["LaunchOrchestrator", "LaunchJSON"],
      path: "Plugins/StateRestore"
    ),
    .target(
      name: "LaunchPlugins",
      dependencies: [
        "LaunchOrchestrator", "StoreInitPlugin", "SampleDataPlugin", "QueueValidationPlugin",
        "ImageCleanupPlugin", "BooksLibraryPlugin", "MusicLibraryPlugin", "LaunchGatesPlugin",
        "ScreenSortPlugin", "StateRestorePlugin", "SQLiteStore",
      ],
      path: "Plugins/LaunchPlugins"
    ),
    .target(
      name: "ManifestFuzzing", dependencies: ["LaunchOrchestrator", "LaunchJSON"],
      path: "Benchmarks/ManifestFuzzing"),
    .executableTarget(
      name: "orchestrate-bench",
      dependencies: [
        "LaunchOrchestrator", "ManifestFuzzing", "SQLiteStore", "SimulatePlugin", "StoreInitPlugin",
        "MusicLibraryPlugin", "SampleDataPlugin", "LaunchPlugins", "LaunchJSON",
      ],
      path: "Benchmarks/OrchestrateBench"
    ),
    // A second process for the plugins' tests: the app writing a shared file, a launch
    // killed at a chosen point.
    .executableTarget(
      name: "orchestrate-test-helper",
      dependencies: [
        "LaunchOrchestrator", "SQLiteStore", "StoreInitPlugin", "QueueValidationPlugin",
        "StateRestorePlugin",
      ],
      path: "Tests/TestHelper"
    ),
    .testTarget(
      name: "LaunchOrchestratorTests",
      dependencies: ["LaunchOrchestrator", "LaunchTesting", "PluginTestSupport", "LaunchJSON"]),
    .testTarget(name: "LaunchTestingTests", dependencies: ["LaunchTesting", "LaunchOrchestrator"]),
    .testTarget(
      name: "ManifestFuzzingTests",
      dependencies: ["ManifestFuzzing", "LaunchOrchestrator", "SimulatePlugin"]),
    .target(
      name: "PluginTestSupport", dependencies: ["LaunchOrchestrator"],
      path: "Tests/PluginTestSupport"),
    .testTarget(
      name: "StoreInitTests",
      dependencies: ["StoreInitPlugin", "SQLiteStore", "LaunchOrchestrator", "PluginTestSupport"]
    ),
    .testTarget(
      name: "QueueValidationTests",
      dependencies: [
        "QueueValidationPlugin", "StoreInitPlugin", "SQLiteStore", "LaunchOrchestrator",
        "PluginTestSupport", "LaunchJSON",
      ]
    ),
    .testTarget(
      name: "ImageCleanupTests",
      dependencies: [
        "ImageCleanupPlugin", "StoreInitPlugin", "SQLiteStore", "LaunchOrchestrator",
        "PluginTestSupport",
      ]
    ),
    .testTarget(
      name: "MusicLibraryTests",
      dependencies: [
        "MusicLibraryPlugin", "StoreInitPlugin", "SQLiteStore", "LaunchOrchestrator",
        "PluginTestSupport",
      ]
    ),
    .testTarget(
      name: "BooksLibraryTests",
      dependencies: [
        "BooksLibraryPlugin", "SampleDataPlugin", "StoreInitPlugin", "LaunchOrchestrator",
        "PluginTestSupport",
      ]
    ),
    .testTarget(
      name: "LaunchGatesTests",
      dependencies: ["LaunchGatesPlugin", "LaunchOrchestrator", "PluginTestSupport"]
    ),
    .testTarget(
      name: "SampleDataTests",
      dependencies: [
        "SampleDataPlugin", "StoreInitPlugin", "SQLiteStore", "LaunchOrchestrator",
        "PluginTestSupport",
      ]
    ),
    .testTarget(
      name: "StateRestoreTests",
      dependencies: [
        "StateRestorePlugin", "LaunchOrchestrator", "PluginTestSupport", "StoreInitPlugin",
        "SQLiteStore",
      ]
    ),
    .testTarget(
      name: "SimulateTests",
      dependencies: ["SimulatePlugin", "LaunchOrchestrator"]
    ),
    .testTarget(
      name: "OrchestrateCLITests",
      dependencies: ["OrchestrateCLI", "LaunchOrchestrator", "SQLiteStore", "LaunchJSON"],
      exclude: ["Golden"]
    ),
  ],
  swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
  var settings = target.swiftSettings ?? []
  settings.append(.enableUpcomingFeature("ExistentialAny"))
  settings.append(.enableUpcomingFeature("MemberImportVisibility"))
  target.swiftSettings = settings
}
