/// The strings of up to 16 bytes read lately, by their bytes: keys and common values repeat
/// throughout a document, and finding one again is cheaper than making a `String` of it.
///
/// A string's bytes are two words, its first eight and its last eight, which overlap or are
/// padded with zeros; with its length they are the whole string. The cache starts after a
/// few strings, so that a small document does not pay for its table.
struct ShortStringCache: ~Copyable {
  /// What a slot holds, its string aside: a `count` of -1 marks a slot never filled, whose
  /// string is not initialized. Plain numbers, so the table starts with one fill.
  private struct Key {
    var first: UInt64
    var last: UInt64
    var count: Int
  }

  private static let slots = 256
  private static let stringsBeforeCaching = 16
  private var keys: UnsafeMutablePointer<Key>?
  private var strings: UnsafeMutablePointer<String>?
  private var stringsSeen = 0

  deinit {
    if let keys, let strings {
      for slot in 0..<Self.slots where keys[slot].count >= 0 {
        (strings + slot).deinitialize(count: 1)
      }
      keys.deallocate()
      strings.deallocate()
    }
  }

  /// The string of `count` bytes whose first and last eight are `first` and `last`, if it
  /// was met lately.
  @inline(__always)
  func string(first: UInt64, last: UInt64, count: Int) -> String? {
    guard let keys else { return nil }
    let slot = Self.slot(first, last, count)
    let key = keys[slot]
    guard key.first == first, key.count == count, key.last == last else { return nil }
    return strings.unsafelyUnwrapped[slot]
  }

  /// Keeps `string`, of `count` bytes whose first and last eight are `first` and `last`, to
  /// be found again.
  mutating func remember(_ string: String, first: UInt64, last: UInt64, count: Int) {
    let keys: UnsafeMutablePointer<Key>
    let strings: UnsafeMutablePointer<String>
    if let existingKeys = self.keys, let existingStrings = self.strings {
      (keys, strings) = (existingKeys, existingStrings)
    } else {
      stringsSeen += 1
      guard stringsSeen >= Self.stringsBeforeCaching else { return }
      keys = .allocate(capacity: Self.slots)
      keys.initialize(repeating: Key(first: 0, last: 0, count: -1), count: Self.slots)
      strings = .allocate(capacity: Self.slots)
      (self.keys, self.strings) = (keys, strings)
    }
    let slot = Self.slot(first, last, count)
    if keys[slot].count >= 0 {
      strings[slot] = string
    } else {
      (strings + slot).initialize(to: string)
    }
    keys[slot] = Key(first: first, last: last, count: count)
  }

  /// The first and last eight bytes of a string, when it has at most 16 and eight can be
  /// read from its start without leaving the document.
  @inline(__always)
  static func words(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, count: Int)
    -> (first: UInt64, last: UInt64)?
  {
    guard count <= 16, start &+ 8 <= bytes.count else { return nil }
    let first = JSONCursor.word(bytes, at: start)
    if count >= 8 { return (first, JSONCursor.word(bytes, at: start &+ count &- 8)) }
    return (first & ((1 &<< (UInt64(count) &* 8)) &- 1), 0)
  }

  @inline(__always)
  private static func slot(_ first: UInt64, _ last: UInt64, _ count: Int) -> Int {
    let mixed = (first ^ (last &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(count)) &* 0x9E37_79B9_7F4A_7C15
    return Int(truncatingIfNeeded: mixed &>> 56)
  }
}

/// A ``ShortStringCache`` a reader keeps over a whole tape, handed to each of its readings
/// (``JSONTape/value(at:cachedIn:)``): each step of a manifest has its params made into a
/// value, whose few short strings (keys, kinds, short values) are mostly those of the steps
/// before it; a cache of one reading's own starts too late to find any.
///
/// Not `Sendable`: one reader's, on one thread.
package final class JSONStringCache {
  // Only ever used by one reading at a time, on its reader's thread: the run-time check of
  // exclusive access, on every string, would only cost.
  @exclusivity(unchecked) var strings = ShortStringCache()

  package init() {}

  /// The text of the `count` bytes of `bytes` from `start`, found when it was met lately, made
  /// and kept otherwise.
  @inline(__always)
  func string(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, count: Int) -> String {
    let words = ShortStringCache.words(bytes, from: start, count: count)
    if let words, let string = strings.string(first: words.first, last: words.last, count: count) {
      return string
    }
    let string = String(
      decoding: UnsafeBufferPointer(rebasing: bytes[start..<start + count]), as: UTF8.self)
    if let words { strings.remember(string, first: words.first, last: words.last, count: count) }
    return string
  }
}
