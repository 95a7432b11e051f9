/// The stored properties of a struct, by name, type and offset: what describing a plugin's
/// parameters needs from reflection, without `Mirror`.
///
/// `Mirror(reflecting:)` asks whether the value is `CustomReflectable`, and boxes each
/// property's value in an `Any` behind type-erased collections: in a fresh process, each
/// distinct type it meets costs a search through every protocol conformance loaded (some
/// 300,000 instructions on Linux), and a launch reads the parameters of each kind its
/// manifest uses before its first step. These are the runtime's own entry points that
/// `Mirror` and the standard library's `_forEachField` are built on, exported by the Swift
/// runtime on every platform.
enum StoredFields {
  /// One stored property.
  struct Field {
    /// Its name, as declared (`_name` for a property wrapper's storage).
    var name: String
    /// Its type.
    var type: Any.Type
    /// Its offset in the struct, in bytes.
    var offset: Int
  }

  /// The stored properties of `type`, in declaration order; `nil` unless it is a struct.
  static func of<T>(_ type: T.Type) -> [Field]? {
    // A class's fields are those of its instances, not of the reference.
    guard !(type is AnyClass) else { return nil }
    let count = storedFieldCount(type)
    var fields: [Field] = []
    fields.reserveCapacity(count)
    for index in 0..<count {
      var metadata = FieldMetadata()
      let fieldType = storedFieldMetadata(type, index: index, fieldMetadata: &metadata)
      defer { metadata.freeName?(metadata.name) }
      guard let name = metadata.name else { return nil }
      fields.append(
        Field(
          name: String(cString: name), type: fieldType,
          offset: storedFieldOffset(type, index: index)))
    }
    return fields
  }
}

/// What the runtime says of a field besides its type (its `FieldMetadata`).
private struct FieldMetadata {
  var name: UnsafePointer<CChar>? = nil
  /// Frees `name`, when the runtime made it for the call.
  var freeName: (@convention(c) (UnsafePointer<CChar>?) -> Void)? = nil
  var isStrong = true
  var isVar = false
}

@_silgen_name("swift_reflectionMirror_recursiveCount")
private func storedFieldCount(_ type: Any.Type) -> Int

@_silgen_name("swift_reflectionMirror_recursiveChildOffset")
private func storedFieldOffset(_ type: Any.Type, index: Int) -> Int

@_silgen_name("swift_reflectionMirror_recursiveChildMetadata")
private func storedFieldMetadata(
  _ type: Any.Type, index: Int, fieldMetadata: UnsafeMutablePointer<FieldMetadata>
) -> Any.Type
