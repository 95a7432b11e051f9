extension JSONTape {
  /// The value at `index`, as ``JSONParser/parse(_:)`` gives it: the first of a key written
  /// twice kept, every value with its offset, every number with its text.
  package func value(at index: Index) -> JSONValue {
    // A string, the usual parameter value, made here, without a builder and its cache.
    switch kind(of: index) {
    case .key: preconditionFailure("entry \(index) is a key, not a value")
    case .string: return JSONValue(.string(string(at: index)), offset: offset(of: index))
    default: break
    }
    return withEntries { entries, bytes in
      var builder = JSONValueBuilder(entries: entries, bytes: bytes, texts: texts, cache: nil)
      return builder.value(at: index)
    }
  }

  /// ``value(at:)``, its short strings found in `cache` or kept there: for a reader that makes
  /// values of many small parts of a tape (a manifest's thousands of steps' params).
  package func value(at index: Index, cachedIn cache: JSONStringCache) -> JSONValue {
    if kind(of: index) == .key { preconditionFailure("entry \(index) is a key, not a value") }
    return withEntries { entries, bytes in
      var builder = JSONValueBuilder(entries: entries, bytes: bytes, texts: texts, cache: cache)
      return builder.value(at: index)
    }
  }

  /// The texts of the elements of the array at `index` when they are all strings; `nil`
  /// otherwise. One call for a whole list (a step's `dependsOn`), not three for each element
  /// across the module boundary.
  package func strings(inArray index: Index) -> [String]? {
    withEntries { entries, bytes in
      let array = entries[index]
      precondition(array.kind == .array, "entry \(index) is not an array")
      var strings: [String] = []
      strings.reserveCapacity(Int(array.payload))
      // The elements of an array of strings are the entries after it, one each.
      for position in index + 1..<array.end {
        let entry = entries[position]
        guard entry.kind == .string else { return nil }
        if entry.flags & JSONTape.Entry.escaped != 0 {
          strings.append(texts[Int(entry.text)])
        } else {
          strings.append(
            String(
              decoding: UnsafeBufferPointer(rebasing: bytes[entry.offset + 1..<entry.end]),
              as: UTF8.self))
        }
      }
      return strings
    }
  }

  /// The member at `member`, as ``value(at:)`` of its object gives it.
  package func member(_ member: Member) -> JSONMember {
    JSONMember(
      key: string(at: member.key), keyOffset: offset(of: member.key), value: value(at: member.value)
    )
  }
}

/// Makes the values of a tape's entries, over the tape and its bytes.
///
/// Arrays are made at their size, known from the tape. Strings of up to 16 bytes met lately
/// (keys, kinds, short values) are found in a small cache by their bytes instead of being
/// made again: in a cache its reader keeps across readings, or, when it has none, one of the
/// builder's own, made with the first string.
private struct JSONValueBuilder: ~Copyable {
  let entries: UnsafeBufferPointer<JSONTape.Entry>
  let bytes: UnsafeBufferPointer<UInt8>
  let texts: [String]
  var cache: JSONStringCache?

  mutating func value(at index: Int) -> JSONValue {
    let entry = entries[index]
    switch entry.kind {
    case .object:
      var members: [JSONMember] = []
      members.reserveCapacity(Int(entry.payload))
      var position = index + 1
      while position < entry.end {
        let key = entries[position]
        if key.flags & JSONTape.Entry.duplicate != 0 {
          position = after(position + 1)
          continue
        }
        let text = string(key)
        let value = value(at: position + 1)
        members.append(JSONMember(key: text, keyOffset: key.offset, value: value))
        position = after(position + 1)
      }
      return JSONValue(.object(members), offset: entry.offset)
    case .array:
      var elements: [JSONValue] = []
      elements.reserveCapacity(Int(entry.payload))
      var position = index + 1
      while position < entry.end {
        elements.append(value(at: position))
        position = after(position)
      }
      return JSONValue(.array(elements), offset: entry.offset)
    case .string, .key:
      return JSONValue(.string(string(entry)), offset: entry.offset)
    case .number:
      return JSONValue(
        number: Double(bitPattern: entry.payload), text: texts[Int(entry.text)],
        offset: entry.offset)
    case .true: return JSONValue(.bool(true), offset: entry.offset)
    case .false: return JSONValue(.bool(false), offset: entry.offset)
    case .null: return JSONValue(.null, offset: entry.offset)
    }
  }

  /// The index after the value at `position` and all it contains.
  @inline(__always)
  private func after(_ position: Int) -> Int {
    let entry = entries[position]
    return entry.kind == .array || entry.kind == .object ? entry.end : position + 1
  }

  /// The text of a string or key entry.
  @inline(__always)
  private mutating func string(_ entry: JSONTape.Entry) -> String {
    if entry.flags & JSONTape.Entry.escaped != 0 { return texts[Int(entry.text)] }
    if cache == nil { cache = JSONStringCache() }
    return cache.unsafelyUnwrapped.string(
      bytes, from: entry.offset + 1, count: entry.end - entry.offset - 1)
  }
}
