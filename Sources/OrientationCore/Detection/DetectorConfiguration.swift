/// Every tunable of ``OrientationDetector``, grouped by the rule that reads it (detection.md's rule
/// index): the estimate and its gates, the bands, the face states, the rest test, the start-up, the
/// settle wait, the dwell rule at rest and while moving. The names a configuration file and
/// `--detector NAME=VALUE` use are the rows of ``parameters``, unchanged by the grouping.
///
/// Angles are in degrees, times in seconds, accelerations in m/s². *Tilt* is the angle between the
/// screen plane and the horizontal: 0° standing upright, +90° lying face up, −90° face down.
public struct DetectorConfiguration: Sendable, Hashable {
    /// Standard gravity used by the magnitude gates.
    public var gravity: Double = 9.81
    public var estimate = Estimate()
    public var bands = Bands()
    public var face = Face()
    public var rest = Rest()
    public var startup = Startup()
    public var settle = Settle()
    public var restingDwell = RestingDwell()
    public var movingDwell = MovingDwell()

    public init() {}

    /// The gravity estimate (``GravityEstimator``) and the gates every rule shares.
    public struct Estimate: Sendable, Hashable {
        /// Time constant of the first-order low-pass on the vector (Android: 100 ms too small,
        /// 500 ms too large).
        public var filterTimeConstant: Double = 0.2
        /// The filtered magnitude may differ from `gravity` by this much before the device counts as
        /// accelerating (shakes, impacts, braking).
        public var accelerationTolerance: Double = 4.0
        /// After the last accelerating or free-falling sample, the settle wait accepts nothing for
        /// this long.
        public var accelerationHoldoff: Double = 0.5
        /// Below this filtered magnitude the device is falling and nothing is predicted.
        public var freeFallMagnitude: Double = 1.0
        /// Raw samples longer than this are glitches and are dropped (4 g; real ±2 g parts clip
        /// below it).
        public var maximumSampleMagnitude: Double = 4 * 9.81
        /// A gap between samples longer than this re-primes the estimate and forgets every candidate.
        public var gapReprime: Double = 1.0
        /// With no sample for this long the orientation becomes `unknown`.
        public var silenceTimeout: Double = 2.0
        /// With a gyroscope the estimate is the fused gravity (``GravityFusion``), pulled toward the
        /// accelerometer with this time constant while the device moves: long enough that a step's
        /// or a flick's acceleration does not tilt it, short enough that a gyroscope's bias (up to
        /// 3 °/s before it is learned) leaves it no more than 1.5° off.
        public var correctionTime: Double = 0.5
        /// Still, for the gyroscope: turning slower than this (°/s, above a hand's sway and tremor).
        public var stillRate: Double = 6.0
        /// A turn faster than this (°/s) has a heading: where it carries the up vector in
        /// `turnHorizon`. A flick reverses at its far pose (its rate crosses zero within
        /// milliseconds), a turn's end decelerates to rest.
        public var turnRate: Double = 30.0
        /// How far ahead a heading looks (s). A smooth turn still has at most its rate × 0.27 × its
        /// duration to go, so 0.3 s covers turns of up to 1.1 s; a body lying down keeps turning at
        /// 30–120 °/s deep inside its new orientation for a second, which the rate alone took for a
        /// turn under way.
        public var turnHorizon: Double = 0.3

        public init() {}
    }

    /// The upright orientations' bands (``OrientationBands``).
    public struct Bands: Sendable, Hashable {
        /// Dead zone between adjacent upright orientations: a neighbour is accepted only `gap / 2`
        /// past the diagonal between it and the current orientation, so holding near 45° never flaps.
        public var adjacentHysteresis: Double = 45.0
        /// Upright orientations are only recognised while tilt lies in this window (above it a device
        /// is nearly flat and the direction in the screen plane means little).
        public var uprightMaximumTilt: Double = 70.0
        /// Lower end of the upright window: screen facing down more than this gives no upright
        /// candidate.
        public var uprightMinimumTilt: Double = -25.0
        /// Held overhead: tilt at or below this locks upright changes...
        public var overheadEnterTilt: Double = -40.0
        /// ...until tilt rises to this again.
        public var overheadExitTilt: Double = -15.0

        public init() {}
    }

    /// The face states: their band, and the longer waits before one is taken.
    public struct Face: Sendable, Hashable {
        /// faceUp/faceDown need |tilt| at least this...
        public var enterTilt: Double = 75.0
        /// ...and, once entered, are left for an upright orientation only when |tilt| is below
        /// this. Between the two the current orientation holds: reading in bed stays portrait, a
        /// phone on an uneven table stays faceUp.
        public var exitTilt: Double = 65.0
        /// The settle wait for a face state.
        public var dwell: Double = 0.3
        /// A face state is taken at rest only after this much rest (longer than the rest window,
        /// because a reclining reader's slow sway can briefly look like a rest near 75°).
        public var restWindow: Double = 0.12
        /// A device laid on a table lands: the impact lengthens or shortens the reading for a sample
        /// or two (5–20 ms of contact) without turning it. For a face state, samples off gravity's
        /// length by at most `accelerationTolerance` that point with the rest (within the rest's
        /// spread) and span at most this long do not break the rest; they are left out of its mean.
        public var joltTime: Double = 0.03

        public init() {}
    }

    /// The rest test (``RestWindow``): the raw samples show gravity itself.
    public struct Rest: Sendable, Hashable {
        /// The device counts as at rest when the raw samples of the last `window` seconds (at least
        /// `minimumSamples` of them) all agree...
        public var window: Double = 0.08
        public var minimumSamples: Int = 3
        /// ...within this angle of their mean direction...
        public var spread: Double = 5.0
        /// ...and each is within this of `gravity` in length.
        public var magnitudeTolerance: Double = 1.5

        public init() {}
    }

    /// The start-up (``StartupRule``): the first orientation from `unknown`.
    public struct Startup: Sendable, Hashable {
        /// Two raw samples spanning at least this long decide at once when they agree within
        /// `spread` and each lies within `magnitudeTolerance` of gravity (else the rest test
        /// decides). 15 ms: the second sample at 50 Hz even from a clock or a read a few
        /// milliseconds off, at 25 Hz the second sample as before; at 100–200 Hz the 15 ms still
        /// span three or four samples. Two distinct readings count: a polled sensor's reading read
        /// twice is one.
        public var window: Double = 0.015
        /// ...within this angle of their mean: a resting device's samples agree within a few tenths
        /// of a degree (noise, tremor); 1.5° leaves room for a sensor four times as noisy.
        public var spread: Double = 1.5
        /// ...and each this close to `gravity` in length (0.05 g): a bias or a scale error of a few
        /// percent passes, the bounce of a step (0.2–0.3 g) does not.
        public var magnitudeTolerance: Double = 0.5

        public init() {}
    }

    /// The settle wait (``SettleRule``): a candidate the estimate asks for, held.
    public struct Settle: Sendable, Hashable {
        /// The candidate must stay the same this long before it is accepted...
        public var time: Double = 0.08
        /// ...while (without a measured turn) the estimate moves less than this from where the
        /// candidate began; a low-pass still following a turn is not settled.
        public var drift: Double = 5.0
        /// With a measured turn, a candidate the device has come to rest in (still, for the
        /// gyroscope) settles after this long instead: a glance's far pose is still for a few
        /// milliseconds at its turn (about 20 ms for 110° out in 0.4 s and back), a pose reached
        /// for as long as it is held. The fusion trusts a restart after as long.
        public var stillTime: Double = 0.04

        public init() {}
    }

    /// The dwell rule at rest (``RestingDwellRule``): a still pose past the *dwell line*,
    /// `45° + margin / 2` from the current upright orientation's axis (nearer the neighbour's axis
    /// than the current one by at least the margin, in the screen plane), becomes the neighbour even
    /// inside the `adjacentHysteresis` band.
    public struct RestingDwell: Sendable, Hashable {
        public var margin: Double = 16.0
        /// The pose must stay there, within `drift`, this long (on top of the rest window)...
        public var time: Double = 0.06
        /// ...counted from when the low-passed direction has caught up with the resting pose to
        /// within this: it trails a turn by the turn's speed times `filterTimeConstant`, so a pause
        /// at the end of a quick turn (a glance that comes back) ends before it agrees...
        public var agreement: Double = 8.0
        /// ...while the resting pose (the rest window's mean) stays within this of where the wait
        /// began. A held pose moves by tremor and noise, tenths of a degree; a hand that starts back
        /// from a pause still passes the rest test for a few samples, and meets the trailing filter
        /// half way, which must not count as the filter catching up.
        public var drift: Double = 2.0
        /// With a measured turn, the gyroscope's stillness this long is evidence enough: longer than
        /// the pause of a glance that comes back.
        public var stillTime: Double = 0.2

        public init() {}
    }

    /// The dwell rule while moving (``MovingDwellRule``): walking or carried, the raw samples never
    /// rest.
    public struct MovingDwell: Sendable, Hashable {
        /// The low-passed direction sways with each step, so the margin is larger than at rest (an
        /// anchored estimate does not sway: the resting margin serves)...
        public var margin: Double = 20.0
        /// ...and the pose must stay past the diagonal this long, its mean past the line...
        public var time: Double = 0.2
        /// ...and the estimate must lie within this of that mean: a walk's sway (±3–5°) does, a turn
        /// that passes through the sector at 100°/s or more lies 10° or more ahead of the mean of its
        /// last 0.2 s, and is taken by the band or at rest, not here.
        public var spread: Double = 10.0
        /// With an anchored estimate only the time the device turns counts (a walk never rests, a
        /// glance's pause does), and this much of it is needed past the line.
        public var turningTime: Double = 0.3

        public init() {}
    }

    /// A parameter's name (as used by `--detector NAME=VALUE` and the configuration file), the rule
    /// that reads it, its unit, and a one-line explanation.
    public struct Parameter: Sendable {
        public let name: String
        /// The group it belongs to: the rule that reads it (detection.md's rule index).
        public let rule: String
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

    /// The rows of one rule's group, built with its name.
    private struct Group {
        let rule: String

        func callAsFunction(
            _ name: String, _ keyPath: WritableKeyPath<DetectorConfiguration, Double> & Sendable, _ unit: String,
            _ range: ParameterRange, _ summary: String
        ) -> Parameter {
            Parameter(
                name: name, rule: rule, unit: unit, range: range, summary: summary, keyPath: keyPath,
                integerKeyPath: nil)
        }
    }

    /// Every parameter, grouped by rule in the order the documentation lists them.
    public static let parameters: [Parameter] = {
        let estimate = Group(rule: "estimate")
        let bands = Group(rule: "bands")
        let face = Group(rule: "face")
        let rest = Group(rule: "rest")
        let startup = Group(rule: "startup")
        let settle = Group(rule: "settle")
        let restingDwell = Group(rule: "resting-dwell")
        let movingDwell = Group(rule: "moving-dwell")
        return [
            estimate("gravity", \.gravity, "m/s²", .above(0), "standard gravity for the magnitude gates"),
            estimate("filter-time-constant", \.estimate.filterTimeConstant, "s", .above(0), "low-pass time constant"),
            estimate(
                "acceleration-tolerance", \.estimate.accelerationTolerance, "m/s²", .above(0),
                "filtered |a| may differ from gravity by this much"),
            estimate(
                "acceleration-holdoff", \.estimate.accelerationHoldoff, "s", .atLeast(0),
                "no settled change for this long after acceleration"),
            estimate(
                "free-fall-magnitude", \.estimate.freeFallMagnitude, "m/s²", .atLeast(0),
                "below this filtered |a| nothing is predicted"),
            estimate(
                "maximum-sample-magnitude", \.estimate.maximumSampleMagnitude, "m/s²", .above(0),
                "longer raw samples are dropped as glitches"),
            estimate(
                "gap-reprime", \.estimate.gapReprime, "s", .above(0),
                "a longer gap between samples re-primes the estimate"),
            estimate(
                "silence-timeout", \.estimate.silenceTimeout, "s", .above(0),
                "no sample this long makes the orientation unknown"),
            estimate(
                "gyro-correction-time", \.estimate.correctionTime, "s", .above(0),
                "gyroscope: fused gravity's pull toward the accelerometer"),
            estimate("gyro-still-rate", \.estimate.stillRate, "°/s", .above(0), "gyroscope: still below this rate"),
            estimate(
                "gyro-settle-rate", \.estimate.turnRate, "°/s", .above(0),
                "gyroscope: a turn faster than this has a heading"),
            estimate(
                "gyro-settle-horizon", \.estimate.turnHorizon, "s", .above(0),
                "gyroscope: ...where the turn carries the device within this time"),
            bands(
                "adjacent-hysteresis", \.bands.adjacentHysteresis, "°", .from(0, below: 90),
                "dead zone between adjacent upright orientations"),
            bands(
                "upright-maximum-tilt", \.bands.uprightMaximumTilt, "°", .above(0, upTo: 90),
                "upright orientations only below this tilt"),
            bands(
                "upright-minimum-tilt", \.bands.uprightMinimumTilt, "°", .from(-90, below: 0),
                "upright orientations only above this tilt"),
            bands(
                "overhead-enter-tilt", \.bands.overheadEnterTilt, "°", .from(-90, upTo: 90),
                "tilt at or below this locks upright changes"),
            bands(
                "overhead-exit-tilt", \.bands.overheadExitTilt, "°", .from(-90, upTo: 90),
                "tilt at or above this unlocks them"),
            face(
                "face-enter-tilt", \.face.enterTilt, "°", .above(0, upTo: 90),
                "faceUp/faceDown need |tilt| at least this"),
            face(
                "face-exit-tilt", \.face.exitTilt, "°", .above(0, upTo: 90), "leave a face state only below this |tilt|"
            ),
            face("face-dwell", \.face.dwell, "s", .atLeast(0), "settle wait for a face state"),
            face("face-rest-window", \.face.restWindow, "s", .atLeast(0), "at rest this long before a face state"),
            face("face-jolt-time", \.face.joltTime, "s", .atLeast(0), "a landing's jolt this short breaks no rest"),
            rest("rest-window", \.rest.window, "s", .atLeast(0), "rest: raw samples at rest this long"),
            Parameter(
                name: "rest-minimum-samples", rule: "rest", unit: "samples",
                range: .from(2, upTo: Double(RestWindow.capacity)),
                summary: "rest: at least this many samples", keyPath: nil,
                integerKeyPath: \DetectorConfiguration.rest.minimumSamples),
            rest(
                "rest-spread", \.rest.spread, "°", .above(0, below: 90), "rest: samples within this angle of their mean"
            ),
            rest(
                "rest-magnitude-tolerance", \.rest.magnitudeTolerance, "m/s²", .above(0),
                "rest: each |a| within this of gravity"),
            startup(
                "startup-rest-window", \.startup.window, "s", .atLeast(0),
                "from unknown: two distinct readings at least this far apart, agreeing"),
            startup(
                "startup-spread", \.startup.spread, "°", .above(0, below: 90),
                "from unknown: ...within this angle of their mean"),
            startup(
                "startup-magnitude-tolerance", \.startup.magnitudeTolerance, "m/s²", .above(0),
                "from unknown: ...each |a| within this of gravity"),
            settle("settle-time", \.settle.time, "s", .atLeast(0), "settle: candidate unchanged this long"),
            settle(
                "settle-drift", \.settle.drift, "°", .above(0, below: 180),
                "settle: estimate moves less than this meanwhile"),
            settle(
                "gyro-still-settle-time", \.settle.stillTime, "s", .atLeast(0),
                "gyroscope: a candidate still this long settles"),
            restingDwell(
                "dwell-margin", \.restingDwell.margin, "°", .above(0, below: 90),
                "dwell at rest: this much nearer a neighbour's axis"),
            restingDwell(
                "dwell-time", \.restingDwell.time, "s", .atLeast(0),
                "dwell at rest: ...held this long after the rest window"),
            restingDwell(
                "dwell-agreement", \.restingDwell.agreement, "°", .above(0, below: 90),
                "dwell at rest: filtered pose this near the resting one"),
            restingDwell(
                "dwell-drift", \.restingDwell.drift, "°", .above(0, below: 180),
                "dwell at rest: resting pose moves less than this"),
            restingDwell(
                "gyro-dwell-time", \.restingDwell.stillTime, "s", .atLeast(0),
                "gyroscope: dwell at rest, still this long"),
            movingDwell(
                "dwell-moving-margin", \.movingDwell.margin, "°", .above(0, below: 90),
                "dwell moving: the margin for the low-passed pose"),
            movingDwell("dwell-moving-time", \.movingDwell.time, "s", .atLeast(0), "dwell moving: ...held this long"),
            movingDwell(
                "dwell-moving-spread", \.movingDwell.spread, "°", .above(0, upTo: 180),
                "dwell moving: ...and now this near its mean"),
            movingDwell(
                "gyro-moving-dwell-time", \.movingDwell.turningTime, "s", .atLeast(0),
                "gyroscope: dwell moving, turning this long"),
        ]
    }()

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
        try require(estimate.freeFallMagnitude < gravity, "free-fall-magnitude", "between 0 and gravity")
        try require(estimate.maximumSampleMagnitude > gravity, "maximum-sample-magnitude", "> gravity")
        try require(bands.overheadEnterTilt < bands.overheadExitTilt, "overhead-enter-tilt", "< overhead-exit-tilt")
        try require(face.exitTilt <= face.enterTilt, "face-exit-tilt", "in (0, face-enter-tilt]")
        try require(estimate.stillRate <= estimate.turnRate, "gyro-still-rate", "in (0, gyro-settle-rate]")
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
