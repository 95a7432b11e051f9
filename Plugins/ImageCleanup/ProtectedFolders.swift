import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The folders `images.cleanup` refuses to clean, known by identity (device and inode), so
/// no spelling of a path (`.`, `..`, a second mount, a hard-linked name) gets past them.
struct ProtectedFolders {
  /// Folders that are never cleaned, however they are reached; with the reason.
  private var reasons: [DirectoryHandle.Identity: String] = [:]

  /// Folders whose whole tree belongs to the system.
  private static let systemTrees = [
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
    "/sys", "/usr", "/System", "/private/etc",
  ]

  /// Folders that hold everyone's data: cleaning one of them would reach far beyond images.
  private static let sharedFolders = [
    "/Applications", "/Library", "/Users", "/Volumes", "/home", "/media", "/mnt", "/opt",
    "/private", "/private/tmp", "/private/var", "/root", "/run", "/srv", "/tmp", "/var",
  ]

  /// Protects `/`, the home folder, the system's folders, and the manifest's folder, the
  /// data folder and the store's folder with every folder that holds them.
  init(manifestDirectory: URL, dataDirectory: URL, store: URL?, home: String) {
    add("/", "it is the root folder")
    add(home, "it is the home folder")
    for folder in Self.systemTrees + Self.sharedFolders {
      add(folder, "it is the system folder '\(folder)'")
    }
    var held = [
      (manifestDirectory.path, "the manifest's folder"), (dataDirectory.path, "the data folder"),
    ]
    if let store {
      held.append((store.deletingLastPathComponent().path, "the folder of the store"))
    }
    for (path, what) in held {
      add(path, "it is \(what) '\(path)'")
    }
    for (path, what) in held {
      for ancestor in Self.ancestors(of: path) {
        add(ancestor, "it holds \(what) '\(path)'")
      }
    }
  }

  /// Why the folder open as `handle`, reached as `physicalPath`, must not be cleaned, or
  /// `nil` when it may be.
  func reason(for handle: DirectoryHandle, physicalPath: [String]) -> String? {
    let path = "/" + physicalPath.joined(separator: "/")
    if let tree = Self.systemTrees.first(where: { path.hasPrefix($0 + "/") }) {
      return "it is inside the system folder '\(tree)'"
    }
    guard let status = handle.ownStatus() else { return "its status cannot be read" }
    return reasons[status.identity]
  }

  /// The first reason given for a folder wins: the most specific ones come first.
  private mutating func add(_ path: String, _ reason: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return }
    let identity = DirectoryHandle.Identity(info)
    if reasons[identity] == nil { reasons[identity] = reason }
  }

  /// Every folder above `path`, found on the real path (links resolved), up to `/`.
  private static func ancestors(of path: String) -> [String] {
    var real = path
    if let resolved = realpath(path, nil) {
      real = String(cString: resolved)
      free(resolved)
    }
    var result: [String] = []
    var components = real.split(separator: "/").map(String.init)
    while !components.isEmpty {
      components.removeLast()
      result.append("/" + components.joined(separator: "/"))
    }
    return result
  }
}
