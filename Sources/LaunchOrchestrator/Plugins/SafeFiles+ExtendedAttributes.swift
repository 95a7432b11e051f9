import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The extended attributes a rewrite keeps: a POSIX access list on Linux
/// (`system.posix_acl_access`, which grants other users and groups access the mode bits do
/// not show), the app's own marks (`com.apple.metadata:com_apple_backup_excludeItem`, what
/// `isExcludedFromBackup` sets on Apple's systems), a `user.` attribute a tool wrote.
extension SafeFiles {
  /// Gives the open new file `destination` the extended attributes of the file `name` in
  /// `folder` that it replaces (`existing`, as it was looked at before the write).
  ///
  /// An attribute the system keeps for itself and will not let a process set (an SELinux
  /// label, which the new file gets anyway) is passed over; an access list that cannot be
  /// kept throws, and the old file stays: the new one would let other people in, or shut
  /// them out. A file this process may not open for reading keeps nothing but its mode and
  /// owner.
  static func copyExtendedAttributes(
    of name: String, in folder: Int32, existing: stat, to destination: Int32, target: URL
  ) throws {
    let source = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard source >= 0 else { return }
    defer { close(source) }
    // Only the file that was looked at: one swapped in since has nothing to hand on.
    var info = stat()
    guard fstat(source, &info) == 0, info.st_dev == existing.st_dev,
      info.st_ino == existing.st_ino
    else { return }
    for attribute in attributeNames(of: source) {
      guard let value = attributeValue(attribute, of: source) else { continue }
      let set = value.withUnsafeBytes {
        setAttribute(destination, attribute, $0.baseAddress, $0.count)
      }
      guard set != 0 else { continue }
      let code = errno
      if attributeValue(attribute, of: destination) == value { continue }
      guard isAccessList(attribute) else { continue }
      throw failure(
        code, writing: target, doing: "give the new file the old one's access list (\(attribute))")
    }
  }

  /// Whether `attribute` holds who may read or write the file.
  private static func isAccessList(_ attribute: String) -> Bool {
    attribute.hasPrefix("system.posix_acl_")
  }

  /// The names of the open file's extended attributes; none when it has none, or they
  /// cannot be listed (a file system without them).
  private static func attributeNames(of descriptor: Int32) -> [String] {
    // The list may grow between asking for its size and reading it: asked again then.
    for _ in 0..<3 {
      let size = listAttributes(descriptor, nil, 0)
      guard size > 0 else { return [] }
      var buffer = [CChar](repeating: 0, count: size)
      let read = listAttributes(descriptor, &buffer, size)
      // Grown since: a call that did not fit (or, on Linux, that only measured) again.
      if (read < 0 && errno == ERANGE) || read > size { continue }
      guard read > 0 else { return [] }
      return buffer[..<read].split(separator: 0).map {
        String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      }
    }
    return []
  }

  /// The value of `attribute` of the open file; `nil` when it cannot be read.
  private static func attributeValue(_ attribute: String, of descriptor: Int32) -> [UInt8]? {
    for _ in 0..<3 {
      let size = getAttribute(descriptor, attribute, nil, 0)
      guard size >= 0 else { return nil }
      // Empty: a second call of size 0 would only measure it again, grown or not.
      guard size > 0 else { return [] }
      var value = [UInt8](repeating: 0, count: size)
      let read = value.withUnsafeMutableBytes {
        getAttribute(descriptor, attribute, $0.baseAddress, size)
      }
      if (read < 0 && errno == ERANGE) || read > size { continue }
      guard read >= 0 else { return nil }
      return Array(value[..<read])
    }
    return nil
  }
}

// The calls differ only in Darwin's extra position and options arguments (0: the whole
// value, following nothing, as an open descriptor is already the file).
#if canImport(Darwin)
  private func listAttributes(
    _ descriptor: Int32, _ names: UnsafeMutablePointer<CChar>?, _ size: Int
  ) -> Int {
    flistxattr(descriptor, names, size, 0)
  }

  private func getAttribute(
    _ descriptor: Int32, _ name: String, _ value: UnsafeMutableRawPointer?, _ size: Int
  ) -> Int {
    fgetxattr(descriptor, name, value, size, 0, 0)
  }

  private func setAttribute(
    _ descriptor: Int32, _ name: String, _ value: UnsafeRawPointer?, _ size: Int
  ) -> Int32 {
    fsetxattr(descriptor, name, value, size, 0, 0)
  }
#else
  // Glibc's module map leaves out <sys/xattr.h>: the C library's own functions, looked up
  // once by name (``cLibraryFunction(_:as:)``).
  private enum LinuxAttributeCalls {
    typealias List = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int
    typealias Get =
      @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int)
      -> Int
    typealias Set =
      @convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32)
      -> Int32

    static let list = cLibraryFunction("flistxattr", as: List.self)
    static let get = cLibraryFunction("fgetxattr", as: Get.self)
    static let set = cLibraryFunction("fsetxattr", as: Set.self)
  }

  private func listAttributes(
    _ descriptor: Int32, _ names: UnsafeMutablePointer<CChar>?, _ size: Int
  ) -> Int {
    guard let list = LinuxAttributeCalls.list else { return -1 }
    return list(descriptor, names, size)
  }

  private func getAttribute(
    _ descriptor: Int32, _ name: String, _ value: UnsafeMutableRawPointer?, _ size: Int
  ) -> Int {
    guard let get = LinuxAttributeCalls.get else { return -1 }
    return get(descriptor, name, value, size)
  }

  private func setAttribute(
    _ descriptor: Int32, _ name: String, _ value: UnsafeRawPointer?, _ size: Int
  ) -> Int32 {
    guard let set = LinuxAttributeCalls.set else { return -1 }
    return set(descriptor, name, value, size, 0)
  }
#endif
