import Foundation
import LaunchOrchestrator
import QueueValidationPlugin
import SQLiteStore
import StateRestorePlugin
import StoreInitPlugin

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A second process for tests: the app writing a file a launch shares with it, a launch
/// killed (SIGKILL) at a chosen point of a store recovery, or launches saving cache entries.
///
///     orchestrate-test-helper queue-append <queue> <first> <count> <workId>...
///     orchestrate-test-helper state-save <file> <key> <integer>
///     orchestrate-test-helper recover <manifest> <point>
///     orchestrate-test-helper pause-at <manifest> <point>
///     orchestrate-test-helper cancel-at <manifest> <point>
///     orchestrate-test-helper cache-launches <manifest> <count>
///     orchestrate-test-helper store-append <folder> <first> <count> <maxReports>
///     orchestrate-test-helper hold-lock <file> <seconds>
///     orchestrate-test-helper churn-lock <file> <microseconds>
///     orchestrate-test-helper hold-file <file> <seconds>
struct Entry: Encodable {
  var workId: Int64
  var n: Int
}

/// What a cached step of `cache-launches` hands on.
struct Snapshot: Codable, Sendable {
  var value: String
}

/// Outputs a ``Snapshot`` of its `value` at once: a step whose whole cost is its cache entry.
struct SnapshotStep: StepPlugin {
  static let kind = "helper.snapshot"
  struct Parameters: StepParameters {
    @Parameter("What the snapshot says.") var value: String
  }
  let parameters: Parameters
  func run(_ context: StepContext) async throws -> Snapshot { Snapshot(value: parameters.value) }
}

/// Runs the store.init manifest at `path`; prints the launch's outcome, then the store step's
/// error or whether the store was new to the launch.
func launchStore(_ path: String) async {
  var registry = PluginRegistry()
  registry.register(StoreInitStep.self)
  do {
    let plan = try ManifestLoader(registry: registry).load(path: path)
    let report = await LaunchEngine().run(plan)
    print(report.outcome)
    let step = report.steps.first { $0.id == "store" }
    if let error = step?.error {
      print("error: \(error)")
    } else if let store = report.output(of: "store", as: StoreHandle.self) {
      print("isNew: \(store.isNew)")
    }
  } catch {
    fail("\(error)")
  }
}

/// Runs `action` where a store's opening reaches `point` (``StoreFile/testHook``), on the
/// thread and in the task that reach it: a function, so that the hook is not isolated to the
/// main actor as the script's own closures are.
func stop(at point: String, _ action: @escaping @Sendable () -> Void) {
  StoreFile.testHook = { reached in
    if reached == point { action() }
  }
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("orchestrate-test-helper: \(message)\n".utf8))
  exit(2)
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.count) {
case ("queue-append", 5...):
  let values = Array(arguments.dropFirst())
  guard let first = Int(values[1]), let count = Int(values[2]) else { fail("bad numbers") }
  let workIds = values.dropFirst(3).compactMap { Int64($0) }
  let queue = QueueFile(url: URL(fileURLWithPath: values[0]))
  for n in first..<(first + count) {
    // Launches back to back take the queue's lock in turn with this writer, which takes its
    // turn too: an append that gave up on the lock fails the helper.
    do {
      try queue.append(workIds.map { Entry(workId: $0, n: n) })
    } catch {
      fail("\(error)")
    }
    FileHandle.standardOutput.write(Data("appended \(n)\n".utf8))
  }
case ("state-save", 4):
  let values = Array(arguments.dropFirst())
  guard let value = Int(values[2]) else { fail("bad number") }
  var state = RestoredState()
  do {
    try state.set(value, for: values[1])
    try LaunchStateFile(url: URL(fileURLWithPath: values[0])).save(state)
  } catch {
    fail("\(error)")
  }
case ("recover", 3):
  let values = Array(arguments.dropFirst())
  let point = values[1]
  stop(at: point) { kill(getpid(), SIGKILL) }
  await launchStore(values[0])
case ("pause-at", 3):
  // Stops the launch at the point: creates `<manifest>.reached`, and goes on once the test
  // has created `<manifest>.go`.
  let values = Array(arguments.dropFirst())
  let point = values[1]
  stop(at: point) {
    _ = FileManager.default.createFile(atPath: values[0] + ".reached", contents: nil)
    // Not past the test: it ends when its parent does, or after a minute.
    let parent = getppid()
    for _ in 0..<12_000 {
      guard getppid() == parent else { break }
      if FileManager.default.fileExists(atPath: values[0] + ".go") { return }
      usleep(5_000)
    }
    fail("nobody said go at '\(point)'")
  }
  await launchStore(values[0])
case ("cancel-at", 3):
  // Cancels the attempt at the point, as its timeout firing there would.
  let values = Array(arguments.dropFirst())
  let point = values[1]
  stop(at: point) { withUnsafeCurrentTask { $0?.cancel() } }
  await launchStore(values[0])
case ("hold-lock", 3):
  // Holds a shared file's write lock, as another process writing it would, until killed or
  // `seconds` have passed.
  let values = Array(arguments.dropFirst())
  guard let seconds = UInt32(values[1]) else { fail("bad seconds") }
  do {
    try SharedFile(url: URL(fileURLWithPath: values[0])).withWriteLock {
      FileHandle.standardOutput.write(Data("locked\n".utf8))
      sleep(seconds)
    }
  } catch {
    fail("\(error)")
  }
case ("churn-lock", 3):
  // Takes a shared file's write lock again the moment it lets go of it, holding it
  // `microseconds` each time, as an app writing the file in a loop does, until killed: the
  // lock is free for a few microseconds at a time. Says `locked` once it first holds it.
  let values = Array(arguments.dropFirst())
  guard let hold = UInt32(values[1]) else { fail("bad microseconds") }
  let lock = SharedFile(url: URL(fileURLWithPath: values[0])).lockURL
  let descriptor = open(lock.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
  guard descriptor >= 0 else {
    fail("cannot open '\(lock.path)': \(String(cString: strerror(errno)))")
  }
  var said = false
  while true {
    guard flock(descriptor, LOCK_EX) == 0 else {
      if errno == EINTR { continue }
      fail("cannot lock '\(lock.path)': \(String(cString: strerror(errno)))")
    }
    if !said {
      FileHandle.standardOutput.write(Data("locked\n".utf8))
      said = true
    }
    usleep(hold)
    flock(descriptor, LOCK_UN)
  }
case ("hold-file", 3):
  // Holds the file's own `flock`, as a write in flight holds its temporary file, until
  // killed or `seconds` have passed.
  let values = Array(arguments.dropFirst())
  guard let seconds = UInt32(values[1]) else { fail("bad seconds") }
  let descriptor = open(values[0], O_RDONLY | O_CLOEXEC)
  guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
    fail("cannot lock '\(values[0])': \(String(cString: strerror(errno)))")
  }
  FileHandle.standardOutput.write(Data("locked\n".utf8))
  sleep(seconds)
case ("cache-launches", 3):
  // Launches one after another, each saving an entry per cached step (the first by running
  // the steps, the others by refreshing them); prints a line per launch, and fails on the
  // first entry that was not saved.
  let values = Array(arguments.dropFirst())
  guard let count = Int(values[1]) else { fail("bad number") }
  var registry = PluginRegistry()
  registry.register(SnapshotStep.self)
  do {
    let plan = try ManifestLoader(registry: registry).load(path: values[0])
    for launch in 1...count {
      let report = await LaunchEngine().run(plan)
      let unsaved = report.steps.flatMap(\.notes).filter { $0.contains("not saved") }
      guard report.outcome == .succeeded, unsaved.isEmpty else {
        fail("launch \(launch): \(report.outcome): \(unsaved.joined(separator: "; "))")
      }
      FileHandle.standardOutput.write(Data("launched \(launch)\n".utf8))
    }
  } catch {
    fail("\(error)")
  }
case ("store-append", 5):
  // Reports `first..<first + count`, each labelled with its number as its arm, appended one
  // by one to a `LaunchReportStore`, as an app's launches would.
  let values = Array(arguments.dropFirst())
  guard let first = Int(values[1]), let count = Int(values[2]), let limit = Int(values[3]) else {
    fail("bad numbers")
  }
  let store = LaunchReportStore(folder: URL(fileURLWithPath: values[0]), maxReports: limit)
  for n in first..<(first + count) {
    var report = LaunchReport(
      manifest: "app.json", name: "App", outcome: .succeeded, route: nil,
      duration: .milliseconds(n), milestones: [], criticalPath: [], steps: [])
    report.labels = LaunchLabels(arm: String(n))
    do {
      try store.append(report)
    } catch {
      fail("\(error)")
    }
  }
default:
  fail("unknown command \(arguments.joined(separator: " "))")
}
