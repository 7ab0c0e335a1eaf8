/// When the accelerometer must be read fast and when a slow read suffices: a device at rest wakes
/// the CPU rarely, and the first reading that moves brings the fast rate back at once.
///
/// Why it works: a person turning a device takes 0.3–1 s, so the motion shows long before the turn
/// ends, and the decision needs fast samples only from the start of the motion until the device
/// settles. At rest the reading is gravity plus noise (a few hundredths of g); a turn of 6° already
/// moves it by 0.1 g.
///
/// A pure state machine with time as an input, fed with the readings the detector sees (display
/// frame, m/s², after any gravity rescaling) and whether the detector has settled
/// (``OrientationDetector/isSettled``). It says which pace is in force; the acquisition reads at
/// ``interval`` and nothing else.
///
/// * **Fast → rest**: every reading of the last `restTime` seconds within `motionMargin` of the
///   first of them, and the detector settled. The resting gravity is their mean.
/// * **Rest → fast**: the first reading further than `motionMargin` from the resting gravity.
public struct SamplingPace: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Hz while the device moves or the detector decides (the sensor's configured rate).
        public var fastRate: Double = 25
        /// Hz at rest. 1.9 by measurement (docs/benchmarks.md, the power section; the offline curve
        /// in `CorpusReplayTests`): on the public corpus read at this pace nothing is missed and the
        /// p95 latency is that of 2 Hz, within 0.013 s of 4 Hz's, while below 1.75 Hz a turn is seen so late
        /// that it grows by 0.2 s (1.5 Hz) to 0.4 s (1 Hz). At rest the daemon wakes once per read
        /// and a few times a minute besides, so 1.9 rather than 2 keeps the whole daemon within two
        /// wake-ups a second. Not below 1: the detector re-primes after a gap of more than a second.
        public var restRate: Double = 1.9
        /// How far (m/s²) a reading may depart from the resting gravity and still be rest: 0.1 g,
        /// about 6° of tilt, five times a phone sensor's noise, and above a car's vibration.
        public var motionMargin: Double = 0.1 * 9.81
        /// How long (s) the readings must stay within the margin before the pace slows.
        public var restTime: Double = 0.5

        public init(
            fastRate: Double = 25, restRate: Double = 1.9, motionMargin: Double = 0.1 * 9.81, restTime: Double = 0.5
        ) {
            self.fastRate = fastRate
            self.restRate = restRate
            self.motionMargin = motionMargin
            self.restTime = restTime
        }
    }

    public enum Pace: String, Sendable, Hashable {
        case fast
        case rest
    }

    public let settings: Settings
    public private(set) var pace: Pace = .fast
    /// The first reading of the steady stretch (fast), or the resting gravity (rest).
    private var reference: Vector3?
    private var steadySince = 0.0
    private var steadySum = Vector3.zero
    private var steadyCount = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Seconds until the next reading at the pace in force.
    public var interval: Double { 1 / (pace == .fast ? settings.fastRate : max(settings.restRate, 1e-3)) }

    /// Feeds one reading taken at `time`; returns the new pace when it changed.
    public mutating func observe(_ reading: Vector3, at time: Double, detectorSettled: Bool) -> Pace? {
        guard reading.isFinite else { return restart(at: time, with: nil) }
        let moved = reference.map { (reading - $0).magnitude > settings.motionMargin } ?? true
        switch pace {
        case .rest:
            return moved ? restart(at: time, with: reading) : nil
        case .fast:
            if moved {
                _ = restart(at: time, with: reading)
                return nil
            }
            steadySum = steadySum + reading
            steadyCount += 1
            guard detectorSettled, time - steadySince >= settings.restTime else { return nil }
            pace = .rest
            reference = (1 / Double(steadyCount)) * steadySum
            return .rest
        }
    }

    /// A stretch starts afresh at `reading` (nil: none yet), at the fast pace.
    private mutating func restart(at time: Double, with reading: Vector3?) -> Pace? {
        reference = reading
        steadySince = time
        steadySum = reading ?? .zero
        steadyCount = reading == nil ? 0 : 1
        defer { pace = .fast }
        return pace == .fast ? nil : .fast
    }
}
