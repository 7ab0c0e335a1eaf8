#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import OrientationCore

/// Declares an accelerometer axis, or its whole reading, frozen only on physical evidence that the
/// device's motion cannot explain (docs/sensors.md, "Frozen readings"). Pure: time is an input.
///
/// Why not constancy: a value that holds still is what working sensors do. HID sensor hubs report an
/// axis only when it changes by more than their sensitivity, 6- and 8-bit parts sit on one count, and
/// a device turned in its own plane (a kiosk on a rotating mount, a tablet in a kickstand) keeps the
/// axis normal to that plane still by physics. So constancy only says which axes *could* be frozen;
/// the evidence is gravity's length:
///
/// * **Rests.** A still device reads gravity, and gravity has one length. A *rest* is a span of
///   `restSpan` seconds (at least two readings) in which every reading lies within `restSpread`
///   degrees and `restMagnitudeSpread` of the span's first; its length is that of the mean vector.
///   A working sensor's rests all read the same length within its envelope: calibration (a few %),
///   quantisation (≤ 4.1 % at 6 bits), an HID hub's change sensitivity (≤ 8.7 % at 0.05 g per axis)
///   and a steady acceleration (a car's 0.5 g turn reads 12 % long) stay inside ±15 %, so two of its
///   rests never differ by a factor of more than 1.15 / 0.85 = 1.353.
/// * **A contradiction** is a rest whose length differs from an earlier rest's by
///   `contradictionRatio` (1.4) or more: no working sensor produces it, in any pose or plane, at any
///   resolution, because the bound above holds whatever the direction.
/// * **A frozen axis** is what explains a contradiction when that axis has held one raw value since
///   before the earlier rest began, *and* the other two axes alone read no more than gravity (at most
///   `1 + envelope` times the earlier rest): a frozen axis leaves the others true, so they can never
///   exceed gravity. A steady acceleration, which makes a reading long by adding to the other axes,
///   fails that test, so a car braking with one axis held still is no evidence.
/// * **A frozen reading** explains a contradiction when all three axes have held their values since
///   before the rest began: the reading is a rest, and a rest reads gravity.
///
/// Evidence must repeat, in a row: `axisEvidence` contradicting rest spans (seconds of stillness)
/// for an axis, `readingEvidence` for the whole reading. A rest that gravity explains ends it (and
/// is kept as a reference; a contradicting one is not), and so does any change of a frozen axis (any
/// axis, for a frozen reading): the fault ends with the evidence. Five seconds in a row is longer
/// than a vehicle brakes or accelerates hard enough to look like one (100 km/h at 0.8 g stops in
/// 3.5 s), and the whole reading, which has no such test of the other axes, waits ten.
public struct FrozenReadingDetector: Sendable {
    /// The rule's parameters; the defaults are the ones docs/sensors.md derives.
    public struct Configuration: Sendable, Hashable {
        public var restSpan = 1.0
        public var restSpread = 5.0
        public var restMagnitudeSpread = 0.05
        /// A working sensor's rests stay within ±`envelope` of its gravity.
        public var envelope = 0.15
        /// Two rests this many times apart in length cannot both be gravity (> 1.15 / 0.85).
        public var contradictionRatio = 1.4
        /// Contradicting rest spans in a row that declare an axis frozen: five seconds of rest, longer
        /// than a car can brake hard (100 km/h at 0.8 g stops in 3.5 s).
        public var axisEvidence = 5
        /// Contradicting rest spans in a row that declare the whole reading frozen.
        public var readingEvidence = 10

        public init() {}
    }

    /// A change of the frozen states, as the fault to report or end.
    public enum Change: Sendable, Equatable {
        /// ``SensorFault/Kind/axisStuck`` or ``SensorFault/Kind/stuck``, with what was measured.
        case frozen(SensorFault.Kind, String)
        case thawed(SensorFault.Kind)
    }

    /// A rest kept as a reference: when it began and ended, and the length it read.
    private struct Rest {
        var start: Double
        var end: Double
        var length: Double
    }

    public let configuration: Configuration
    private let cosRestSpread: Double
    private static let referenceCapacity = 16
    private static let axisNames = ["x", "y", "z"]

    // Per axis: the raw value it holds, since when, and the contradicting rest spans since then.
    private var axisValue = SIMD3<Double>(repeating: .nan)
    private var axisSince = SIMD3<Double>(repeating: -.infinity)
    private var axisCount = SIMD3<Int>(repeating: 0)
    private var frozenAxes = SIMD3<Int>(repeating: 0)  // 1 where frozen
    private var readingCount = 0
    private var readingFrozen = false
    // The rest span being gathered.
    private var windowStart = 0.0
    private var windowFirst = Vector3.zero
    private var windowFirstLength = 0.0
    private var windowSum = Vector3.zero
    private var windowCount = 0
    private var rests: [Rest] = []

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        cosRestSpread = cos(configuration.restSpread * .pi / 180)
        rests.reserveCapacity(Self.referenceCapacity)
    }

    /// True while an axis is frozen: its readings point the wrong way.
    public var isAxisFrozen: Bool { frozenAxes.max() > 0 }
    /// True while the whole reading is frozen at a length that is not gravity.
    public var isReadingFrozen: Bool { readingFrozen }

    /// Feeds one reading: `raw` as the device gave it (constancy is judged bit for bit) and
    /// `reading`, the same in consistent units ((raw + offset) × scale), taken at `time`. Returns the
    /// changes of the frozen states (none almost always).
    public mutating func observe(raw: Vector3, reading: Vector3, at time: Double) -> [Change] {
        var changes: [Change] = []
        let rawValue = SIMD3(raw.x, raw.y, raw.z)
        let wasAxisFrozen = isAxisFrozen
        var anyChanged = false
        for axis in 0..<3 where rawValue[axis] != axisValue[axis] {
            axisValue[axis] = rawValue[axis]
            axisSince[axis] = time
            axisCount[axis] = 0
            frozenAxes[axis] = 0
            anyChanged = true
        }
        if anyChanged {
            readingCount = 0
            if readingFrozen {
                readingFrozen = false
                changes.append(.thawed(.stuck))
            }
        }
        if wasAxisFrozen, !isAxisFrozen { changes.append(.thawed(.axisStuck)) }
        if let completed = gather(reading, at: time) { changes += judge(completed.rest, mean: completed.mean) }
        return changes
    }

    /// Adds a reading to the rest span; returns the span when it completes.
    private mutating func gather(_ reading: Vector3, at time: Double) -> (rest: Rest, mean: Vector3)? {
        let length = reading.magnitude
        guard reading.isFinite, length > 0 else {
            windowCount = 0
            return nil
        }
        let still =
            windowCount > 0 && time >= windowStart
            && abs(length - windowFirstLength) <= configuration.restMagnitudeSpread * windowFirstLength
            && reading.dot(windowFirst) >= cosRestSpread * length * windowFirstLength
        guard still else {
            windowStart = time
            windowFirst = reading
            windowFirstLength = length
            windowSum = reading
            windowCount = 1
            return nil
        }
        windowSum = windowSum + reading
        windowCount += 1
        guard time - windowStart >= configuration.restSpan else { return nil }
        let mean = (1 / Double(windowCount)) * windowSum
        let rest = Rest(start: windowStart, end: time, length: mean.magnitude)
        // The next span starts at this reading, so a long rest is judged once per span.
        windowStart = time
        windowFirst = reading
        windowFirstLength = length
        windowSum = reading
        windowCount = 1
        return (rest, mean)
    }

    /// Weighs a completed rest span against the earlier rests. A span that is evidence counts for the
    /// axes (or the reading) it incriminates; one that is not ends the evidence, and becomes a reference.
    private mutating func judge(_ rest: Rest, mean: Vector3) -> [Change] {
        var credited = SIMD3<Int>(repeating: 0)
        var contradicted = false
        let squared = rest.length * rest.length
        let held = SIMD3(mean.x, mean.y, mean.z)
        for earlier in rests where earlier.end < rest.start {
            let ratio = max(rest.length, earlier.length) / min(rest.length, earlier.length)
            guard ratio >= configuration.contradictionRatio else { continue }
            contradicted = true
            let limit = (1 + configuration.envelope) * earlier.length
            for axis in 0..<3 where axisSince[axis] <= earlier.start {
                // The others alone must fit within gravity for this axis to be the frozen one.
                if max(0, squared - held[axis] * held[axis]).squareRoot() <= limit { credited[axis] = 1 }
            }
        }
        // A frozen axis explains the contradiction when one is credited; the whole reading otherwise.
        let readingCredited = contradicted && credited.max() == 0 && axisSince.max() <= rest.start
        var changes: [Change] = []
        let wasAxisFrozen = isAxisFrozen
        var newlyFrozen: [Int] = []
        for axis in 0..<3 {
            guard credited[axis] == 1 else {
                axisCount[axis] = 0
                frozenAxes[axis] = 0
                continue
            }
            axisCount[axis] += 1
            if frozenAxes[axis] == 0, axisCount[axis] >= configuration.axisEvidence {
                frozenAxes[axis] = 1
                newlyFrozen.append(axis)
            }
        }
        if !wasAxisFrozen, !newlyFrozen.isEmpty {
            changes.append(.frozen(.axisStuck, axisDetail(newlyFrozen, rest: rest)))
        } else if wasAxisFrozen, !isAxisFrozen {
            changes.append(.thawed(.axisStuck))
        }
        if readingCredited {
            readingCount += 1
            if !readingFrozen, readingCount >= configuration.readingEvidence {
                readingFrozen = true
                changes.append(.frozen(.stuck, readingDetail(rest: rest)))
            }
        } else {
            readingCount = 0
            if readingFrozen {
                readingFrozen = false
                changes.append(.thawed(.stuck))
            }
        }
        // Only a rest that is no evidence stands for gravity later.
        if credited.max() == 0, !readingCredited { remember(rest) }
        return changes
    }

    /// Keeps a rest as a reference; a span that continues the last rest at the same length extends it.
    private mutating func remember(_ rest: Rest) {
        if var last = rests.last, last.end == rest.start,
            abs(rest.length - last.length) <= configuration.restMagnitudeSpread * last.length
        {
            last.end = rest.end
            rests[rests.count - 1] = last
            return
        }
        if rests.count == Self.referenceCapacity { rests.removeFirst() }
        rests.append(rest)
    }

    /// The gravity the contradiction was measured against: the earlier rest that differs most.
    private func reference(for rest: Rest) -> Double {
        rests.filter { $0.end < rest.start }.map(\.length)
            .max { abs(log($0 / rest.length)) < abs(log($1 / rest.length)) } ?? rest.length
    }

    private func axisDetail(_ axes: [Int], rest: Rest) -> String {
        let names = axes.map { Self.axisNames[$0] }
        let which = names.count == 1 ? "the \(names[0]) axis has" : "the \(names.joined(separator: " and ")) axes have"
        let values = axes.map { "\(axisValue[$0] + 0)" }.joined(separator: ", ")  // -0.0 reads as 0.0
        let gravity = reference(for: rest)
        return "\(which) read \(values) since before a rest that read \(Self.format(gravity)) long; "
            + "at rest now the reading is \(Self.format(rest.length)) long (\(Self.format(rest.length / gravity)) of "
            + "it) for "
            + "\(configuration.axisEvidence) s: only a frozen axis explains it (a working one would have changed)"
    }

    private func readingDetail(rest: Rest) -> String {
        let gravity = reference(for: rest)
        let raw = Vector3(axisValue[0], axisValue[1], axisValue[2])
        return "the reading \(raw) has not changed for \(configuration.readingEvidence) s of rest and is "
            + "\(Self.format(rest.length / gravity)) times the length of gravity at an earlier rest: a frozen sensor "
            + "(a device at rest reads gravity)"
    }

    private static func format(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return "\(rounded)"
    }
}
