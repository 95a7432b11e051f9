import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Turns a scan's `image_path`, however it is spelled, into the paths inside the images
/// folder that it names: `x.jpg`, `./x.jpg`, `sub/../x.jpg`, `images/x.jpg` (relative to the
/// data folder) and `/data/images/x.jpg` all name the folder's `x.jpg`.
///
/// A relative reference is read against the images folder and against the data folder, and
/// every file either reading names counts: keeping an image for a reference read one way too
/// many is safe, deleting one a scan still names is not.
struct ImageReferences {
  /// The images folder's absolute paths: as spelled, and as the file system resolves it.
  private let folders: [[String]]
  /// The folders a relative reference is read against.
  private let bases: [[String]]

  /// References into the images folder at `folder` (absolute, as spelled) whose path without
  /// links is `physicalPath`, in the launch's `dataDirectory`.
  init(folder: String, physicalPath: [String], dataDirectory: URL) {
    let spelled = Self.components(folder)
    var folders = [spelled, physicalPath]
    if let real = Self.realPath(folder) { folders.append(Self.components(real)) }
    var bases = folders
    bases.append(Self.components(dataDirectory.path))
    if let real = Self.realPath(dataDirectory.path) { bases.append(Self.components(real)) }
    self.folders = Self.unique(folders)
    self.bases = Self.unique(bases)
  }

  /// The absolute paths `reference` is read as: itself when absolute, else against each
  /// folder a relative reference is read against. The file system looks them up as it
  /// compares names (by their bytes on Linux, whatever their Unicode form on Apple's).
  func spellings(of reference: String) -> [String] {
    guard !reference.isEmpty else { return [] }
    if reference.hasPrefix("/") { return [reference] }
    return bases.map { "/" + $0.joined(separator: "/") + "/" + reference }
  }

  /// The paths inside the folder (`sub/x.jpg`) that `reference` may name; empty for one that
  /// names nothing inside it.
  func paths(for reference: String) -> Set<String> {
    guard !reference.isEmpty else { return [] }
    var absolutes: [[String]] =
      reference.hasPrefix("/")
      ? [Self.components(reference)]
      : bases.map { Self.components($0.joined(separator: "/") + "/" + reference, from: []) }
    // An absolute spelling through a link (`/var` for `/private/var`) names what it resolves to.
    for absolute in absolutes where absolute.count > 1 {
      if let real = Self.realPath("/" + absolute.dropLast().joined(separator: "/")) {
        absolutes.append(Self.components(real) + [absolute[absolute.count - 1]])
      }
    }
    var result: Set<String> = []
    for absolute in absolutes {
      for folder in folders
      where absolute.count > folder.count && absolute.starts(with: folder) {
        result.insert(absolute.dropFirst(folder.count).joined(separator: "/"))
      }
    }
    return result
  }

  /// Every path inside the folder that reading `path` (inside it, as ``paths(for:)`` gives)
  /// passes through or lands on: `path` itself, each symbolic link on the way (`sub` of
  /// `sub/x.jpg`, when `sub` is a link) and what the links lead to inside the folder
  /// (`real/x.jpg`). The app opening the scan's image follows those links, so all of them are
  /// the image. Links are only read, through the open `folder`, never followed: one that leads
  /// out of the folder, or a chain longer than the kernel follows, ends the walk.
  func reached(from path: String, in folder: DirectoryHandle, links: Int = 0) -> Set<String> {
    var result: Set<String> = [path]
    var pending = path.split(separator: "/").map(String.init)[...]
    var resolved: [String] = []
    while let part = pending.popFirst() {
      switch part {
      case ".": continue
      case "..":
        // Out of the folder: nothing there is the cleanup's.
        guard !resolved.isEmpty else { return result }
        resolved.removeLast()
        continue
      default: resolved.append(part)
      }
      let relative = resolved.joined(separator: "/")
      let name = Array(relative.utf8CString)
      guard let status = folder.status(of: name) else { return result }
      guard status.kind == .symbolicLink else { continue }
      result.insert(relative)
      guard links < Self.maximumLinks, let target = folder.linkText(name), !target.isEmpty else {
        return result
      }
      let rest = pending.joined(separator: "/")
      // An absolute target is inside the folder only when it starts with one of its spellings.
      let targets =
        target.hasPrefix("/")
        ? paths(for: target)
        : [(resolved.dropLast() + [target]).joined(separator: "/")]
      for next in targets {
        result.formUnion(
          reached(from: rest.isEmpty ? next : next + "/" + rest, in: folder, links: links + 1))
      }
      return result
    }
    result.insert(resolved.joined(separator: "/"))
    return result
  }

  /// The most links followed in a row before a path counts as a loop, as the kernel does.
  private static let maximumLinks = 32

  /// The components of an absolute path without `.`, `..` and empty ones, read lexically.
  private static func components(_ path: String, from start: [String] = []) -> [String] {
    var result = start
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
      switch part {
      case ".": continue
      case "..": if !result.isEmpty { result.removeLast() }
      default: result.append(String(part))
      }
    }
    return result
  }

  private static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  private static func unique(_ lists: [[String]]) -> [[String]] {
    var seen: Set<[String]> = []
    return lists.filter { seen.insert($0).inserted }
  }
}
