import Foundation
import OrientationCore

/// One labelled interval of a corpus trace (`NAME.labels.json`).
public struct LabelInterval: Sendable, Decodable, Hashable {
    public var start: Double
    public var end: Double
    public var expected: DeviceOrientation
    public var acceptable: [DeviceOrientation]
    /// Absent in the file means "settled when only one orientation is acceptable".
    public var settled: Bool

    /// True for intervals that `--upright-only` turned from flat into unsettled ones.
    var settledFlat = false

    enum CodingKeys: String, CodingKey { case start, end, expected, acceptable, settled }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        start = try container.decode(Double.self, forKey: .start)
        end = try container.decode(Double.self, forKey: .end)
        expected = try container.decode(DeviceOrientation.self, forKey: .expected)
        acceptable = try container.decode([DeviceOrientation].self, forKey: .acceptable)
        settled = try container.decodeIfPresent(Bool.self, forKey: .settled) ?? (acceptable.count == 1)
    }

    init(
        start: Double, end: Double, expected: DeviceOrientation, acceptable: [DeviceOrientation], settled: Bool,
        settledFlat: Bool
    ) {
        self.start = start
        self.end = end
        self.expected = expected
        self.acceptable = acceptable
        self.settled = settled
        self.settledFlat = settledFlat
    }
}

/// A labelled transition and how the detector did on it.
public struct ScoredTransition: Sendable, Hashable {
    public var at: Double
    public var from: DeviceOrientation
    public var to: DeviceOrientation
    public var isStartup: Bool
    public var missed: Bool
    /// Seconds from the start of the settled interval to the first report of `to`, floored at 0;
    /// nil when missed.
    public var latency: Double?
}

/// A change to an orientation that was not acceptable, or away from a settled expectation.
public struct FalseChange: Sendable, Hashable {
    public var time: Double
    public var to: DeviceOrientation
    public var expected: DeviceOrientation
    public var reason: String
}

/// A change undone within ``CorpusScorer/takenBackWithin`` while the labelled expectation stayed the
/// same: the screen turned and turned back, the one mistake a user always sees.
public struct TakenBack: Sendable, Hashable {
    public var time: Double
    public var to: DeviceOrientation
    /// When the state returned to where the change left.
    public var back: Double
    public var expected: DeviceOrientation
}

/// The metrics of `Tests/Fixtures/corpus/score.py` for one trace, computed the same way.
public struct TraceScore: Sendable {
    public var transitions: [ScoredTransition]
    public var falseChanges: [FalseChange]
    public var takenBack: [TakenBack]
    public var settledSeconds: Double
    public var wrongSeconds: Double
    public var changesWhileFlat: Int
    public var changeCount: Int

    /// Latencies of the non-startup transitions that were reached.
    public var latencies: [Double] {
        transitions.filter { !$0.isStartup && !$0.missed }.compactMap(\.latency)
    }
    public var startupLatency: Double? {
        transitions.first { $0.isStartup && !$0.missed }?.latency
    }
    public var transitionCount: Int { transitions.filter { !$0.isStartup }.count }
    public var missedCount: Int { transitions.filter(\.missed).count }
    public var errorPercent: Double { settledSeconds > 0 ? 100 * wrongSeconds / settledSeconds : 0 }
}

/// The scorer: state changes from detector events against interval labels (corpus README, "Metrics").
public enum CorpusScorer {
    static let flat: Set<DeviceOrientation> = [.faceUp, .faceDown]
    static let upright: [DeviceOrientation] = [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight]
    /// Seconds: a change undone this soon, the labels unchanged meanwhile, was taken back.
    public static let takenBackWithin = 1.0

    /// Scores `events` (time, orientation; any order, repeats allowed) against `labels`.
    ///
    /// - Parameter uprightOnly: score only the four upright orientations, for detectors without
    ///   face states (score.py `--upright-only`).
    public static func score(
        events: [(time: Double, orientation: DeviceOrientation)], labels: [LabelInterval], uprightOnly: Bool = false
    ) -> TraceScore {
        let labels = uprightOnly ? uprightView(labels) : labels
        var sortedEvents = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
        if uprightOnly { sortedEvents.removeAll { flat.contains($0.orientation) } }

        var changes: [(time: Double, old: DeviceOrientation, new: DeviceOrientation)] = []
        var state = DeviceOrientation.unknown
        for event in sortedEvents where event.orientation != state {
            changes.append((event.time, state, event.orientation))
            state = event.orientation
        }
        let times = changes.map(\.time)

        func stateAt(_ time: Double) -> DeviceOrientation {
            let index = upperBound(times, time)
            return index > 0 ? changes[index - 1].new : .unknown
        }

        let starts = labels.map(\.start)
        var falseChanges: [FalseChange] = []
        var flatChanges = 0
        guard let first = labels.first, let last = labels.last else {
            return TraceScore(
                transitions: [], falseChanges: [], takenBack: [], settledSeconds: 0, wrongSeconds: 0,
                changesWhileFlat: 0,
                changeCount: changes.count)
        }
        for change in changes {
            if change.time >= last.end || change.time < first.start { continue }
            let interval = labels[upperBound(starts, change.time) - 1]
            if interval.settledFlat { flatChanges += 1 }
            if !interval.acceptable.contains(change.new) {
                falseChanges.append(
                    FalseChange(
                        time: change.time, to: change.new, expected: interval.expected, reason: "not acceptable"))
            } else if interval.settled, change.old == interval.expected, change.new != change.old {
                falseChanges.append(
                    FalseChange(
                        time: change.time, to: change.new, expected: interval.expected, reason: "left settled expected")
                )
            }
        }

        // Changes to or from unknown (silence, the start) are not orientations shown.
        var takenBack: [TakenBack] = []
        for (index, change) in changes.enumerated()
        where change.old != .unknown && change.new != .unknown && change.time >= first.start
            && change.time < last.end
        {
            guard
                let back = changes[(index + 1)...].first(where: {
                    $0.time - change.time <= takenBackWithin && $0.new == change.old
                })?.time,
                back - change.time <= takenBackWithin
            else { continue }
            let span = labels[(upperBound(starts, change.time) - 1)...(upperBound(starts, back) - 1)]
            if Set(span.map(\.expected)).count == 1 {
                takenBack.append(
                    TakenBack(time: change.time, to: change.new, back: back, expected: span.first!.expected))
            }
        }

        var settledSeconds = 0.0
        var wrongSeconds = 0.0
        var transitions: [ScoredTransition] = []
        var previous = DeviceOrientation.unknown
        var previousEnd = first.start
        for interval in labels where interval.settled {
            let (start, end, expected) = (interval.start, interval.end, interval.expected)
            let points = [start] + times.filter { start < $0 && $0 < end } + [end]
            settledSeconds += end - start
            for (t0, t1) in zip(points, points.dropFirst()) where !interval.acceptable.contains(stateAt(t0)) {
                wrongSeconds += t1 - t0
            }
            if expected != previous {
                let reach: Double? =
                    stateAt(previousEnd) == expected
                    ? previousEnd
                    : changes.first { $0.time > previousEnd && $0.new == expected }?.time
                let missed = reach.map { $0 >= end } ?? true
                transitions.append(
                    ScoredTransition(
                        at: start, from: previous, to: expected, isStartup: previous == .unknown, missed: missed,
                        latency: missed ? nil : roundTo4(max(0, reach! - start))))
            }
            previous = expected
            previousEnd = end
        }
        return TraceScore(
            transitions: transitions, falseChanges: falseChanges, takenBack: takenBack, settledSeconds: settledSeconds,
            wrongSeconds: wrongSeconds, changesWhileFlat: flatChanges, changeCount: changes.count)
    }

    /// score.py's `upright_view`: flat intervals become unsettled and accept any upright orientation
    /// or the previous settled one; other flat options are replaced by the previous upright one.
    static func uprightView(_ labels: [LabelInterval]) -> [LabelInterval] {
        var result: [LabelInterval] = []
        var previous = DeviceOrientation.unknown
        func ordered(_ set: Set<DeviceOrientation>) -> [DeviceOrientation] {
            DeviceOrientation.allCases.filter(set.contains)
        }
        for interval in labels {
            var acceptable = interval.acceptable.filter { !flat.contains($0) }
            if flat.contains(interval.expected) {
                var copy = interval
                copy.acceptable = ordered(Set(upright).union([previous]).union(acceptable))
                copy.settled = false
                copy.settledFlat = interval.settled
                result.append(copy)
                continue
            }
            if acceptable.count < interval.acceptable.count {
                acceptable = ordered(Set(acceptable).union([previous]))
            }
            var copy = interval
            copy.acceptable = acceptable
            result.append(copy)
            if interval.settled { previous = interval.expected }
        }
        return result
    }

    /// Python's `bisect_right`.
    static func upperBound(_ values: [Double], _ value: Double) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if value < values[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Python's `round(x, 4)`, which rounds the exact binary value, as printf does. Scaling first
    /// does not: 0.11795 is stored just below the half-way point, but `0.11795 * 10_000` rounds to
    /// 1179.5 exactly, and half-even then gave 0.118 where score.py says 0.1179.
    static func roundTo4(_ value: Double) -> Double { Double(String(format: "%.4f", value)) ?? value }
}

/// numpy's `median` and `percentile` (linear interpolation).
public enum Statistics {
    public static func percentile(_ values: [Double], _ percent: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let position = Double(sorted.count - 1) * percent / 100
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    public static func median(_ values: [Double]) -> Double? { percentile(values, 50) }
}
