import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The time from the process's start to a moment of the launch, as the operating system
/// tells it: what the process spent before the launch (loading, static initialisers, the
/// app's own `init`) is part of what users wait for.
///
/// A ``Mark`` is taken when the launch starts, with one clock read; the process's start time
/// is looked up only when the report is made, so the launch's start pays for no file read.
package enum ProcessStart {
  /// A moment, on the clock the operating system states the process's start in.
  package struct Mark: Sendable {
    #if canImport(Darwin)
      /// Wall-clock time, as `p_starttime` is.
      private let now: timeval
    #else
      /// Time since boot, as `/proc/self/stat`'s `starttime` is.
      private let now: timespec
    #endif

    /// The same moment on the wall clock, for the report's `startedAt`.
    package let date = Date()

    /// Now.
    package init() {
      #if canImport(Darwin)
        var now = timeval()
        gettimeofday(&now, nil)
        self.now = now
      #else
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        self.now = now
      #endif
    }

    /// How long after the process's start this moment was; `nil` when the system does not
    /// say when the process started. On Linux to the kernel's clock tick (10 ms at the usual
    /// 100 Hz), on Apple platforms to the microsecond.
    package var sinceProcessStart: Duration? {
      #if canImport(Darwin)
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, getpid()]
        guard sysctl(&name, u_int(name.count), &info, &size, nil, 0) == 0, size > 0 else {
          return nil
        }
        // `p_starttime` is a C macro for this member, which Swift does not import.
        let start = info.kp_proc.p_un.__p_starttime
        let elapsed =
          Duration.seconds(Int64(now.tv_sec) - Int64(start.tv_sec))
          + .microseconds(Int64(now.tv_usec) - Int64(start.tv_usec))
        return elapsed >= .zero ? elapsed : nil
      #else
        guard let start = ProcessStart.processStart else { return nil }
        let sinceBoot =
          Duration.seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
        let elapsed = sinceBoot - start
        return elapsed >= .zero ? elapsed : nil
      #endif
    }
  }

  #if !canImport(Darwin)
    /// The process's start, since boot: its ``startTicks(of:)`` in the kernel's clock ticks,
    /// read and converted once. It never moves, and every launch's report is stamped with it
    /// (a file read and parse each time, before; then the ticks a second asked of `sysconf`).
    private static let processStart: Duration? = {
      guard let ticks = startTicks(of: "self") else { return nil }
      let perSecond = sysconf(Int32(_SC_CLK_TCK))
      guard perSecond > 0 else { return nil }
      return Duration.seconds(ticks / Int64(perSecond))
        + .nanoseconds((ticks % Int64(perSecond)) * 1_000_000_000 / Int64(perSecond))
    }()

    /// Field 22 of `/proc/<process>/stat`, `starttime`: clock ticks from boot to the
    /// process's start (`self`: this process). The fields are counted after the command's
    /// closing parenthesis, since the command itself may hold spaces and parentheses.
    static func startTicks(of process: String) -> Int64? {
      guard let data = FileManager.default.contents(atPath: "/proc/\(process)/stat") else {
        return nil
      }
      guard let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
      // After `) `: field 3 (state) is the first; starttime is field 22, the 20th from there.
      let fields = data[(close + 1)...].split(separator: UInt8(ascii: " "))
      guard fields.count >= 20 else { return nil }
      return Int64(String(decoding: fields[19], as: UTF8.self))
    }
  #endif
}
