import Foundation
import LaunchJSON

extension PlanBuilder {
  /// Reports the paths steps share where one would destroy what another keeps: folders a
  /// step removes files in, and files a step rewrites or moves aside.
  mutating func checkSharedPaths() {
    // A fallback's path it inherits is its step's, checked and listed once.
    let parameters = manifest.pathParameters(registry: registry).filter { !$0.isInherited }
    checkRemovedFolders(parameters)
    checkRewrittenFiles(parameters)
  }

  /// The keys `parameter`'s path may be under: resolved against the data folder, and for a
  /// kind whose parameters read the manifest's folder, against that folder too.
  private func keys(of parameter: PathParameter) -> [PathKey] {
    urls(of: parameter).map { PathKey($0.path) }
  }

  /// The files `parameter`'s path may be, one for each of its keys (``keys(of:)``).
  private func urls(of parameter: PathParameter) -> [URL] {
    let bases = parameter.mayBeShipped ? [dataDirectory, manifestDirectory] : [dataDirectory]
    var urls: [URL] = []
    for base in bases {
      let url = StepContext.resolve(parameter.written, against: base)
      if !urls.contains(where: { PathKey($0.path) == PathKey(url.path) }) { urls.append(url) }
    }
    return urls
  }

  /// Reports each folder a step removes files in (a parameter declared `removesFiles`) that
  /// holds, or is, a path another step or parameter is given, or the launch's own records and
  /// cache: `images.cleanup` given the folder of `store.init`'s migrations would delete them.
  ///
  /// Paths are compared resolved, with `.` and `..` taken out, as the file system compares
  /// names (``PathKey``); a relative path resolves against the data folder, and for a kind
  /// whose parameters read the manifest's folder, against that folder too (a file shipped
  /// with the manifest). The plugin itself refuses what only a link or a second name reaches
  /// (the data folder, a store). Each folder is looked up among the sorted paths, not compared
  /// with each: a manifest of thousands of steps may give each one.
  private mutating func checkRemovedFolders(_ parameters: [PathParameter]) {
    guard parameters.contains(where: \.removesFiles) else { return }
    // In manifest order, the launch's own files last: the order they are named in.
    var kept: [(key: PathKey, what: String, order: Int)] = []
    // Another folder files are removed in is no file kept.
    for parameter in parameters where !parameter.removesFiles {
      for key in keys(of: parameter) {
        kept.append(
          (key, "'\(parameter.written)' (the \(parameter.owner(in: manifest)))", kept.count))
      }
    }
    let record = LaunchRecordFile(dataDirectory: dataDirectory, manifestName: manifest.name)
    let cache = OutputCache(dataDirectory: dataDirectory, manifestName: manifest.name)
    kept.append((PathKey(cache.folder.path), "the launch's cache", kept.count))
    kept.append((PathKey(record.folder.path), "the launch records", kept.count))
    kept.sort { $0.key < $1.key }
    for folder in parameters where folder.removesFiles {
      let root = PathKey(StepContext.resolve(folder.written, against: dataDirectory).path)
      // Every key that starts with the folder's, of which those inside it or equal to it.
      var held: [(what: String, order: Int)] = []
      var (index, end) = (0, kept.count)
      while index < end {
        let middle = (index + end) / 2
        if kept[middle].key < root { index = middle + 1 } else { end = middle }
      }
      while index < kept.count, kept[index].key.starts(with: root) {
        if kept[index].key.isInside(root) { held.append((kept[index].what, kept[index].order)) }
        index += 1
      }
      guard !held.isEmpty else { continue }
      let named = held.sorted { $0.order < $1.order }.map(\.what)
      var location = stepPath(folder.step)
      if folder.isFallback { location = location.appending("fallback") }
      diagnostics.report(
        "\(folder.kind) removes files in '\(folder.written)', where the launch keeps \(Self.list(named)); give it a folder that holds only what it may remove.",
        at: location.appending("params").appending(folder.name))
    }
  }

  /// Reports each file a step rewrites, or moves aside when it cannot read it (a parameter
  /// declared `rewritesFile`), that is the manifest itself, another step's path or a file
  /// kept beside one (its `companions`: a store's `-wal`; the lock of a file a step
  /// rewrites), a folder holding a path, a file in a folder another step is given (its
  /// migrations), or in the launch's own records or cache: `queue.validate` moves aside
  /// whatever it cannot read as a queue, whoever's file it is. The files a step declares it
  /// keeps beside the one it rewrites are rewritten too, and checked the same way. Steps given
  /// one path in the same role (two `queue.validate` steps of one queue) share it, and what
  /// is kept beside it. Each file is looked up among the sorted paths, and its folders by key,
  /// not compared with each path.
  private mutating func checkRewrittenFiles(_ parameters: [PathParameter]) {
    guard parameters.contains(where: \.rewritesFile) else { return }
    // Every path given, and every file kept beside one, as the parameter's in that role.
    var given: [(key: PathKey, file: KeptFile)] = []
    var folders: [PathKey: [KeptFile]] = [:]
    for index in parameters.indices {
      for url in urls(of: parameters[index]) {
        for (key, companion) in Self.files(at: url, of: parameters[index]) {
          let file = KeptFile(parameter: index, companion: companion)
          given.append((key, file))
          folders[key, default: []].append(file)
        }
      }
    }
    given.sort { $0.key < $1.key }
    let manifestFile = PathKey(URL(fileURLWithPath: manifestPath).standardizedFileURL.path)
    let cache = OutputCache(dataDirectory: dataDirectory, manifestName: manifest.name).folder
    let records = LaunchRecordFile(dataDirectory: dataDirectory, manifestName: manifest.name)
    let launchFolders = [
      (PathKey(cache.path), "the launch's cache"),
      (PathKey(records.folder.path), "the launch records"),
    ]
    for (index, file) in parameters.enumerated() where file.rewritesFile {
      let url = StepContext.resolve(file.written, against: dataDirectory)
      // Steps in the same role share a file; each other parameter is named once.
      var named: Set<Int> = [index]
      func name(_ other: KeptFile, as role: Companion?) -> String? {
        let parameter = parameters[other.parameter]
        guard parameter.kind != file.kind || parameter.name != file.name || other.companion != role,
          named.insert(other.parameter).inserted
        else { return nil }
        let owner = "'\(parameter.written)' (the \(parameter.owner(in: manifest)))"
        guard let companion = other.companion else { return owner }
        let path = "'\(parameter.written)', the \(parameter.owner(in: manifest))"
        let beside = companion.written(beside: parameter.written)
        return companion == .lock
          ? "'\(beside)' (the lock of \(path))" : "'\(beside)' (kept beside \(path))"
      }
      // The file itself, and what it keeps beside it, each with what it is besides.
      var targets: [(written: String, clashes: [String])] = []
      for companion in [nil] + file.companions.map(Companion.suffix) {
        let path = companion?.url(beside: url).path ?? url.path
        let key = PathKey(path)
        var clashes: [String] = []
        if key == manifestFile { clashes.append("the manifest itself") }
        // The file, or a folder holding paths: every key that starts with its own. A file
        // kept beside a path is in the path's folder, so a folder holding it holds the path.
        var (start, end) = (0, given.count)
        while start < end {
          let middle = (start + end) / 2
          if given[middle].key < key { start = middle + 1 } else { end = middle }
        }
        while start < given.count, given[start].key.starts(with: key) {
          let other = given[start]
          if other.key == key {
            if let words = name(other.file, as: companion) { clashes.append("also \(words)") }
          } else if other.key.isInside(key), other.file.companion == nil,
            let words = name(other.file, as: companion)
          {
            clashes.append("a folder holding \(words)")
          }
          start += 1
        }
        // What is kept beside the file is in its folders: they are checked once, for it.
        if companion == nil {
          for (folder, what) in launchFolders where key.isInside(folder) {
            clashes.append("in the folder of \(what)")
          }
          // A file in a folder another step is given: each folder on its path, by key (the
          // root, which holds every path, is no step's folder to name).
          var folder = ""
          for component in URL(fileURLWithPath: path).pathComponents.dropLast()
          where component != "/" {
            folder += "/" + component
            for other in folders[PathKey(folder)] ?? [] {
              if let words = name(other, as: nil) { clashes.append("in \(words)") }
            }
          }
        }
        let written = companion?.written(beside: file.written) ?? file.written
        if companion == nil || !clashes.isEmpty { targets.append((written, clashes)) }
      }
      guard targets.contains(where: { !$0.clashes.isEmpty }) else { continue }
      var location = stepPath(file.step)
      if file.isFallback { location = location.appending("fallback") }
      let message: String
      if targets.count == 1 {
        message =
          "\(file.kind) rewrites '\(file.written)', or moves it aside when it cannot read it, but it is \(Self.list(targets[0].clashes)); give it a file of its own."
      } else {
        // The file itself first, then what it keeps beside it.
        let parts = targets.enumerated().filter { !$0.element.clashes.isEmpty }.map {
          let subject = $0.offset == 0 ? "it" : "'\($0.element.written)'"
          return "\(subject) is \(Self.list($0.element.clashes))"
        }
        message =
          "\(file.kind) rewrites '\(file.written)' and the files it keeps beside it, or moves them aside when it cannot read it, but \(parts.joined(separator: ", and ")); give it a file of its own."
      }
      diagnostics.report(message, at: location.appending("params").appending(file.name))
    }
  }

  /// A path a parameter is given, or a file kept beside it.
  private struct KeptFile {
    /// The parameter's position among the path parameters.
    var parameter: Int
    /// What it is kept beside the path as; `nil` for the path itself.
    var companion: Companion?
  }

  /// A file kept beside a path, which the checks take for a path of the same step in the
  /// same role.
  private enum Companion: Equatable {
    /// `<name><suffix>`, which the plugin declares (``Parameter``'s `companions`).
    case suffix(String)
    /// `.<name>.lock`, which the app and the launch lock to write a file a step rewrites
    /// (``SharedFile``).
    case lock

    /// The file beside the one at `url`.
    func url(beside url: URL) -> URL {
      switch self {
      case .suffix(let suffix): URL(fileURLWithPath: url.path + suffix)
      case .lock: SharedFile(url: url).lockURL
      }
    }

    /// The file as written beside `path`, as the manifest writes it.
    func written(beside path: String) -> String {
      switch self {
      case .suffix(let suffix): return path + suffix
      case .lock:
        guard let slash = path.lastIndex(of: "/") else { return ".\(path).lock" }
        return "\(path[...slash]).\(path[path.index(after: slash)...]).lock"
      }
    }
  }

  /// The file at `url`, a path `parameter` is given, by key, and the files kept beside it:
  /// those its plugin declares, and the lock of a file it rewrites.
  private static func files(at url: URL, of parameter: PathParameter) -> [(PathKey, Companion?)] {
    var companions = parameter.companions.map(Companion.suffix)
    if parameter.rewritesFile { companions.append(.lock) }
    return [(PathKey(url.path), nil)]
      + companions.map { (PathKey($0.url(beside: url).path), $0) }
  }

  /// `a`, `a and b`, `a, b and c`; past five, the first five and how many more.
  private static func list(_ items: [String]) -> String {
    let shown = items.count > 5 ? Array(items.prefix(5)) + ["\(items.count - 5) more"] : items
    guard let last = shown.last, shown.count > 1 else { return shown.first ?? "" }
    return shown.dropLast().joined(separator: ", ") + " and " + last
  }
}

/// A path as the file system compares names: canonically composed, and on Apple's systems,
/// whose file systems ignore case by default (macOS), without case. Compared byte by byte, so
/// that the paths a folder holds sort together after it.
struct PathKey: Hashable, Comparable {
  private let bytes: [UInt8]

  init(_ path: String) {
    var folded = path.precomposedStringWithCanonicalMapping
    #if canImport(Darwin)
      folded = folded.lowercased()
    #endif
    bytes = Array(folded.utf8)
  }

  static func < (lhs: Self, rhs: Self) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }

  /// Whether this key starts with `prefix`'s bytes (a path inside it, or a name continuing
  /// its last one).
  func starts(with prefix: Self) -> Bool {
    bytes.starts(with: prefix.bytes)
  }

  /// Whether the path is `folder`, or inside it.
  func isInside(_ folder: Self) -> Bool {
    guard starts(with: folder) else { return false }
    if bytes.count == folder.bytes.count || folder.bytes.last == UInt8(ascii: "/") { return true }
    return bytes[folder.bytes.count] == UInt8(ascii: "/")
  }
}
