#if !canImport(Darwin)
  import Glibc

  /// The C library's function `name` as a `Function` (a `@convention(c)` type), looked up by
  /// name: for the calls Glibc's module map leaves out (`renameat2`, `<sys/xattr.h>`); `nil`
  /// where the library has none (an older glibc, a static build).
  func cLibraryFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
    return unsafeBitCast(symbol, to: type)
  }
#endif
