import Foundation
import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Where the CLI writes: standard output and standard error, unbuffered, line by line.
///
/// Every write is checked. Text is made safe for a terminal first (``TerminalText``). A stream
/// that fails (a closed pipe, `orchestrate run ... | head -1`; a full disk) is not written to
/// again, and nothing else stops: a launch goes on and its report is still written.
struct Console: Sendable {
  /// The process's own stdout and stderr.
  static let standard = Console(output: .standardOutput)

  /// Where ``out(_:)`` goes: stdout, or stderr when stdout carries a file (`--report -`).
  let output: Stream

  /// One of the process's two output streams.
  struct Stream: Sendable, Equatable {
    let descriptor: Int32

    static let standardOutput = Stream(descriptor: STDOUT_FILENO)
    static let standardError = Stream(descriptor: STDERR_FILENO)
  }

  /// This console with ``out(_:)`` sent to stderr, so that stdout carries only data.
  var outputOnStandardError: Console { Console(output: .standardError) }

  /// Prints one line: a newline inside `text` is shown escaped, like other control characters.
  func out(_ line: String) {
    Self.send(TerminalText.escaped(line) + "\n", to: output)
  }

  /// Prints each of `lines` as ``out(_:)`` does, in one write: a table of 10,000 rows is
  /// not 10,000 system calls.
  func out(lines: some Sequence<String>) {
    var text = ConsoleText()
    for line in lines { text.add(line) }
    out(text)
  }

  /// Prints lines made and escaped beforehand, in one write.
  func out(_ text: ConsoleText) {
    if !text.bytes.isEmpty { Self.send(text.bytes, to: output) }
  }

  /// Prints several lines of the CLI's own making (help, a graph, JSON) and a newline.
  func text(_ text: String) {
    Self.send(TerminalText.escaped(text, keepingNewlines: true) + "\n", to: output)
  }

  /// Prints JSON text and a newline, made safe for a terminal with JSON's own escapes, so
  /// that it stays JSON.
  func json(_ text: String) {
    let json = TerminalText.escapedJSON(text)
    Self.send(json.hasSuffix("\n") ? json : json + "\n", to: output)
  }

  /// Writes `text` without adding a newline; its own newlines are kept.
  func write(_ text: String) {
    Self.send(TerminalText.escaped(text, keepingNewlines: true), to: output)
  }

  /// Writes `text` with its control sequences, for the live display, which escapes what it
  /// shows from the launch itself.
  func writeControlSequences(_ text: String) {
    Self.send(text, to: output)
  }

  /// Prints one line on stderr, escaped like ``out(_:)``.
  func err(_ line: String) {
    Self.send(TerminalText.escaped(line) + "\n", to: .standardError)
  }

  /// Writes `data` to stdout as it is: a file's contents asked for with `-`.
  func data(_ data: Data) {
    Self.send(data, to: .standardOutput)
  }

  /// The width in columns of the terminal ``out(_:)`` writes to; `nil` when it is not one,
  /// or does not say.
  var columns: Int? {
    var size = winsize()
    #if canImport(Glibc)
      let result = ioctl(output.descriptor, UInt(TIOCGWINSZ), &size)
    #else
      let result = ioctl(output.descriptor, TIOCGWINSZ, &size)
    #endif
    return result == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
  }

  /// Whether ``out(_:)`` goes to an interactive terminal that is not a CI log, nor one that
  /// says it cannot move its cursor (`TERM=dumb`, as Emacs' shell buffers set).
  var isInteractive: Bool {
    let environment = ProcessInfo.processInfo.environment
    return isatty(output.descriptor) == 1
      && environment["CI"].map { $0.isEmpty || $0 == "false" } ?? true
      && environment["TERM"] != "dumb"
  }

  /// The error that stopped writes to stdout, other than a reader that went away: output was
  /// lost, which the exit status must say.
  static var standardOutputFailure: Int32? {
    failures.withLock { $0[STDOUT_FILENO] }.flatMap { $0 == EPIPE ? nil : $0 }
  }

  /// Takes stdout and stderr as the process found them: one that was closed when the program
  /// started (`orchestrate run app.json >&-`) is failed with `EBADF` and never written to.
  ///
  /// A closed descriptor is the lowest free one, so the process's next `open` takes it: the
  /// Swift runtime's own event descriptors already have by now, and later a store or a report
  /// could. A descriptor that came from the shell never has `FD_CLOEXEC` set (it would not have
  /// survived `exec`), one this process opened always has; so one that has it is not the
  /// stream, and writing there would go into someone else's file. One still free is filled
  /// with `/dev/null`, so that no file opened later can become it.
  static func adoptStandardStreams() {
    for descriptor in [STDOUT_FILENO, STDERR_FILENO] {
      let flags = fcntl(descriptor, F_GETFD)
      guard flags < 0 || flags & FD_CLOEXEC != 0 else { continue }
      failures.withLock { $0[descriptor] = EBADF }
      guard flags < 0 else { continue }
      let null = open("/dev/null", O_RDWR)
      if null >= 0, null != descriptor {
        dup2(null, descriptor)
        close(null)
      }
    }
  }

  /// The errno that stopped each stream, by descriptor.
  private static let failures = Mutex<[Int32: Int32]>([:])

  private static func send(_ text: String, to stream: Stream) {
    send(Data(text.utf8), to: stream)
  }

  private static func send(_ data: some ContiguousBytes, to stream: Stream) {
    failures.withLock { failures in
      guard failures[stream.descriptor] == nil else { return }
      if let code = writeAll(data, to: stream.descriptor) {
        failures[stream.descriptor] = code
      }
    }
  }

  /// Writes all of `data`, retrying after signals and partial writes; the errno on failure.
  private static func writeAll(_ data: some ContiguousBytes, to descriptor: Int32) -> Int32? {
    data.withUnsafeBytes { buffer -> Int32? in
      guard var next = buffer.baseAddress else { return nil }
      var remaining = buffer.count
      while remaining > 0 {
        let written = systemWrite(descriptor, next, remaining)
        if written < 0 {
          if errno == EINTR { continue }
          if errno == EAGAIN {
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&ready, 1, -1)
            continue
          }
          return errno
        }
        next += written
        remaining -= written
      }
      return nil
    }
  }
}

#if canImport(Darwin)
  private let systemWrite = Darwin.write
#elseif canImport(Glibc)
  private let systemWrite = Glibc.write
#endif
