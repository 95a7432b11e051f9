/// Names (step ids, plugin kinds, milestones) and the index of what has each, as a
/// `[String: Int]` would keep them (names equal as Swift compares strings are one name), for
/// far less: a dictionary hashes a string with SipHash, some 300 instructions for an id of a
/// few characters, and a manifest's ids are looked up several times a step; and the first
/// `[String: …]` a process makes checks at run time that `String` is `Hashable`, a search
/// through every conformance the process has loaded, on a launch's cold path. Names all
/// ASCII, as they nearly always are, are found by a hash of their bytes (two ASCII strings
/// are equal exactly when their bytes are); from the first name that is not, everything goes
/// through a dictionary, as a string such as "\u{212A}" (the Kelvin sign) equals the ASCII "K".
struct NameIndex {
  /// Positions in `ids` plus one, by hash; 0 for none. Twice as many as ids, at least.
  private var slots: [Int] = []
  /// The ids, first spelling kept, in the order they were added.
  private(set) var ids: [String] = []
  /// The index kept for each id (a step's, a kind's place in its registry, a milestone's).
  private var indices: [Int] = []
  /// Every id, once one that is not ASCII was added or looked up through the mutating
  /// subscript (``index(of:)`` never makes it), or the hash would take too long to place one.
  /// Behind a class: copying an index (a registry is copied with its kinds) with an optional
  /// dictionary in it would make the run time check that `String` is `Hashable`, a search
  /// through every conformance the process has loaded, the first time.
  private var dictionary: Names?

  /// The dictionary, shared by copies of an index until one of them changes it.
  private final class Names: @unchecked Sendable {
    // Changed only while this is its index's own (`isKnownUniquelyReferenced`).
    var byName: [String: Int]

    init(_ byName: [String: Int]) {
      self.byName = byName
    }
  }

  /// Room for `count` ids without growing.
  mutating func reserveCapacity(_ count: Int) {
    ids.reserveCapacity(count)
    indices.reserveCapacity(count)
    if dictionary == nil, slots.count < 2 * count { rehash(capacity: count) }
  }

  /// The index kept for `id`, if any.
  subscript(id: String) -> Int? {
    mutating get {
      if dictionary == nil, let hash = Self.asciiHash(of: id) {
        guard !slots.isEmpty else { return nil }
        if let found = find(id, hash: hash) { return found.position.map { indices[$0] } }
      }
      return fallback()[id]
    }
  }

  /// The index kept for `id`, if any, found without keeping anything new: a name that is not
  /// ASCII is compared with each one kept, while they are few enough for a hash of their
  /// bytes (a dictionary would be made for it, and kept, by the mutating subscript).
  func index(of id: String) -> Int? {
    if let dictionary { return dictionary.byName[id] }
    if let hash = Self.asciiHash(of: id) {
      guard !slots.isEmpty else { return nil }
      return find(id, hash: hash)?.position.map { indices[$0] }
    }
    return ids.firstIndex { $0 == id }.map { indices[$0] }
  }

  /// Keeps `index` for `id` unless an equal id has one: returns that one then, and keeps it.
  mutating func insert(_ id: String, index: Int) -> Int? {
    if dictionary == nil, let hash = Self.asciiHash(of: id) {
      if slots.count < 2 * (ids.count + 1) { rehash(capacity: 2 * (ids.count + 1)) }
      if dictionary == nil, let (position, slot) = find(id, hash: hash) {
        if let position { return indices[position] }
        ids.append(id)
        indices.append(index)
        slots[slot] = ids.count
        return nil
      }
    }
    if let existing = fallback()[id] { return existing }
    ids.append(id)
    indices.append(index)
    if dictionary != nil {
      if !isKnownUniquelyReferenced(&dictionary!) { dictionary = Names(dictionary!.byName) }
      dictionary!.byName[id] = index
    }
    return nil
  }

  /// The dictionary of every id, made the first time an id that is not ASCII comes.
  private mutating func fallback() -> [String: Int] {
    if let dictionary { return dictionary.byName }
    var made: [String: Int] = [:]
    made.reserveCapacity(ids.count)
    for position in ids.indices { made[ids[position]] = indices[position] }
    dictionary = Names(made)
    slots = []
    return made
  }

  /// Where `id` is in `ids`, or the empty slot it would take; `nil` when that takes more than
  /// ``maximumProbes`` slots. The hash is not seeded, so ids made to share slots (a hostile
  /// manifest's) would make every lookup walk them all: from then on, the dictionary, whose
  /// hash is seeded per process, keeps the ids.
  private func find(_ id: String, hash: UInt64) -> (position: Int?, slot: Int)? {
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    for _ in 0..<Self.maximumProbes {
      let entry = slots[slot]
      if entry == 0 { return (nil, slot) }
      if ids[entry - 1] == id { return (entry - 1, slot) }
      slot = (slot + 1) & mask
    }
    return nil
  }

  /// The most slots a lookup reads before the ids move to the dictionary: at most half the
  /// slots are taken, so ids of a manifest's own making rarely need more than a few.
  private static let maximumProbes = 48

  /// Spreads the ids over a table for `capacity` of them; hands them to the dictionary instead
  /// when one would take more than ``maximumProbes`` slots to place.
  private mutating func rehash(capacity: Int) {
    var size = 16
    while size < 2 * capacity { size *= 2 }
    slots = [Int](repeating: 0, count: size)
    let mask = size - 1
    for position in ids.indices {
      // Every id kept here is ASCII: the dictionary keeps them all from the first that is not.
      var slot = Int(truncatingIfNeeded: Self.asciiHash(of: ids[position]) ?? 0) & mask
      var probes = 1
      while slots[slot] != 0 {
        guard probes < Self.maximumProbes else {
          _ = fallback()
          return
        }
        probes += 1
        slot = (slot + 1) & mask
      }
      slots[slot] = position + 1
    }
  }

  /// Whether the ids are kept in the dictionary: from the first id or name that is not ASCII,
  /// or that the hash would take too long to place.
  var usesDictionary: Bool { dictionary != nil }

  /// FNV-1a of the bytes of `id`, or `nil` when it is not all ASCII.
  static func asciiHash(of id: String) -> UInt64? {
    // Over the string's own storage: iterating its UTF-8 view costs several times as much.
    if let hash = id.utf8.withContiguousStorageIfAvailable(hash(bytes:)) { return hash }
    return hash(bytes: Array(id.utf8))
  }

  private static func hash(bytes: some Sequence<UInt8>) -> UInt64? {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    var high: UInt8 = 0
    for byte in bytes {
      high |= byte
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    guard high < 0x80 else { return nil }
    // The low bits pick the slot: fold the high ones in.
    return hash ^ (hash >> 29)
  }
}
