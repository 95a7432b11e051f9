import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The lines of an open file, one at a time, read through a fixed buffer: a JSON Lines file
/// of a million reports is never held whole, only its line being read.
///
/// Lines are what `split(separator: "\n", omittingEmptySubsequences: false)` gives of the
/// whole file: the text after the last newline is a line too, empty when the file ends with
/// one. A line longer than the limit is not kept; its bytes are passed over to its end.
final class JSONLinesReader {
  /// One line.
  enum Line {
    /// Its bytes, without the newline.
    case text([UInt8])
    /// It is longer than the limit.
    case tooLong
  }

  /// A read that failed.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The number of the line ``next()`` gave last, from 1.
  private(set) var number = 0

  private let descriptor: Int32
  private let limit: Int
  private var buffer: [UInt8]
  /// The bytes of `buffer` not yet given.
  private var start = 0
  private var end = 0
  private var atEnd = false
  private var finished = false

  /// Reads `descriptor` from where it stands, `bufferSize` bytes at a time, and closes it; a
  /// line longer than `limit` bytes is given as ``Line/tooLong``.
  init(descriptor: Int32, limit: Int, bufferSize: Int = 1 << 20) {
    self.descriptor = descriptor
    self.limit = limit
    buffer = [UInt8](repeating: 0, count: max(1, bufferSize))
  }

  deinit {
    close(descriptor)
  }

  /// The next line, or `nil` after the last.
  /// - Throws: ``Failure`` when the file cannot be read further.
  func next() throws(Failure) -> Line? {
    guard !finished else { return nil }
    var line: [UInt8] = []
    var tooLong = false
    while true {
      if start < end {
        let newline = buffer.withUnsafeBufferPointer { bytes in
          memchr(bytes.baseAddress! + start, 0x0A, end - start).map {
            bytes.baseAddress!.distance(to: $0.assumingMemoryBound(to: UInt8.self))
          }
        }
        let stop = newline ?? end
        if !tooLong {
          if line.count + (stop - start) > limit {
            tooLong = true
            line = []
          } else {
            line += buffer[start..<stop]
          }
        }
        if let newline {
          start = newline + 1
          number += 1
          return tooLong ? .tooLong : .text(line)
        }
        start = end
      }
      guard !atEnd else {
        finished = true
        number += 1
        return tooLong ? .tooLong : .text(line)
      }
      try refill()
    }
  }

  /// Reads the next bytes into the buffer; at the file's end, notes it.
  private func refill() throws(Failure) {
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw Failure(
          description:
            "cannot read it past line \(number) (\(String(cString: strerror(errno))))")
      }
      start = 0
      end = count
      atEnd = count == 0
      return
    }
  }
}
