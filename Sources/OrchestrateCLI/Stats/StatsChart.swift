import Foundation

/// The chart `stats --svg` writes: for each milestone, one box plot per group on a time axis
/// shared by every milestone, labelled so that it reads without the docs. Plain SVG, no
/// scripts or fonts, for a browser or a pull request.
struct StatsChart {
  let summary: StatsSummary

  private static let width = 960.0
  private static let labelWidth = 190.0
  private static let countWidth = 110.0
  private static let rowHeight = 26.0
  private static let palette = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
  ]

  /// One box: p10, p25, p50, p75, p90, p99 and the count.
  private struct Box {
    var label: String
    var values: [Double]
    var count: Int
    var estimated: Bool
  }

  var svg: String {
    let groups: [(label: String, group: StatsGroup)] =
      summary.grouping == nil
      ? [("all", summary.stats.all)]
      : summary.groupNames.map { ($0, summary.stats.groups[$0]!) }
    let panels: [(name: String, boxes: [Box])] = summary.stats.all.orderedMilestones.map {
      name, _ in
      let boxes = groups.compactMap { label, group -> Box? in
        guard let series = group.milestones[name]?.times, series.count > 0 else { return nil }
        let values = series.values(atPercentiles: [10, 25, 50, 75, 90, 99]).map { $0 ?? 0 }
        return Box(label: label, values: values, count: series.count, estimated: !series.isExact)
      }
      return (name, boxes)
    }
    let top = panels.flatMap { $0.boxes.map { $0.values[5] } }.max() ?? 0
    let (axisEnd, tick) = Self.axis(upTo: top)
    let plotLeft = Self.labelWidth
    let plotRight = Self.width - Self.countWidth
    func x(_ seconds: Double) -> Double {
      plotLeft + min(seconds, axisEnd) / axisEnd * (plotRight - plotLeft)
    }
    let by = summary.grouping.map { " by \($0.rawValue)" } ?? ""
    var body = ""
    var y = 30.0
    body += Self.text(
      "Launch milestones\(by): \(summary.stats.all.reports) reports", x: 16, y: y, size: 18,
      weight: "bold")
    y += 22
    body += Self.text(
      "Seconds from the launch's start. Box: the middle half of launches (p25 to p75); bar: median (p50); whiskers: p10 to p90; dot: p99.",
      x: 16, y: y, size: 12, fill: "#444")
    y += 18
    let axisTop = y + 10
    for (name, boxes) in panels {
      y += 26
      body += Self.text(Self.shortened(name, to: 100), x: 16, y: y, size: 14, weight: "bold")
      y += 8
      if boxes.isEmpty {
        y += Self.rowHeight
        body += Self.text("never reached", x: plotLeft, y: y - 8, size: 12, fill: "#888")
      }
      for (index, box) in boxes.enumerated() {
        let color = Self.palette[
          (summary.grouping == nil ? 0 : groups.firstIndex { $0.label == box.label } ?? index)
            % Self.palette.count]
        let middle = y + Self.rowHeight / 2
        let v = box.values.map(x)
        // The label column is 190 points wide: a longer label is cut, whole in the tooltip.
        body += Self.text(Self.shortened(box.label), x: 28, y: middle + 4, size: 12)
        body += Self.line(v[0], middle, v[4], middle, stroke: color)
        body += Self.line(v[0], middle - 6, v[0], middle + 6, stroke: color)
        body += Self.line(v[4], middle - 6, v[4], middle + 6, stroke: color)
        body +=
          "<rect x=\"\(Self.f(v[1]))\" y=\"\(Self.f(middle - 8))\" width=\"\(Self.f(max(1, v[3] - v[1])))\" height=\"16\" fill=\"\(color)\" fill-opacity=\"0.35\" stroke=\"\(color)\"><title>\(Self.escaped(Self.shortened(box.label, to: 200))): p10 \(Self.seconds(box.values[0])), p25 \(Self.seconds(box.values[1])), p50 \(Self.seconds(box.values[2])), p75 \(Self.seconds(box.values[3])), p90 \(Self.seconds(box.values[4])), p99 \(Self.seconds(box.values[5]))</title></rect>\n"
        body += Self.line(v[2], middle - 8, v[2], middle + 8, stroke: "#222", width: 2.5)
        body +=
          "<circle cx=\"\(Self.f(v[5]))\" cy=\"\(Self.f(middle))\" r=\"3\" fill=\"\(color)\" stroke=\"#222\" stroke-width=\"0.5\"/>\n"
        body += Self.text(
          "n=\(box.count)\(box.estimated ? " ~" : "") · p50 \(Self.seconds(box.values[2]))",
          x: plotRight + 8, y: middle + 4, size: 11, fill: "#444")
        y += Self.rowHeight
      }
    }
    y += 12
    // The shared time axis: grid lines through every panel, labels at the bottom.
    var axis = ""
    for value in stride(from: 0.0, through: axisEnd + tick / 2, by: tick) {
      let position = x(value)
      axis += Self.line(position, axisTop, position, y, stroke: "#ddd")
      axis += Self.text(
        Self.seconds(value, decimals: tick < 0.01 ? 3 : tick < 0.1 ? 2 : 1), x: position, y: y + 16,
        size: 11, anchor: "middle", fill: "#444")
    }
    axis += Self.line(plotLeft, y, plotRight, y, stroke: "#888")
    axis += Self.text(
      "time since the launch started", x: (plotLeft + plotRight) / 2, y: y + 34, size: 12,
      anchor: "middle", fill: "#444")
    let height = y + 50
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" viewBox="0 0 \(Int(Self.width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
      <rect width="100%" height="100%" fill="white"/>
      \(axis)\(body)</svg>

      """
  }

  /// The axis end and tick: a 1, 2 or 5 step that gives four to ten ticks up to `top`.
  private static func axis(upTo top: Double) -> (end: Double, tick: Double) {
    guard top > 0 else { return (1, 0.2) }
    let raw = top / 6
    let magnitude = pow(10, (log10(raw)).rounded(.down))
    let tick = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    return ((top / tick).rounded(.up) * tick, tick)
  }

  private static func seconds(_ value: Double, decimals: Int = 3) -> String {
    String(format: "%.\(decimals)fs", value)
  }

  /// `text`, cut to `limit` characters with an ellipsis.
  static func shortened(_ text: String, to limit: Int = 24) -> String {
    text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
  }

  private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

  private static func line(
    _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1.5
  ) -> String {
    "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(width)\"/>\n"
  }

  private static func text(
    _ content: String, x: Double, y: Double, size: Int, anchor: String = "start",
    weight: String = "normal", fill: String = "#111"
  ) -> String {
    "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"\(fill)\">\(escaped(content))</text>\n"
  }

  /// Text as XML needs it: a step or group name may hold `<` or `&`.
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      default:
        // Control characters are not allowed in XML 1.0.
        if character.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\t" }) {
          result.append(character)
        }
      }
    }
    return result
  }
}
