import Foundation

/// Where a manifest file is: its absolute path with `.` and `..` taken out, and its folder.
///
/// Worked out on the path's text, as `URL(fileURLWithPath:).standardizedFileURL` and
/// `deletingLastPathComponent()` would, with one `URL` made for the folder. Foundation's
/// first relative file URL in a process costs some 300 µs (its tables are built cold, then
/// the path is resolved against the current folder), more than reading a small manifest
/// does; a launch pays it before its first step.
struct ManifestLocation {
  /// The file's absolute path, without `.`, `..` or empty components.
  let path: String
  /// The folder the file is in, a directory URL.
  let directory: URL

  /// The location of `path`, relative to the current folder unless it starts with `/`.
  init(path: String) {
    var components = PathComponents()
    if path.hasPrefix("/") {
      // Foundation drops the empty components of an absolute path (`/a//b`) as it makes the
      // URL, before `..` is resolved.
      components.add(path, emptyComponentsCount: false)
    } else if !path.hasPrefix("~"), let folder = Self.currentFolder() {
      // A relative path is resolved against the folder as RFC 3986 says: an empty component
      // is one for `..` to remove.
      components.add(folder, emptyComponentsCount: false)
      components.add(path, emptyComponentsCount: true)
    } else {
      // A home folder (`~`, `~user`) is Foundation's to find.
      self.init(standardized: URL(fileURLWithPath: path).standardizedFileURL)
      return
    }
    self.init(components)
  }

  /// The location `url` names: a file URL's path, taken as an absolute path is.
  init(url: URL) {
    // A URL relative to another keeps its base in Foundation's folder URL; one without is
    // the same URL whether made from its path or by Foundation.
    guard url.isFileURL, url.baseURL == nil, case let path = url.path, path.hasPrefix("/") else {
      self.init(standardized: url.standardizedFileURL)
      return
    }
    var components = PathComponents()
    components.add(path, emptyComponentsCount: false)
    self.init(components)
  }

  private init(standardized: URL) {
    path = standardized.path
    directory = standardized.deletingLastPathComponent()
  }

  private init(_ components: PathComponents) {
    let (path, folder) = components.paths()
    self.path = path
    directory = URL(fileURLWithPath: folder, isDirectory: true)
  }

  private static func currentFolder() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    return buffer.withUnsafeMutableBufferPointer { buffer in
      getcwd(buffer.baseAddress, buffer.count).map { String(cString: $0) }
    }
  }
}

/// The components of a path as `.` and `..` leave them, worked out on the bytes: `split` and
/// `joined` are generic code run unspecialized, which looks up conformances at run time (each
/// a search through every conformance the process has loaded, the first time), on a launch's
/// cold path. Components are kept as bytes, not `Substring`s or `Range`s, for the same reason.
private struct PathComponents {
  private var components: [[UInt8]] = []

  /// Adds the components of `path`; `emptyComponentsCount` keeps the empty ones (`a//b`) for
  /// a `..` to remove, as RFC 3986 does.
  mutating func add(_ path: String, emptyComponentsCount: Bool) {
    let bytes = Array(path.utf8)
    let slash = UInt8(ascii: "/")
    let dot = UInt8(ascii: ".")
    // A leading slash is the root's, not the end of an empty component.
    var start = bytes.first == slash ? 1 : 0
    while start <= bytes.count {
      var end = start
      while end < bytes.count, bytes[end] != slash { end += 1 }
      switch end - start {
      case 0: if emptyComponentsCount { components.append([]) }
      case 1 where bytes[start] == dot: break
      // Above the root is the root, as for Foundation.
      case 2 where bytes[start] == dot && bytes[start + 1] == dot:
        if !components.isEmpty { components.removeLast() }
      default: components.append(Array(bytes[start..<end]))
      }
      start = end + 1
    }
  }

  /// The absolute path, and that of its folder, without empty components.
  func paths() -> (path: String, folder: String) {
    let slash = UInt8(ascii: "/")
    var joined: [UInt8] = []
    var folderLength = 0
    for component in components where !component.isEmpty {
      folderLength = joined.count
      joined.append(slash)
      joined.append(contentsOf: component)
    }
    let folder = joined.prefix(folderLength)
    return (
      joined.isEmpty ? "/" : String(decoding: joined, as: UTF8.self),
      folder.isEmpty ? "/" : String(decoding: folder, as: UTF8.self)
    )
  }
}
