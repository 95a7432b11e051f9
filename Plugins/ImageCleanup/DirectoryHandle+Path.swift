#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

extension DirectoryHandle {
  /// Why a path could not be opened as a folder.
  enum PathFailure: Error {
    /// A component does not exist.
    case missing
    /// The component at this path is a symbolic link.
    case symbolicLink(String)
    /// The component at this path is not a folder.
    case notADirectory(String)
    /// The system refused to open the component at this path.
    case system(Int32, String)
  }

  /// How many of the system's own links (`/var`, `/tmp`) one path may pass through.
  private static let maximumSystemLinks = 8

  /// Opens the folder at the absolute `path` one component at a time from `/`, never
  /// following a symbolic link, and returns it with its path as walked (`..` taken into
  /// account).
  ///
  /// The one exception is a link directly in `/` owned by root, such as `/var` and `/tmp` on
  /// macOS and iOS: only the system can make one, and every app's data lies behind them.
  static func openFolder(atPath path: String) throws(PathFailure) -> (
    DirectoryHandle, physicalPath: [String]
  ) {
    var pending = path.split(separator: "/").map(String.init)[...]
    var current: DirectoryHandle
    do {
      current = try root()
    } catch {
      guard case .system(let code) = error else { throw .missing }
      throw .system(code, "/")
    }
    var walked: [String] = []
    var systemLinks = 0
    while let part = pending.popFirst() {
      if part == "." { continue }
      let name = Array(part.utf8CString)
      let here = "/" + (walked + [part]).joined(separator: "/")
      do {
        current = try current.openDirectory(name)
      } catch {
        switch error {
        case .missing: throw .missing
        case .notADirectory: throw .notADirectory(here)
        case .system(let code): throw .system(code, here)
        case .symbolicLink:
          guard walked.isEmpty, current.status(of: name)?.owner == 0,
            systemLinks < maximumSystemLinks, let text = current.linkText(name)
          else {
            throw .symbolicLink(here)
          }
          systemLinks += 1
          // The link's text is walked in its place, by the same rules.
          pending = (text.split(separator: "/").map(String.init) + pending)[...]
          continue
        }
      }
      if part == ".." {
        _ = walked.popLast()
      } else {
        walked.append(part)
      }
    }
    return (current, walked)
  }
}
