/// A path from the root of a JSON document to one value, written like `steps[3].dependsOn[0]`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
  /// One step of a path: an object key or an array index.
  public enum Component: Sendable, Hashable {
    /// A member of an object.
    case key(String)
    /// An element of an array.
    case index(Int)
  }

  /// The components, from the root down.
  public var components: [Component]

  /// The path to the document's root.
  public static let root = JSONPath(components: [])

  /// Creates a path from its components.
  public init(components: [Component]) {
    self.components = components
  }

  /// The path to member `key` of the value at this path.
  public func appending(_ key: String) -> JSONPath {
    appending(.key(key))
  }

  /// The path to element `index` of the array at this path.
  public func appending(_ index: Int) -> JSONPath {
    appending(.index(index))
  }

  private func appending(_ component: Component) -> JSONPath {
    var extended = components
    extended.append(component)
    return JSONPath(components: extended)
  }

  /// The path as people write it: `steps[3].params.limit`, or `(root)` for the root.
  public var description: String {
    var text = ""
    for component in components {
      switch component {
      case .key(let key) where key.isPlainIdentifier:
        text += text.isEmpty ? key : "." + key
      case .key(let key):
        text += "[\"\(key)\"]"
      case .index(let index):
        text += "[\(index)]"
      }
    }
    return text.isEmpty ? "(root)" : text
  }
}

extension String {
  fileprivate var isPlainIdentifier: Bool {
    guard let first = unicodeScalars.first, first == "_" || first.properties.isAlphabetic else {
      return false
    }
    return unicodeScalars.allSatisfy {
      $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)
    }
  }
}
