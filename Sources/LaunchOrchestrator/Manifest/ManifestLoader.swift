import Foundation
import LaunchJSON

/// Reads manifest files and validates them into plans, reporting every problem at once.
public struct ManifestLoader: Sendable {
  /// The step kinds manifests may use.
  package var registry: PluginRegistry
  /// Whether each step's plugin also reads and checks every file shipped with the manifest
  /// that it reads only when a launch needs it (``StepPlugin/checkShippedFiles()``): every
  /// migration of a `store.init` folder, not only their names. `orchestrate validate` and an
  /// app's tests ask for it; a launch does not, to read only what it uses.
  package let checksShippedFiles: Bool
  /// Whether a folder a step removes files in (`images.cleanup`'s `directory`) is refused
  /// when it holds another step's path or the launch's own files, and a file a step rewrites
  /// or moves aside (`queue.validate`'s `path`) when another step's path or the manifest is
  /// that file, in it, or holds it. Cheap, but it describes every kind's parameters, which a
  /// launch does not need: with `checksShippedFiles`, and in every `orchestrate` command that
  /// reads a manifest.
  package var checksSharedPaths: Bool

  /// The largest manifest read: a 100,000-step manifest is some 10 MB.
  private static let maximumSize = 1 << 30

  /// Creates a loader for the kinds in `registry`; with `checksShippedFiles`, it also reads and
  /// checks every file the steps read only when a launch needs them, and refuses a folder a
  /// step removes files in that holds another step's path, and a file a step rewrites that is
  /// the manifest or another step's, as `orchestrate validate` does:
  ///
  /// ```swift
  /// @Test func theLaunchManifestIsValid() throws {
  ///   let loader = ManifestLoader(registry: .app, checksShippedFiles: true)
  ///   _ = try loader.load(url: manifestURL, dataDirectory: FileManager.default.temporaryDirectory)
  /// }
  /// ```
  public init(registry: PluginRegistry, checksShippedFiles: Bool = false) {
    self.registry = registry
    self.checksShippedFiles = checksShippedFiles
    checksSharedPaths = checksShippedFiles
  }

  /// Loads the manifest at `path` (as the user wrote it; relative to the current directory).
  ///
  /// Relative data paths in params resolve against `dataDirectory`, or the manifest's own
  /// folder when it is `nil` (what the CLI does unless given `--data-dir`).
  /// - Throws: ``ManifestError`` with code `.unreadable` when the file cannot be read, or
  ///   `.invalid` with every problem found.
  package func load(path: String, dataDirectory: URL? = nil) throws(ManifestError) -> LaunchPlan {
    try load(location: ManifestLocation(path: path), dataDirectory: dataDirectory, name: path)
  }

  /// Loads the manifest at `url`, such as one shipped in an app's bundle, with its data in
  /// `dataDirectory` (a writable folder such as Application Support, which must exist: an app
  /// creates it on its first launch).
  ///
  /// ```swift
  /// let manifest = Bundle.main.url(forResource: "launch", withExtension: "json")!
  /// let data = URL.applicationSupportDirectory.appending(path: "Launch")
  /// try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
  /// let plan = try ManifestLoader(registry: .builtIn).load(url: manifest, dataDirectory: data)
  /// ```
  /// - Throws: ``ManifestError`` with code `.unreadable` when the file cannot be read, or
  ///   `.invalid` with every problem found.
  public func load(url: URL, dataDirectory: URL) throws(ManifestError) -> LaunchPlan {
    try load(location: ManifestLocation(url: url), dataDirectory: dataDirectory, name: url.path)
  }

  private func load(location: ManifestLocation, dataDirectory: URL?, name path: String)
    throws(ManifestError) -> LaunchPlan
  {
    func unreadable(_ reason: String) -> ManifestError {
      ManifestError(
        code: .unreadable,
        diagnostics: [
          ManifestDiagnostic(file: path, path: .root, message: "the manifest '\(path)' \(reason).")
        ])
    }
    let contents: [UInt8]?
    do {
      // One regular file, a link followed to it: a FIFO would hold the load forever.
      contents = try SafeFiles.bytesOfRegularFile(
        followingLinksAt: location.path, limit: Self.maximumSize)
    } catch {
      switch error.reason {
      case .notRegular(let what): throw unreadable("is \(what), not a manifest file")
      case .tooLarge(let limit): throw unreadable("is over the \(limit)-byte limit")
      case .unreadable(let why):
        throw unreadable("cannot be read (\(why.prefix(1).lowercased() + why.dropFirst()))")
      }
    }
    guard let bytes = contents else { throw unreadable("does not exist") }
    if let dataDirectory {
      var isFolder: ObjCBool = false
      let exists = FileManager.default.fileExists(
        atPath: dataDirectory.path, isDirectory: &isFolder)
      // Data written somewhere the app did not mean would be lost to it: say so at load.
      guard exists, isFolder.boolValue else {
        throw ManifestError(
          code: .unreadable,
          diagnostics: [
            ManifestDiagnostic(
              file: path, path: .root,
              message:
                "the data folder '\(dataDirectory.path)' \(exists ? "is a file, not a folder" : "does not exist"); create the folder before loading the manifest."
            )
          ])
      }
    }
    // The manifest's folder is standardized already: Foundation's `standardizedFileURL`, cold,
    // is a good part of a small manifest's load.
    return try load(
      bytes: bytes, file: path, directory: location.directory,
      standardizedDataDirectory: dataDirectory?.standardizedFileURL ?? location.directory)
  }

  /// Loads a manifest from its bytes; `file` names it in diagnostics, `directory` anchors
  /// files shipped with it and `dataDirectory` (default: `directory`) relative data paths.
  public func load(
    bytes: [UInt8], file: String, directory: URL, dataDirectory: URL? = nil
  ) throws(ManifestError) -> LaunchPlan {
    try load(
      bytes: bytes, file: file, directory: directory,
      standardizedDataDirectory: (dataDirectory ?? directory).standardizedFileURL)
  }

  private func load(
    bytes: [UInt8], file: String, directory: URL, standardizedDataDirectory dataDirectory: URL
  ) throws(ManifestError) -> LaunchPlan {
    // Without its byte-order mark, columns on the first line count as editors show them.
    let bytes =
      bytes.starts(with: JSONParser.byteOrderMark)
      ? Array(bytes.dropFirst(JSONParser.byteOrderMark.count)) : bytes
    // A tape, not a tree of values: the reader takes what it needs from it, and a tree of a
    // large manifest cost more to make and to free than the rest of reading it.
    let tape: JSONTape
    do {
      tape = try JSONTape.parse(bytes)
    } catch {
      throw ManifestError(
        code: .invalid,
        diagnostics: [
          ManifestDiagnostic(
            file: file, path: .root, position: SourceText(bytes: bytes).position(of: error.offset),
            message: "invalid JSON: \(error.message).")
        ])
    }
    var diagnostics = DiagnosticCollector(file: file, tape: tape)
    for duplicate in tape.duplicateKeys {
      diagnostics.report(
        "the key '\(duplicate.key)' appears twice in this object; keep one.",
        at: duplicate.path.appending(duplicate.key), offset: duplicate.offset)
    }
    var reader = ManifestReader(
      diagnostics: diagnostics,
      fallbackName: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent)
    guard let manifest = reader.read() else {
      throw ManifestError(code: .invalid, diagnostics: reader.diagnostics.sorted)
    }
    var builder = PlanBuilder(
      manifest: manifest, registry: registry, manifestPath: file, manifestDirectory: directory,
      dataDirectory: dataDirectory, checksShippedFiles: checksShippedFiles,
      checksSharedPaths: checksSharedPaths,
      diagnostics: reader.diagnostics, sourceIndex: reader.stepSourceIndices,
      unreadStepIDs: reader.unreadStepIDs)
    let plan = builder.build()
    guard let plan, !builder.diagnostics.hasErrors else {
      throw ManifestError(code: .invalid, diagnostics: builder.diagnostics.sorted)
    }
    return plan
  }
}
