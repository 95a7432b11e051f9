import Foundation

/// Where a manifest file is: its absolute path with `.` and `..` taken out, and its folder.
///
/// Worked out on the path's text where that gives what `URL(fileURLWithPath:)`,
/// `standardizedFileURL` and `deletingLastPathComponent()` give, with one `URL` made, for the
/// folder; Foundation's first relative file URL in a process costs some 300 µs (its tables
/// are built cold, then the path is resolved against the current folder), more than reading
/// a small manifest does, and a launch pays it before its first step. Foundation still works
/// out what the text alone cannot tell: a home folder (`~`), a `..` (for an existing path,
/// Foundation resolves symbolic links before it removes the `..`, so `link/../launch.json`
/// is the file beside the link's target, as the kernel reads it), a folder under `/private`
/// or `/var/automount` (which Foundation names without that prefix when the shorter path
/// exists), and a URL that is relative to another or not a file's.
struct ManifestLocation {
  /// The file's absolute path, without `.`, `..` or empty components.
  let path: String
  /// The folder the file is in, a directory URL.
  let directory: URL

  /// The location of `path`, relative to the current folder unless it starts with `/`.
  init(path: String) {
    var components = PathComponents()
    if path.hasPrefix("/"), Self.isPlain(path) {
      components.add(path)
    } else if !path.hasPrefix("/"), !path.hasPrefix("~"), let folder = Self.currentFolder(),
      Self.isPlain(folder), Self.isPlain(path)
    {
      components.add(folder)
      components.add(path)
    } else {
      self.init(standardized: URL(fileURLWithPath: path).standardizedFileURL)
      return
    }
    self.init(components)
  }

  /// The location `url` names: a file URL's path, taken as an absolute path is.
  init(url: URL) {
    // A URL relative to another keeps its base in Foundation's folder URL; one without is
    // the same URL whether made from its path or by Foundation.
    guard url.isFileURL, url.baseURL == nil, case let path = url.path, path.hasPrefix("/"),
      Self.isPlain(path)
    else {
      self.init(standardized: url.standardizedFileURL)
      return
    }
    var components = PathComponents()
    components.add(path)
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

  /// Whether the text of `path` (absolute, or relative to a folder that is) tells where it
  /// leads: it has no `..` component and does not start with a prefix Foundation drops.
  private static func isPlain(_ path: String) -> Bool {
    for prefix in ["/private", "/var/automount"]
    where path == prefix || path.hasPrefix(prefix + "/") {
      return false
    }
    var previous = UInt8(ascii: "/")
    var dots = 0
    for byte in path.utf8 {
      if byte == UInt8(ascii: "/") {
        if dots == 2 { return false }
        dots = 0
      } else if byte == UInt8(ascii: "."),
        previous == UInt8(ascii: ".") || previous == UInt8(ascii: "/")
      {
        dots += 1
      } else {
        dots = 3
      }
      previous = byte
    }
    return dots != 2
  }

  private static func currentFolder() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    return buffer.withUnsafeMutableBufferPointer { buffer in
      getcwd(buffer.baseAddress, buffer.count).map { String(cString: $0) }
    }
  }
}

/// The components of a path without `..`, as Foundation names them: empty ones (`a//b`) and
/// `.` left out. Worked out on the bytes: `split` and `joined` are generic code run
/// unspecialized, which looks up conformances at run time (each a search through every
/// conformance the process has loaded, the first time), on a launch's cold path; components
/// are kept as bytes, not `Substring`s, for the same reason.
private struct PathComponents {
  private var components: [[UInt8]] = []

  /// Adds the components of `path`, which has no `..` component.
  mutating func add(_ path: String) {
    let bytes = Array(path.utf8)
    let slash = UInt8(ascii: "/")
    var start = 0
    while start < bytes.count {
      var end = start
      while end < bytes.count, bytes[end] != slash { end += 1 }
      if end > start, !(end - start == 1 && bytes[start] == UInt8(ascii: ".")) {
        components.append(Array(bytes[start..<end]))
      }
      start = end + 1
    }
  }

  /// The absolute path, and that of its folder.
  func paths() -> (path: String, folder: String) {
    let slash = UInt8(ascii: "/")
    var joined: [UInt8] = []
    var folderLength = 0
    for component in components {
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
