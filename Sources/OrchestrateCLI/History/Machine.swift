import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The computer a launch ran on, kept with each history entry: times from a laptop and a CI
/// runner are not the same population, and `compare` says when a history mixes them.
package struct Machine: Sendable, Equatable {
  /// The host name.
  package var host: String
  /// The kernel's name, release and architecture: `Linux 6.8.0 x86_64`.
  package var system: String
  /// Processors available to the process.
  package var cores: Int

  /// Describes a machine.
  package init(host: String, system: String, cores: Int) {
    self.host = host
    self.system = system
    self.cores = cores
  }

  /// The machine this process runs on.
  package static var current: Machine {
    var name = [CChar](repeating: 0, count: 256)
    let host =
      gethostname(&name, name.count - 1) == 0
      ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      : "unknown"
    var info = utsname()
    let system: String
    if uname(&info) == 0 {
      system = [
        field(&info.sysname), field(&info.release), field(&info.machine),
      ].joined(separator: " ")
    } else {
      system = "unknown"
    }
    return Machine(host: host, system: system, cores: ProcessInfo.processInfo.activeProcessorCount)
  }

  /// `build-7 (Linux 6.8.0 x86_64, 2 cores)`.
  package var description: String {
    "\(host) (\(system), \(Grammar.count(cores, "core")))"
  }

  private static func field<T>(_ tuple: inout T) -> String {
    withUnsafeBytes(of: &tuple) { bytes in
      String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}
