import Foundation

/// A screenshot the app has sorted: what the first screen lists, newest first.
public struct ScreenshotResult: Sendable, Equatable, Codable, Identifiable {
  /// Its id in the store: the id a restored scroll position names.
  public var id: Int64
  /// The screenshot's file, relative to the app's data folder.
  public var imagePath: String
  /// The label the app chose, such as `receipt`.
  public var label: String
  /// How sure the app was of the label, from 0 to 1.
  public var confidence: Double
  /// When it was sorted.
  public var sortedAt: Date
  /// The folder the user filed it into, if any.
  public var folder: String?

  /// Describes a result.
  public init(
    id: Int64, imagePath: String, label: String, confidence: Double, sortedAt: Date,
    folder: String? = nil
  ) {
    self.id = id
    self.imagePath = imagePath
    self.label = label
    self.confidence = confidence
    self.sortedAt = sortedAt
    self.folder = folder
  }
}
