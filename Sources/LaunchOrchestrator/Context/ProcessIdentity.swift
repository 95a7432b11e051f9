import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A process the launch record names, told apart from any other the system gives its number
/// to: its number, and when it started as the system tells it.
///
/// A number is given to another process once its process has ended (after a crash, the
/// next launch may find it on an unrelated process, or on one of another user): the number
/// alone would take a launch that died for one still running. With the start, it is the
/// same process only when both match.
package struct ProcessIdentity: Equatable, Sendable {
  /// The process number.
  package var number: Int32
  /// When it started (``start(of:)``); `nil` when the system did not say, and in records
  /// written before the record kept it, where the number alone says.
  package var start: String?

  package init(number: Int32, start: String?) {
    self.number = number
    self.start = start
  }

  /// This process.
  package static var current: ProcessIdentity {
    ProcessIdentity(number: getpid(), start: currentStart)
  }

  /// This process's start, read once: it never changes.
  private static let currentStart = start(of: getpid())

  /// Whether this is `other`: the same number, and the same start where both are known.
  package func isSame(as other: ProcessIdentity) -> Bool {
    guard number == other.number else { return false }
    guard let start, let otherStart = other.start else { return true }
    return start == otherStart
  }

  /// Whether the process runs: its number is in use (by a process of any user), and by the
  /// process that started at ``start`` when the system says when the process using it
  /// started. Where it does not (a sandbox refusing to say of another process), the number
  /// alone says, as in records without a start.
  package var isAlive: Bool {
    guard number > 0, kill(number, 0) == 0 || errno == EPERM else { return false }
    guard let start, let now = Self.start(of: number) else { return true }
    return now == start
  }

  /// When process `process` started, as text that is the same for one process and differs
  /// for any other that had or will have its number: on Apple platforms `kp_proc`'s
  /// `p_starttime` (seconds and microseconds since 1970); on Linux the boot's identity and
  /// field 22 of `/proc/<process>/stat` (clock ticks since that boot), since a number and a
  /// tick may meet again after a reboot. `nil` when the system does not say: no such
  /// process, or one the app may not look at.
  package static func start(of process: Int32) -> String? {
    guard process > 0 else { return nil }
    #if canImport(Darwin)
      var info = kinfo_proc()
      var size = MemoryLayout<kinfo_proc>.stride
      var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, process]
      guard sysctl(&name, u_int(name.count), &info, &size, nil, 0) == 0, size > 0,
        info.kp_proc.p_pid == process
      else { return nil }
      // `p_starttime` is a C macro for this member, which Swift does not import.
      let start = info.kp_proc.p_un.__p_starttime
      // A sandbox that hides another process's details leaves it zero: unknown, never a
      // start that would take the process for another.
      guard start.tv_sec != 0 || start.tv_usec != 0 else { return nil }
      return "\(start.tv_sec).\(start.tv_usec)"
    #else
      guard let boot = bootID, let ticks = ProcessStart.startTicks(of: "\(process)") else {
        return nil
      }
      return "\(boot):\(ticks)"
    #endif
  }

  #if !canImport(Darwin)
    /// The boot's identity, read once: the same for every process until the system restarts.
    private static let bootID: String? = {
      guard let data = FileManager.default.contents(atPath: "/proc/sys/kernel/random/boot_id")
      else { return nil }
      let text = String(decoding: data, as: UTF8.self).trimmingCharacters(
        in: .whitespacesAndNewlines)
      return text.isEmpty ? nil : text
    }()
  #endif
}
