/// Every tunable of ``OrientationDetector``, with the defaults argued in detection.md §9 and §13.
///
/// Angles are in degrees, times in seconds, accelerations in m/s². *Tilt* is the angle between the
/// screen plane and the horizontal: 0° standing upright, +90° lying face up, −90° face down.
public struct DetectorConfiguration: Sendable, Hashable {
    /// Standard gravity used by the magnitude gates.
    public var gravity: Double = 9.81
    /// Time constant of the first-order low-pass on the vector (Android: 100 ms too small, 500 ms too
    /// large).
    public var filterTimeConstant: Double = 0.2
    /// The filtered magnitude may differ from `gravity` by this much before the device counts as
    /// accelerating (shakes, impacts, braking).
    public var accelerationTolerance: Double = 4.0
    /// After the last accelerating or free-falling sample, the slow path accepts nothing for this long.
    public var accelerationHoldoff: Double = 0.5
    /// Below this filtered magnitude the device is falling and nothing is predicted.
    public var freeFallMagnitude: Double = 1.0
    /// Raw samples longer than this are glitches and are dropped (4 g; real ±2 g parts clip below it).
    public var maximumSampleMagnitude: Double = 4 * 9.81
    /// Dead zone between adjacent upright orientations: a neighbour is accepted only `gap / 2` past
    /// the diagonal between it and the current orientation, so holding near 45° never flaps.
    public var adjacentHysteresis: Double = 45.0
    /// Upright orientations are only recognised while tilt lies in this window (above it a device is
    /// nearly flat and the direction in the screen plane means little).
    public var uprightMaximumTilt: Double = 70.0
    /// Lower end of the upright window: screen facing down more than this gives no upright candidate.
    public var uprightMinimumTilt: Double = -25.0
    /// Held overhead: tilt at or below this locks upright changes...
    public var overheadEnterTilt: Double = -40.0
    /// ...until tilt rises to this again.
    public var overheadExitTilt: Double = -15.0
    /// faceUp/faceDown need |tilt| at least this...
    public var faceEnterTilt: Double = 75.0
    /// ...and, once entered, are left for an upright orientation only when |tilt| is below this.
    /// Between the two the current orientation holds: reading in bed stays portrait, a phone on an
    /// uneven table stays faceUp.
    public var faceExitTilt: Double = 65.0
    /// The filtered tilt must stay beyond `faceEnterTilt` this long before a face state is accepted
    /// on the slow path.
    public var faceDwell: Double = 0.3
    /// The slow path's candidate must stay the same this long before it is accepted.
    public var settleTime: Double = 0.08
    /// ...while the filtered direction moves less than this from where the candidate began; a
    /// filter still following a turn is not settled.
    public var settleDrift: Double = 5.0
    /// Fast path: the device counts as at rest when the raw samples of the last `restWindow`
    /// seconds (at least `restMinimumSamples` of them) all agree...
    public var restWindow: Double = 0.08
    public var restMinimumSamples: Int = 3
    /// ...within this angle of their mean direction...
    public var restSpread: Double = 5.0
    /// ...and each is within this of `gravity` in length.
    public var restMagnitudeTolerance: Double = 1.5
    /// A face state is accepted on the fast path only after this much rest (longer than
    /// `restWindow`, because a reclining reader's slow sway can briefly look like a rest near 75°).
    public var faceRestWindow: Double = 0.12
    /// A device laid on a table lands: the impact lengthens or shortens the reading for a sample or
    /// two (5–20 ms of contact) without turning it. For a face state, samples off gravity's length by
    /// at most `accelerationTolerance` that point with the rest (within `restSpread`) and span at
    /// most this long do not break the rest; they are left out of its mean (detection.md §17).
    public var faceJoltTime: Double = 0.03
    /// The dwell rule (detection.md §9.4, §15): a still pose past the *dwell line*, `45° + margin / 2`
    /// from the current upright orientation's axis (nearer the neighbour's axis than the current one
    /// by at least the margin, in the screen plane), becomes the neighbour even inside the
    /// `adjacentHysteresis` band. At rest (the fast path's rest test) the margin is this...
    public var dwellMargin: Double = 16.0
    /// ...and the pose must stay there, within `dwellDrift`, this long (on top of `restWindow`)...
    public var dwellTime: Double = 0.06
    /// ...counted from when the low-passed direction has caught up with the resting pose to within
    /// this: it trails a turn by the turn's speed times `filterTimeConstant`, so a pause at the end of
    /// a quick turn (a glance that comes back) ends before it agrees (detection.md §17)...
    public var dwellAgreement: Double = 8.0
    /// ...while the resting pose (the rest window's mean) stays within this of where the wait began.
    /// A held pose moves by tremor and noise, tenths of a degree; a hand that starts back from a
    /// pause still passes the rest test (5° of spread) for a few samples, and meets the trailing
    /// filter half way, which must not count as the filter catching up (detection.md §17).
    public var dwellDrift: Double = 2.0
    /// Moving (walking, carried: the raw samples never rest), the low-passed direction is judged,
    /// and it sways with each step, so the margin is larger (with a gyroscope the fused direction
    /// does not sway: `dwellMargin` serves)...
    public var dwellMovingMargin: Double = 20.0
    /// ...and the pose must stay past the diagonal this long, its mean past the line...
    public var dwellMovingTime: Double = 0.2
    /// ...and the low-passed direction must lie within this of that mean: a walk's sway (±3–5°)
    /// does, a turn that passes through the sector at 100°/s or more lies 10° or more ahead of the
    /// mean of its last 0.2 s, and is taken by the band or at rest, not here (detection.md §17).
    public var dwellMovingSpread: Double = 10.0
    /// Start-up: from `unknown`, two raw samples spanning at least this long decide at once when they
    /// agree within `startupSpread` and each lies within `startupMagnitudeTolerance` of gravity (else
    /// the fast path's rest decides). 15 ms: the second sample at 50 Hz even from a clock or a read a
    /// few milliseconds off, at 25 Hz the second sample as before; at 100–200 Hz the 15 ms still
    /// span three or four samples. Two distinct readings count: a polled sensor's reading read
    /// twice is one (detection.md §9.4, step 9).
    public var startupRestWindow: Double = 0.015
    /// ...within this angle of their mean: a resting device's samples agree within a few tenths of
    /// a degree (noise, tremor); 1.5° leaves room for a sensor four times as noisy.
    public var startupSpread: Double = 1.5
    /// ...and each this close to `gravity` in length (0.05 g): a bias or a scale error of a few
    /// percent passes, the bounce of a step (0.2–0.3 g) does not.
    public var startupMagnitudeTolerance: Double = 0.5
    /// With a gyroscope (detection.md §18) the direction judged is the fused gravity
    /// (``GravityFusion``), pulled toward the accelerometer with this time constant while the device
    /// moves: long enough that a step's or a flick's acceleration does not tilt it, short enough that
    /// a gyroscope's bias (up to 3 °/s before it is learned) leaves it no more than 1.5° off.
    public var gyroCorrectionTime: Double = 0.5
    /// With a gyroscope the slow path's candidate starts afresh whenever the device turns faster than
    /// this (°/s) *in a way that leaves it* (`gyroSettleHorizon`), instead of `settleDrift`: a flick
    /// reverses at its far pose (its rate crosses zero within milliseconds), a turn's end decelerates
    /// to rest.
    public var gyroSettleRate: Double = 30.0
    /// A turn faster than `gyroSettleRate` holds a decision back only if, continued at its rate for
    /// this long (s), it would carry the device out of the candidate: then it may be passing through
    /// or coming back. A smooth turn still has at most its rate × 0.27 × its duration to go, so 0.3 s
    /// covers turns of up to 1.1 s; a body lying down keeps turning at 30–120 °/s deep inside its new
    /// orientation for a second, which the rate alone took for a turn under way (detection.md §18).
    public var gyroSettleHorizon: Double = 0.3
    /// Still, for the gyroscope: turning slower than this (°/s, above a hand's sway and tremor).
    public var gyroStillRate: Double = 6.0
    /// With a gyroscope a slow-path candidate the device has come to rest in (still, for the
    /// gyroscope) settles after this long instead of `settleTime`: a glance's far pose is still for
    /// a few milliseconds at its turn (about 20 ms for 110° out in 0.4 s and back), a pose reached
    /// for as long as it is held.
    public var gyroStillSettleTime: Double = 0.04
    /// With a gyroscope the dwell rule at rest needs the device still this long, instead of
    /// `dwellAgreement` and `dwellTime`: longer than the pause of a glance that comes back.
    public var gyroDwellTime: Double = 0.2
    /// With a gyroscope the dwell rule in motion counts only the time the device turns (a walk
    /// never rests, a glance's pause does), and needs this much of it past the line.
    public var gyroMovingDwellTime: Double = 0.3
    /// A gap between samples longer than this re-primes the filter and forgets every candidate.
    public var gapReprime: Double = 1.0
    /// With no sample for this long the orientation becomes `unknown`.
    public var silenceTimeout: Double = 2.0

    public init() {}

    /// A parameter's name (as used by `--detector NAME=VALUE` and the configuration file), its unit,
    /// and a one-line explanation.
    public struct Parameter: Sendable {
        public let name: String
        public let unit: String
        /// The values it may take alone (``validate()`` also relates some parameters to others).
        public let range: ParameterRange
        public let summary: String
        let keyPath: (WritableKeyPath<DetectorConfiguration, Double> & Sendable)?
        let integerKeyPath: (WritableKeyPath<DetectorConfiguration, Int> & Sendable)?

        public func value(in configuration: DetectorConfiguration) -> Double {
            if let keyPath { return configuration[keyPath: keyPath] }
            return Double(configuration[keyPath: integerKeyPath!])
        }
    }

    private static func parameter(
        _ name: String, _ keyPath: WritableKeyPath<DetectorConfiguration, Double> & Sendable, _ unit: String,
        _ range: ParameterRange, _ summary: String
    ) -> Parameter {
        Parameter(name: name, unit: unit, range: range, summary: summary, keyPath: keyPath, integerKeyPath: nil)
    }

    /// Every parameter, in the order the documentation lists them.
    public static let parameters: [Parameter] = [
        parameter("gravity", \.gravity, "m/s²", .above(0), "standard gravity for the magnitude gates"),
        parameter("filter-time-constant", \.filterTimeConstant, "s", .above(0), "low-pass time constant"),
        parameter(
            "acceleration-tolerance", \.accelerationTolerance, "m/s²", .above(0),
            "filtered |a| may differ from gravity by this much"),
        parameter(
            "acceleration-holdoff", \.accelerationHoldoff, "s", .atLeast(0),
            "no slow-path change for this long after acceleration"),
        parameter(
            "free-fall-magnitude", \.freeFallMagnitude, "m/s²", .atLeast(0),
            "below this filtered |a| nothing is predicted"),
        parameter(
            "maximum-sample-magnitude", \.maximumSampleMagnitude, "m/s²", .above(0),
            "longer raw samples are dropped as glitches"),
        parameter(
            "adjacent-hysteresis", \.adjacentHysteresis, "°", .from(0, below: 90),
            "dead zone between adjacent upright orientations"),
        parameter(
            "upright-maximum-tilt", \.uprightMaximumTilt, "°", .above(0, upTo: 90),
            "upright orientations only below this tilt"),
        parameter(
            "upright-minimum-tilt", \.uprightMinimumTilt, "°", .from(-90, below: 0),
            "upright orientations only above this tilt"),
        parameter(
            "overhead-enter-tilt", \.overheadEnterTilt, "°", .from(-90, upTo: 90),
            "tilt at or below this locks upright changes"),
        parameter(
            "overhead-exit-tilt", \.overheadExitTilt, "°", .from(-90, upTo: 90), "tilt at or above this unlocks them"),
        parameter(
            "face-enter-tilt", \.faceEnterTilt, "°", .above(0, upTo: 90), "faceUp/faceDown need |tilt| at least this"),
        parameter(
            "face-exit-tilt", \.faceExitTilt, "°", .above(0, upTo: 90), "leave a face state only below this |tilt|"),
        parameter(
            "face-dwell", \.faceDwell, "s", .atLeast(0), "slow path: filtered tilt beyond face-enter-tilt this long"),
        parameter("settle-time", \.settleTime, "s", .atLeast(0), "slow path: candidate unchanged this long"),
        parameter(
            "settle-drift", \.settleDrift, "°", .above(0, below: 180),
            "slow path: filtered direction moves less than this meanwhile"),
        parameter("rest-window", \.restWindow, "s", .atLeast(0), "fast path: raw samples at rest this long"),
        Parameter(
            name: "rest-minimum-samples", unit: "samples",
            range: .from(2, upTo: Double(OrientationDetector.restCapacity)),
            summary: "fast path: at least this many samples at rest",
            keyPath: nil, integerKeyPath: \DetectorConfiguration.restMinimumSamples),
        parameter(
            "rest-spread", \.restSpread, "°", .above(0, below: 90), "fast path: samples within this angle of their mean"
        ),
        parameter(
            "rest-magnitude-tolerance", \.restMagnitudeTolerance, "m/s²", .above(0),
            "fast path: each |a| within this of gravity"),
        parameter(
            "face-rest-window", \.faceRestWindow, "s", .atLeast(0), "fast path: rest this long before a face state"),
        parameter(
            "face-jolt-time", \.faceJoltTime, "s", .atLeast(0), "fast path to a face state: a landing's jolt this short"
        ),
        parameter(
            "dwell-margin", \.dwellMargin, "°", .above(0, below: 90),
            "dwell rule at rest: this much nearer a neighbour's axis"),
        parameter(
            "dwell-time", \.dwellTime, "s", .atLeast(0), "dwell rule at rest: ...held this long after the rest window"),
        parameter(
            "dwell-agreement", \.dwellAgreement, "°", .above(0, below: 90),
            "dwell rule at rest: filtered pose this near the resting one"),
        parameter(
            "dwell-drift", \.dwellDrift, "°", .above(0, below: 180),
            "dwell rule at rest: resting pose moves less than this"),
        parameter(
            "dwell-moving-margin", \.dwellMovingMargin, "°", .above(0, below: 90),
            "dwell rule moving: the margin for the low-passed pose"),
        parameter("dwell-moving-time", \.dwellMovingTime, "s", .atLeast(0), "dwell rule moving: ...held this long"),
        parameter(
            "dwell-moving-spread", \.dwellMovingSpread, "°", .above(0, upTo: 180),
            "dwell rule moving: ...and now this near its mean"),
        parameter(
            "startup-rest-window", \.startupRestWindow, "s", .atLeast(0),
            "from unknown: two distinct readings at least this far apart, agreeing"),
        parameter(
            "startup-spread", \.startupSpread, "°", .above(0, below: 90),
            "from unknown: ...within this angle of their mean"),
        parameter(
            "startup-magnitude-tolerance", \.startupMagnitudeTolerance, "m/s²", .above(0),
            "from unknown: ...each |a| within this of gravity"),
        parameter(
            "gyro-correction-time", \.gyroCorrectionTime, "s", .above(0),
            "gyroscope: fused gravity's pull toward the accelerometer"),
        parameter(
            "gyro-settle-rate", \.gyroSettleRate, "°/s", .above(0), "gyroscope: a turn faster than this holds decisions"
        ),
        parameter(
            "gyro-settle-horizon", \.gyroSettleHorizon, "s", .above(0),
            "gyroscope: ...if it would leave the candidate within this time"),
        parameter("gyro-still-rate", \.gyroStillRate, "°/s", .above(0), "gyroscope: still below this rate"),
        parameter(
            "gyro-still-settle-time", \.gyroStillSettleTime, "s", .atLeast(0),
            "gyroscope: slow path, a candidate still this long settles"),
        parameter(
            "gyro-dwell-time", \.gyroDwellTime, "s", .atLeast(0), "gyroscope: dwell rule at rest, still this long"),
        parameter(
            "gyro-moving-dwell-time", \.gyroMovingDwellTime, "s", .atLeast(0),
            "gyroscope: dwell rule moving, turning this long"),
        parameter("gap-reprime", \.gapReprime, "s", .above(0), "a longer gap between samples re-primes the filter"),
        parameter(
            "silence-timeout", \.silenceTimeout, "s", .above(0), "no sample this long makes the orientation unknown"),
    ]

    /// Sets the parameter called `name` from its text form.
    public mutating func set(_ name: String, to text: String) throws(DetectorConfigurationError) {
        guard let parameter = Self.parameters.first(where: { $0.name == name }) else {
            throw .unknownParameter(name)
        }
        if let keyPath = parameter.keyPath {
            guard let value = Double(text), value.isFinite else { throw .notANumber(name: name, text: text) }
            self[keyPath: keyPath] = value
        } else if let keyPath = parameter.integerKeyPath {
            guard let value = Int(text) else { throw .notAnInteger(name: name, text: text) }
            self[keyPath: keyPath] = value
        }
    }

    /// Rejects values outside a parameter's range (its row's) and combinations that cannot work:
    /// inverted tilt pairs, thresholds beyond gravity.
    public func validate() throws(DetectorConfigurationError) {
        func require(_ condition: Bool, _ name: String, _ expected: String) throws(DetectorConfigurationError) {
            if !condition { throw .outOfRange(name: name, expected: expected) }
        }
        for parameter in Self.parameters {
            try require(
                parameter.range.contains(parameter.value(in: self)), parameter.name, parameter.range.description)
        }
        // What one parameter may be given another's value.
        try require(freeFallMagnitude < gravity, "free-fall-magnitude", "between 0 and gravity")
        try require(maximumSampleMagnitude > gravity, "maximum-sample-magnitude", "> gravity")
        try require(overheadEnterTilt < overheadExitTilt, "overhead-enter-tilt", "< overhead-exit-tilt")
        try require(faceExitTilt <= faceEnterTilt, "face-exit-tilt", "in (0, face-enter-tilt]")
        try require(gyroStillRate <= gyroSettleRate, "gyro-still-rate", "in (0, gyro-settle-rate]")
    }
}

/// The values a detector parameter may take: above or from a lower bound, below or up to an upper
/// one, written as the error says it ("> 0", "in [0, 90)").
public struct ParameterRange: Sendable, Hashable, CustomStringConvertible {
    public var lower: Double
    public var lowerIncluded: Bool
    public var upper: Double?
    public var upperIncluded: Bool

    static func above(_ lower: Double) -> Self {
        Self(lower: lower, lowerIncluded: false, upper: nil, upperIncluded: false)
    }
    static func atLeast(_ lower: Double) -> Self {
        Self(lower: lower, lowerIncluded: true, upper: nil, upperIncluded: false)
    }
    static func above(_ lower: Double, below upper: Double) -> Self {
        Self(lower: lower, lowerIncluded: false, upper: upper, upperIncluded: false)
    }
    static func above(_ lower: Double, upTo upper: Double) -> Self {
        Self(lower: lower, lowerIncluded: false, upper: upper, upperIncluded: true)
    }
    static func from(_ lower: Double, below upper: Double) -> Self {
        Self(lower: lower, lowerIncluded: true, upper: upper, upperIncluded: false)
    }
    static func from(_ lower: Double, upTo upper: Double) -> Self {
        Self(lower: lower, lowerIncluded: true, upper: upper, upperIncluded: true)
    }

    public func contains(_ value: Double) -> Bool {
        guard lowerIncluded ? value >= lower : value > lower else { return false }
        guard let upper else { return true }
        return upperIncluded ? value <= upper : value < upper
    }

    public var description: String {
        func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
        guard let upper else { return "\(lowerIncluded ? ">=" : ">") \(text(lower))" }
        return "in \(lowerIncluded ? "[" : "(")\(text(lower)), \(text(upper))\(upperIncluded ? "]" : ")")"
    }
}

/// A detector parameter that was misspelt, mistyped or out of range.
public enum DetectorConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownParameter(String)
    case notANumber(name: String, text: String)
    case notAnInteger(name: String, text: String)
    case outOfRange(name: String, expected: String)

    public var description: String {
        switch self {
        case .unknownParameter(let name):
            """
            unknown detector parameter \"\(name)\" (known: \
            \(DetectorConfiguration.parameters.map(\.name).joined(separator: ", ")))
            """
        case .notANumber(let name, let text): "detector parameter \(name): \"\(text)\" is not a finite number"
        case .notAnInteger(let name, let text): "detector parameter \(name): \"\(text)\" is not an integer"
        case .outOfRange(let name, let expected): "detector parameter \(name) must be \(expected)"
        }
    }
}
