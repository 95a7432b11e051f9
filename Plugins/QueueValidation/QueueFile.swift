import Foundation
import LaunchJSON
import LaunchOrchestrator

/// The app's side of the queue file that `queue.validate` validates: writes it the way a
/// launch expects, so that an entry appended while a launch validates the queue is never lost.
///
/// Each change holds the queue's write lock and replaces the file whole (see ``SharedFile``):
/// `queue.validate` rewrites the queue only when it is still exactly the file it judged,
/// under the same lock, so an append lands either before its judgement (and is judged) or
/// after its rewrite (and is kept).
///
/// ```swift
/// let queue = QueueFile(url: data.appendingPathComponent("enrichment.json"))
/// try queue.append([Enrichment(workId: 42, source: "isbn")])
/// ```
public struct QueueFile: Sendable {
  /// The queue file, as the manifest's `queue.validate` step names it.
  public let url: URL

  /// The queue at `url`.
  public init(url: URL) {
    self.url = url
  }

  /// Appends `entries` (each encodes as a JSON object with an integer `workId`), keeping
  /// every byte already in the queue; creates the queue when there is none. Through a symbolic
  /// link, writes the file the link leads to, creating it when there is none (in a folder
  /// that exists): the link stays.
  ///
  /// - Throws: ``StepFailure`` naming the file when an entry is not such an object, when the
  ///   queue is not a JSON array (it is left as it was), or when it cannot be written.
  public func append<Entry: Encodable>(_ entries: [Entry]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    var texts: [[UInt8]] = []
    for entry in entries {
      let encoded = Array(try encoder.encode(entry))
      guard let object = try? JSONParser.parse(encoded).root, object["workId"] != nil else {
        throw StepFailure(
          "cannot append to the queue '\(url.path)': \(Entry.self) does not encode as an object"
            + " with a 'workId', so the queue was left as it was")
      }
      texts.append(encoded)
    }
    try update { bytes in
      guard let elements = try? JSONParser.parse(bytes).root.elements,
        let close = bytes.lastIndex(of: UInt8(ascii: "]"))
      else {
        throw StepFailure(
          "cannot append to the queue '\(url.path)': it is not a JSON array, so it was left as it"
            + " was; the next launch moves it aside")
      }
      var output = Array(bytes[..<close])
      while let last = output.last, [0x20, 0x0A, 0x0D, 0x09].contains(last) { output.removeLast() }
      for (index, text) in texts.enumerated() {
        output += (elements.isEmpty && index == 0 ? Array("\n  ".utf8) : Array(",\n  ".utf8)) + text
      }
      output += Array("\n".utf8) + bytes[close...]
      return output
    }
  }

  /// Replaces the whole queue with `data`, holding the queue's write lock.
  ///
  /// - Throws: ``StepFailure`` naming the file when it cannot be written.
  public func replace(with data: Data) throws {
    try update { _ in Array(data) }
  }

  /// Reads the queue (`[]` when there is none), and writes what `change` makes of it, holding
  /// the write lock throughout.
  private func update(_ change: ([UInt8]) throws -> [UInt8]) throws {
    // Through a link to nothing the queue is created where the link leads, as a save of the
    // app's state is (`queue.validate` may have moved an unreadable target aside).
    let file = try SafeFiles.checkReplaceable(url, creatingLinkTarget: true)
    let shared = SharedFile(url: file)
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    // The app's write waits for its turn even from a task that was cancelled: the work it
    // queues is kept.
    try shared.withWriteLock(stopsWhenCancelled: false) {
      let snapshot = try shared.read(limit: QueueValidationStep.maximumSize)
      let bytes = snapshot.exists ? Array(snapshot.bytes ?? Data()) : Array("[]\n".utf8)
      if snapshot.exists, snapshot.bytes == nil {
        throw StepFailure(
          "cannot append to the queue '\(url.path)': it is over the"
            + " \(QueueValidationStep.maximumSize)-byte limit, so it was left as it was")
      }
      try SafeFiles.writeAtomically(Data(try change(bytes)), to: file)
    }
  }
}
