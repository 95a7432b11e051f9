import Foundation
import Testing

/// Documents on which two readers of JSON are compared (``JSONParser`` with its reference, the
/// tape with the parser): each set handed to `check` one document at a time, the same on every
/// run.
enum JSONComparisonDocuments {
  /// Strings of every length in `lengths`, alone, cut before their closing quote, as an
  /// element, and as keys and values, with a plain, non-ASCII, broken or escaped filling at
  /// their start, middle or end.
  static func stringsOfEveryLength(_ lengths: ClosedRange<Int>, _ check: ([UInt8]) -> Void) {
    let fillings: [[UInt8]] = [
      Array("a".utf8), Array("é".utf8), Array("🚀".utf8), [0xFF], [0x80], [0xC0, 0x80],
      [0xED, 0xA0, 0x80], [0x01], [0x1F], [0x7F], Array("\\n".utf8), Array("\\u00e9".utf8),
      Array("\\ud83d\\ude80".utf8), Array("\\".utf8), Array("\\x".utf8), Array("\\u12".utf8),
    ]
    for length in lengths {
      for filling in fillings {
        for position in [0, length / 2, length] {
          var content = [UInt8](repeating: UInt8(ascii: "k"), count: length)
          content.insert(contentsOf: filling, at: position)
          let string = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
          check(string)
          check(Array(string.dropLast()))
          check(Array("[".utf8) + string + Array(", 1]".utf8))
          check(Array("{".utf8) + string + Array(": ".utf8) + string + Array("}".utf8))
          check(Array("{".utf8) + string + Array(":1, ".utf8) + string + Array(":2}".utf8))
        }
      }
    }
  }

  /// Objects of 14 to 40 members, below, at and beyond the 16 from which keys are hashed,
  /// repeating keys written plainly and with escapes, `more` members (JSON text) at their end.
  static func largeObjectsWithDuplicates(more: [String] = [], _ check: ([UInt8]) -> Void) {
    for count in [14, 15, 16, 17, 40] {
      var members = (0..<count).map { #""k\#($0)": \#($0)"# }
      members += [
        #""k3": -1"#, #""k\#(count - 1)": -1"#, #""k\u0033": 0"#, #""k0": {"z": 1, "z": 2}"#,
      ]
      members += more
      check(Array("[{ \(members.joined(separator: ", ")) }]".utf8))
    }
  }

  /// Arrays and objects nested just below, at and just beyond ``JSONParser/maximumDepth``,
  /// the objects with a duplicate key at the bottom.
  static func deepNesting(_ check: ([UInt8]) -> Void) {
    for depth in [255, 256, 257] {
      check(
        Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
      let objects =
        String(repeating: "{\"a\":", count: depth) + "{\"d\":1,\"d\":2}"
        + String(repeating: "}", count: depth)
      check(Array(objects.utf8))
    }
  }

  /// 3,000 documents generated from `seed`, with members named from `keys` (JSON string
  /// contents, escapes written out), each followed by three copies with a byte changed,
  /// dropped, added or the end cut off.
  static func generatedAndDamaged(seed: UInt64, keys: [String], _ check: ([UInt8]) -> Void) {
    var random = SplitMix(seed: seed)
    let alphabet = Array("{}[]:,\" \\u0aé1-.eE+tfn\n".utf8) + [0x00, 0x1F, 0x80, 0xBF, 0xEF, 0xFF]
    for _ in 0..<3_000 {
      var document: [UInt8] = []
      generateValue(into: &document, depth: 0, keys: keys, random: &random)
      check(document)
      guard !document.isEmpty else { continue }
      for _ in 0..<3 {
        check(damage(document, from: alphabet, mayCut: true, random: &random))
      }
    }
  }

  /// The repository's manifests (and schema), each whole and then `damages` times damaged at
  /// random from `seed`; then the smallest cut off at every byte.
  static func repositorysManifests(
    seed: UInt64, damages: Int, _ check: ([UInt8]) -> Void
  ) throws {
    let folder = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
      .appendingPathComponent("manifests")
    let files = try #require(
      FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects
        as? [URL]
    )
    .filter { $0.pathExtension == "json" }
    .sorted { $0.path < $1.path }
    #expect(files.count >= 5)
    var random = SplitMix(seed: seed)
    let alphabet = Array("{}[]:,\" \\u0aé1-.eE+tfn\n".utf8) + [0x00, 0x1F, 0x80, 0xFF]
    for file in files {
      let document = try [UInt8](Data(contentsOf: file))
      check(document)
      for _ in 0..<damages {
        check(damage(document, from: alphabet, mayCut: false, random: &random))
      }
    }
    let smallest = try #require(
      try files.map { try [UInt8](Data(contentsOf: $0)) }.min { $0.count < $1.count })
    for end in 0..<smallest.count {
      check(Array(smallest[..<end]))
    }
  }

  /// `document` (not empty) with a byte of `alphabet` put in place of one, one taken out, one
  /// put in, or (`mayCut`) cut off there, at random.
  private static func damage(
    _ document: [UInt8], from alphabet: [UInt8], mayCut: Bool, random: inout SplitMix
  ) -> [UInt8] {
    var damaged = document
    let position = Int(random.next() % UInt64(damaged.count))
    let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
    switch random.next() % (mayCut ? 4 : 3) {
    case 0: damaged[position] = byte
    case 1: damaged.remove(at: position)
    case 2: damaged.insert(byte, at: position)
    default: damaged.removeSubrange(position...)
    }
    return damaged
  }

  private static func generateValue(
    into document: inout [UInt8], depth: Int, keys: [String], random: inout SplitMix
  ) {
    let strings = [
      "s1", "simulate", "1ms", "", "a much longer string than sixteen bytes", "ünïcödé", "tab\\t",
      "\\ud83d\\ude80", "exactly16bytes!!", "fifteen-bytes..", "seventeen-bytes!!",
    ]
    let numbers = ["0", "-0", "12", "-3.25", "1e3", "2E-2", "9007199254740993", "0.5"]
    if depth < 5, random.next() % 3 == 0 {
      let count = Int(random.next() % 5)
      let isObject = random.next() % 2 == 0
      document += Array((isObject ? "{" : "[").utf8)
      for index in 0..<count {
        if index > 0 { document += Array((random.next() % 2 == 0 ? "," : " , ").utf8) }
        if isObject {
          document += Array("\"\(keys[Int(random.next() % UInt64(keys.count))])\":".utf8)
        }
        generateValue(into: &document, depth: depth + 1, keys: keys, random: &random)
      }
      document += Array((isObject ? "}" : "]").utf8)
      return
    }
    switch random.next() % 4 {
    case 0: document += Array("\"\(strings[Int(random.next() % UInt64(strings.count))])\"".utf8)
    case 1: document += Array(numbers[Int(random.next() % UInt64(numbers.count))].utf8)
    case 2: document += Array(["true", "false", "null"][Int(random.next() % 3)].utf8)
    default: document += Array("\"s\(random.next() % 1000)\"".utf8)
    }
  }
}
