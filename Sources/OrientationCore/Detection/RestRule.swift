#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The newest raw samples' up vectors, and whether they show the device at rest (detection.md,
/// rule 4): each close to gravity's length and agreeing in direction, so that direction *is*
/// gravity. A ring: a 200 ms window at up to 600 Hz; faster sensors get a shorter window of
/// ``capacity`` samples.
struct RestWindow: Sendable {
    static let capacity = 128

    /// A rest the newest samples show: their mean up vector, and whether a landing's jolt was
    /// excused in it.
    struct Rest {
        var mean: Vector3
        var excusedJolt: Bool
    }

    private let gravity: Double
    private let settings: DetectorConfiguration.Rest
    private let cosSpread: Double
    private let accelerationTolerance: Double
    private var times = [Double](repeating: 0, count: capacity)
    private var vectors = [Vector3](repeating: .zero, count: capacity)
    private var count = 0
    private var next = 0

    init(configuration: DetectorConfiguration) {
        gravity = configuration.gravity
        settings = configuration.rest
        cosSpread = cos(configuration.rest.spread * .pi / 180)
        accelerationTolerance = configuration.estimate.accelerationTolerance
    }

    mutating func record(_ up: Vector3, at time: Double) {
        times[next] = time
        vectors[next] = up
        next = (next + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
    }

    /// Forgets every sample: those from before a gap prove nothing about now.
    mutating func clear() {
        count = 0
        next = 0
    }

    /// The rest of the newest samples over `span` seconds, if they show one: at least
    /// `minimumSamples` (default `rest-minimum-samples`) samples reaching back `span` (to within a
    /// quarter of `period`, ``waitIsOver(_:for:period:)``; exactly, and from distinct readings, with
    /// `strictSpan`), each within `magnitudeTolerance` (default `rest-magnitude-tolerance`) of
    /// gravity and within the spread (default `rest-spread`, as its cosine) of their mean direction.
    ///
    /// `joltTime`: samples off gravity's length by no more than `acceleration-tolerance`, spanning at
    /// most this long, are a landing's jolt when they point with the rest; they are left out of the
    /// mean and the rest says so. One pass serves both the strict test and the excusing one.
    func rest(
        over span: Double, period: Double, minimumSamples: Int? = nil, cosSpread: Double? = nil,
        magnitudeTolerance: Double? = nil, joltTime: Double? = nil, strictSpan: Bool = false
    ) -> Rest? {
        let minimumSamples = minimumSamples ?? settings.minimumSamples
        let magnitudeTolerance = magnitudeTolerance ?? settings.magnitudeTolerance
        let newest = (next - 1 + Self.capacity) % Self.capacity
        let newestTime = times[newest]
        var sum = Vector3.zero
        var taken = 0
        var examined = 0
        var newestJolt: Double?
        // With `strictSpan` (the start-up) the span ends at the first read of the newest reading, and
        // a reading equal to the next newer one counts once: a polled sensor read again before its
        // next sample returns the same reading, and one sample read twice is one measurement, however
        // far apart the reads (a flick's far pose, read twice, would otherwise pass for rest).
        var spanEnd = newestTime
        var newer: Vector3?
        var index = newest
        while true {
            if examined == count {
                // History does not reach back `span`: too early after (re)priming, unless the ring is
                // full because the sensor is fast, in which case its samples are plenty. Not for the
                // start-up: its repeats are skipped, so a full ring may hold only two readings.
                guard count == Self.capacity, !strictSpan else { return nil }
                break
            }
            let vector = vectors[index]
            let time = times[index]
            examined += 1
            let offGravity = abs(vector.magnitude - gravity)
            if offGravity > magnitudeTolerance {
                guard let joltTime, offGravity <= accelerationTolerance, (newestJolt ?? time) - time <= joltTime
                else { return nil }
                if newestJolt == nil { newestJolt = time }
            } else if strictSpan, vector == newer {
                if taken == 1 { spanEnd = time }
                index = (index - 1 + Self.capacity) % Self.capacity
                continue
            } else {
                sum = sum + vector
                taken += 1
            }
            newer = vector
            let spanned = strictSpan ? spanEnd - time >= span : waitIsOver(newestTime - time, for: span, period: period)
            if taken >= minimumSamples, spanned { break }
            index = (index - 1 + Self.capacity) % Self.capacity
        }
        guard taken >= minimumSamples else { return nil }
        let mean = (1 / Double(taken)) * sum
        let meanMagnitude = mean.magnitude
        let cosSpread = cosSpread ?? self.cosSpread
        index = newest
        for _ in 0..<examined {
            let vector = vectors[index]
            if vector.dot(mean) < cosSpread * vector.magnitude * meanMagnitude { return nil }
            index = (index - 1 + Self.capacity) % Self.capacity
        }
        return Rest(mean: mean, excusedJolt: newestJolt != nil)
    }
}

/// At rest, the samples' mean is gravity: a new orientation beyond the band is taken at once
/// (detection.md, rule 4). The latency of a step change without trusting a single sample.
/// Its parameters are the rest test's (``RestWindow``).
struct RestRule: Sendable {
    /// The orientation the rest `rest` asks for from `current`, or nil. A jolt is excused only on
    /// the way to a face state (a device laid on a surface lands), which needs the face rule's
    /// longer rest too; a measured turn heading out of the candidate is no rest (turned about its
    /// own centre, a device's accelerometer reads gravity alone, and agrees with itself near a
    /// flick's far pose).
    func candidate(
        rest: RestWindow.Rest?, from current: DeviceOrientation, bands: OrientationBands, face: FaceRule,
        window: RestWindow, period: Double, estimate: GravityEstimate
    ) -> DeviceOrientation? {
        guard let rest, let candidate = bands.classify(rest.mean, from: current), candidate != current else {
            return nil
        }
        if rest.excusedJolt, !candidate.isFlat { return nil }
        if candidate.isFlat,
            !face.confirmsRest(
                candidate, window: window, period: period, bands: bands, from: current, estimate: estimate)
        {
            return nil
        }
        if let heading = estimate.turn?.heading, bands.turnLeaves(candidate, to: heading, from: current) { return nil }
        return candidate
    }
}
