#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a gyroscope can be believed, judged only on evidence a working one never gives, as the
/// accelerometer's faults are (docs/sensors.md, "Faults only on evidence"): its values alone prove
/// nothing (a device at rest reads the same bias for minutes), so each rule needs the accelerometer
/// to contradict it.
///
/// * **Frozen**: the same reading, to the last bit, for `frozenTime` while the accelerometer shows
///   the device turned by `frozenTurn` or more beyond what that reading, held, turns it (a turn
///   that fast moves every axis's reading; noise alone moves the last bit). The held rate is
///   integrated, as the fusion turns gravity by it: a steady turn, or a hub that reports a rate only
///   when it changes, repeats one value that agrees with the accelerometer's turn, and is no fault;
///   a rate stuck at zero or at a bias through a quarter turn disagrees by the whole quarter.
///   Over when the reading changes. The readings must be continuous: a
///   gap longer than `maximumGap` (the daemon switches the gyroscope off at rest) starts the run
///   afresh, since a turn made while nothing was read says nothing against the gyroscope.
/// * **At odds**: the fused gravity had to be set back to a resting accelerometer by
///   `disagreement` or more (``GravityFusion/lastReanchor``) `disagreementCount` times within
///   `disagreementWindow`: a gyroscope that saturates, has a wrong scale or reports another chip's
///   axes. Over after a `disagreementWindow` with no such disagreement.
///
/// While either holds the detector judges the accelerometer alone. A pure state machine: time comes
/// in with each sample.
public struct GyroscopeCheck: Sendable {
    public enum Verdict: Sendable, Hashable {
        case working
        /// What was seen, in words.
        case failed(String)
    }

    public struct Settings: Sendable, Hashable {
        public var frozenTime = 1.0
        /// Seconds between two readings beyond which a frozen run starts afresh: longer than a
        /// slow gyroscope's period (10 Hz), shorter than the daemon's gyroscope is ever off (a read
        /// at rest, 0.25 s or more, and its start-up).
        public var maximumGap = 0.25
        /// Degrees.
        public var frozenTurn = 30.0
        /// Degrees.
        public var disagreement = 20.0
        public var disagreementCount = 3
        public var disagreementWindow = 60.0
        /// The accelerometer counts as gravity within this of its length (m/s²).
        public var gravityTolerance = 1.5
        public var gravity = 9.81

        public init() {}
    }

    public let settings: Settings
    public private(set) var verdict: Verdict = .working

    /// The held reading since when, the accelerometer's direction when the run had one first (and
    /// its time), and the largest angle seen between the accelerometer's direction and that one
    /// turned by the held rate.
    private var frozen: (value: Vector3, since: Double, start: (direction: Vector3, time: Double)?, turn: Double)?
    private var lastTime = -Double.infinity
    private var frozenFailure = false
    private var frozenDetail = ""
    private var disagreements: [Double] = []
    private var oddsFailure = false
    private var oddsDetail = ""
    private var lastReanchorSeen: Double?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// One sample: the gyroscope's reading as it came (rad/s), the accelerometer's (m/s²), and the
    /// fusion's last re-anchoring (time and degrees), if any. Returns the verdict when it changed.
    public mutating func observe(
        time: Double, rate: Vector3, reading: Vector3, lastReanchor: (time: Double, angle: Double)?
    ) -> Verdict? {
        let before = verdict
        observeFrozen(time: time, rate: rate, reading: reading)
        if let reanchor = lastReanchor, reanchor.time != lastReanchorSeen {
            lastReanchorSeen = reanchor.time
            if reanchor.angle >= settings.disagreement { disagreements.append(reanchor.time) }
        }
        disagreements.removeAll { time - $0 > settings.disagreementWindow }
        if disagreements.count >= settings.disagreementCount, !oddsFailure {
            oddsFailure = true
            oddsDetail = """
                its turns disagreed with the accelerometer's by \(Int(settings.disagreement))° or more \
                \(disagreements.count) times within \(Int(settings.disagreementWindow)) s
                """
        } else if oddsFailure, disagreements.isEmpty {
            oddsFailure = false
        }
        if frozenFailure {
            verdict = .failed(frozenDetail)
        } else if oddsFailure {
            verdict = .failed(oddsDetail)
        } else {
            verdict = .working
        }
        return verdict != before ? verdict : nil
    }

    /// Forgets everything (another sensor).
    public mutating func restart() {
        self = GyroscopeCheck(settings: settings)
    }

    private mutating func observeFrozen(time: Double, rate: Vector3, reading: Vector3) {
        let length = reading.magnitude
        let direction =
            abs(length - settings.gravity) <= settings.gravityTolerance && length > 0 ? (1 / length) * reading : nil
        let interval = time - lastTime
        lastTime = time
        guard var held = frozen, held.value == rate, interval >= 0, interval <= settings.maximumGap else {
            frozen = (rate, time, direction.map { ($0, time) }, 0)
            frozenFailure = false
            return
        }
        if held.start == nil { held.start = direction.map { ($0, time) } }
        if let start = held.start, let direction {
            // Where the held rate has turned the first direction by now (GravityFusion's step).
            let speed = held.value.magnitude
            let expected =
                speed > 0
                ? Quaternion(axis: held.value, angle: -speed * (time - start.time)).rotate(start.direction)
                : start.direction
            let cosine = max(-1, min(1, expected.dot(direction) / max(expected.magnitude, .leastNonzeroMagnitude)))
            held.turn = max(held.turn, acos(cosine) * 180 / .pi)
        }
        frozen = held
        if !frozenFailure, time - held.since >= settings.frozenTime, held.turn >= settings.frozenTurn {
            frozenFailure = true
            let value = held.value
            frozenDetail = """
                frozen at (\(Self.text(value.x)), \(Self.text(value.y)), \(Self.text(value.z))) rad/s \
                for \(Self.text(time - held.since)) s while the accelerometer turned \(Int(held.turn.rounded()))° \
                beyond what that rate turns it
                """
        }
    }

    private static func text(_ value: Double) -> String {
        String((value * 1000).rounded() / 1000)
    }
}
