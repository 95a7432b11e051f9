import Foundation
import LaunchOrchestrator
import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Turns the first SIGINT, SIGTERM or SIGHUP (the terminal closed) into a clean cancellation
/// of the launch; a second one exits at once with 128 plus the signal's number.
///
/// The signals are caught by a handler installed before `init` returns, which only writes the
/// signal's number into a pipe (all a handler may safely do); a thread of its own reads the
/// pipe and acts. Dispatch signal sources were used before: they are registered on
/// libdispatch's own thread some time after `resume()`, and a signal in between was lost.
final class InterruptHandler: Sendable {
  /// The signals that cancel a launch.
  static let signals = [SIGINT, SIGTERM, SIGHUP]

  /// The write end of the listening handler's pipe, for the signal handler, which can reach
  /// only globals; -1 when none listens.
  private static let writeEnd = Atomic<Int32>(-1)

  private let readEnd: Int32
  private let ownWriteEnd: Int32

  /// Starts listening; `onInterrupt` gets the number of the first signal, `onRepeat` that of
  /// any later one (by default, the process exits at once with 128 plus it).
  ///
  /// One handler at a time (the command installs one for the whole run); another may listen
  /// once this one has stopped. The pipe's two descriptors stay open until the process ends:
  /// a signal handler that read the write end just before `stop()` may still write to it,
  /// and a closed, reused descriptor would take that byte into some other file.
  init(
    onInterrupt: @escaping @Sendable (Int32) -> Void,
    onRepeat: @escaping @Sendable (Int32) -> Void = {
      InterruptHandler.exitAtOnce(ExitCode.signalled($0))
    }
  ) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else {
      // Without a pipe the signals keep their default action: they stop the process, which
      // loses the report but never ignores the user.
      readEnd = -1
      ownWriteEnd = -1
      return
    }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    // A handler must never block: when nobody reads any more, extra signals are dropped.
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    readEnd = ends[0]
    ownWriteEnd = ends[1]
    let installed = Self.writeEnd.compareExchange(
      expected: -1, desired: ends[1], ordering: .sequentiallyConsistent
    ).exchanged
    precondition(installed, "an InterruptHandler is already listening; stop it first")
    let reader = Thread { [readEnd] in
      Self.readSignals(from: readEnd, onInterrupt: onInterrupt, onRepeat: onRepeat)
    }
    reader.name = "orchestrate signals"
    reader.start()
    for signalNumber in Self.signals { signal(signalNumber, Self.forwardToPipe) }
  }

  /// Stops listening. The signals stay ignored: the command is over and the process exits
  /// with its own status moments later, and restoring the default would let a late Ctrl-C
  /// kill it in between, turning a finished launch's status into a death by signal.
  func stop() {
    guard
      readEnd >= 0,
      Self.writeEnd.compareExchange(
        expected: ownWriteEnd, desired: -1, ordering: .sequentiallyConsistent
      ).exchanged
    else { return }
    for signalNumber in Self.signals { signal(signalNumber, SIG_IGN) }
    var stopByte: UInt8 = 0
    _ = write(ownWriteEnd, &stopByte, 1)
  }

  /// Runs `body` with the signals' default actions when no handler listens (after
  /// ``stop()``, which ignores them): for a wait the user may end as any other program's (the
  /// reader of a FIFO the report goes to, which may never come). What they were is restored
  /// after it.
  static func withDefaultActions<T>(_ body: () -> T) -> T {
    guard writeEnd.load(ordering: .sequentiallyConsistent) == -1 else { return body() }
    let previous = signals.map { signal($0, SIG_DFL) }
    defer { for (signalNumber, action) in zip(signals, previous) { signal(signalNumber, action) } }
    return body()
  }

  /// Ends the process now, for a repeated signal: what is buffered is written, but nothing
  /// else runs (no exit handlers or static destructors while the launch's threads still run).
  private static func exitAtOnce(_ code: ExitCode) -> Never {
    fflush(nil)
    _exit(code.rawValue)
  }

  /// The signal handler: writes the signal's number into the pipe, keeping `errno` as it was
  /// for the code the signal interrupted.
  private static let forwardToPipe: @convention(c) (Int32) -> Void = { signalNumber in
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(writeEnd.load(ordering: .relaxed), &byte, 1)
    errno = savedErrno
  }

  /// The reader thread's loop: the first signal interrupts, later ones repeat; a zero byte
  /// from `stop()` ends it.
  private static func readSignals(
    from readEnd: Int32, onInterrupt: @Sendable (Int32) -> Void,
    onRepeat: @Sendable (Int32) -> Void
  ) {
    var interrupted = false
    while true {
      var byte: UInt8 = 0
      let count = read(readEnd, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      guard count == 1, byte != 0 else { return }
      let signalNumber = Int32(byte)
      if interrupted {
        onRepeat(signalNumber)
      } else {
        interrupted = true
        onInterrupt(signalNumber)
      }
    }
  }
}
