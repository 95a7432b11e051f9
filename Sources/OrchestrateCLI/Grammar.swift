/// Counts in summaries, with the noun agreeing: "1 step", "2 steps".
enum Grammar {
  /// `count` and `noun`, plural unless `count` is 1; `plural` for nouns not made with "s".
  static func count(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
  }
}
