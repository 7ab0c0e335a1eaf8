/// When the accelerometer must be read fast and when a slow read suffices: a device at rest wakes
/// the CPU rarely, and the first reading that moves brings the fast rate back at once.
///
/// Why it works: a person turning a device takes 0.3–1 s, so the motion shows long before the turn
/// ends, and the decision needs fast samples only from the start of the motion until the device
/// settles. At rest the reading is gravity plus noise (a few hundredths of g); a turn of 6° already
/// moves it by 0.1 g.
///
/// A device at rest is either **held** (in a hand, in bed, on a lap: it sways by a degree or so
/// over a second, about 0.01–0.03 g) or **lying** (on a table, in a stand or a mount: the readings
/// stay within the sensor's noise, a few thousandths of g). A held device can be flicked to a new
/// orientation in 0.2 s; a lying one must be picked up first, a motion of half a second or more that
/// departs from the resting gravity long before any turn. So a held device is read at
/// `heldRate` (4 Hz: one read falls within 0.05 s of the end of the fastest flick) and a lying one at
/// `restRate`, which is where a device spends its idle hours and what the power budget is about.
///
/// A pure state machine with time as an input, fed with the readings the detector sees (display
/// frame, m/s², after any gravity rescaling) and whether the detector has settled
/// (``OrientationDetector/isSettled``). It says which pace is in force; the acquisition reads at
/// ``interval`` and nothing else.
///
/// * **Fast → held or lying**: every reading of the last `restTime` seconds within `motionMargin` of
///   the first of them, and the detector settled. The resting gravity is their mean. Held when one
///   of the last `restTime` seconds' readings lies further than `swayMargin` from it, else lying.
/// * **Held ↔ lying**: a read further than `swayMargin` from the resting gravity makes it held; no
///   such read for `stillTime` makes it lying.
/// * **Held or lying → fast**: the first reading further than `motionMargin` from the resting gravity.
public struct SamplingPace: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Hz while the device moves or the detector decides (the sensor's configured rate).
        public var fastRate: Double = 25
        /// Hz at rest, lying still, where a device spends its idle hours: the power budget of two
        /// wake-ups a second. A device lying still wakes the daemon once per read and a few times a
        /// minute besides, and a busy machine preempts the reading thread now and then: measured at
        /// 1.9 Hz the daemon woke 2.00–2.03 times a second (docs/benchmarks.md, the power section),
        /// so 1.8. Lower costs a pick-up nothing (it moves the device for half a second before any
        /// turn) but a step in sysfs waits longer. Not below 1: the detector re-primes after a gap
        /// of more than a second.
        public var restRate: Double = 1.8
        /// Hz at rest, held. 4: a flick takes 0.2 s at the fastest (the corpus's `fast_flick`), so
        /// with reads 0.25 s apart one falls during it or within 0.05 s of its end; at 1.8 Hz a flick
        /// that ends just after a read waits up to 0.36 s for the next (docs/detection-log.md §16).
        /// Never below `restRate`; 0 reads a held device at `restRate` too.
        public var heldRate: Double = 4
        /// How far (m/s²) a reading may depart from the resting gravity and still be rest: 0.1 g,
        /// about 6° of tilt, five times a phone sensor's noise, and above a car's vibration.
        public var motionMargin: Double = 0.1 * 9.81
        /// How far (m/s²) a resting reading departs from the resting gravity when the device sways
        /// in a hand: 0.006 g, about 0.35° of tilt. A phone sensor's noise (1–2 thousandths of g
        /// per axis at 25 Hz) stays within 0.005 g over half a second; a hand's sway passes 0.007 g
        /// within half a second in 19 of 20 stretches of every corpus trace held throughout
        /// (docs/detection-log.md §16).
        public var swayMargin: Double = 0.006 * 9.81
        /// How long (s) the readings must stay within the margin before the pace slows.
        public var restTime: Double = 0.5
        /// A gyroscope runs only while the pace is fast (it draws several times the accelerometer's
        /// current), and its readings are used only this long (s) after it was switched on: phone
        /// parts take tens of milliseconds to give settled rates (the MPU-6050's datasheet: 30 ms),
        /// and 0.08 s leaves room for slower ones.
        public var gyroscopeStartup: Double = 0.08
        /// Hz while the device moves and a working gyroscope runs, when faster than `fastRate`: the
        /// fusion turns its estimate by each step's rate, and a step whose rate changes by more than
        /// 0.1 rad over its length cannot be integrated (the fusion starts afresh from the
        /// accelerometer: ``GravityFusion/Settings/maximumStepChange``). A wrist's quickest quarter
        /// turn (0.2 s, the corpus's `fast_flick`) peaks at 230 rad/s²: 0.37 rad over a 25 Hz step,
        /// 0.09 over a 50 Hz one. Only while the device moves: at rest the gyroscope is off and the
        /// rest rates hold. 0: `fastRate` (detection-log.md §18).
        public var gyroscopeRate: Double = 50
        /// How long (s) a held device's reads must stay within `swayMargin` before it counts as
        /// lying: a hand's sway (0.1–0.5 Hz) swings past the margin at least once in 2 s.
        public var stillTime: Double = 2

        public init(
            fastRate: Double = 25, restRate: Double = 1.8, heldRate: Double = 4, motionMargin: Double = 0.1 * 9.81,
            swayMargin: Double = 0.006 * 9.81, restTime: Double = 0.5, stillTime: Double = 2
        ) {
            self.fastRate = fastRate
            self.restRate = restRate
            self.heldRate = heldRate
            self.motionMargin = motionMargin
            self.swayMargin = swayMargin
            self.restTime = restTime
            self.stillTime = stillTime
        }

        /// Hz while the device moves, with a working gyroscope running or without.
        public func movingRate(gyroscope: Bool) -> Double {
            gyroscope ? max(fastRate, gyroscopeRate) : fastRate
        }

        /// Hz at the given pace (without a gyroscope).
        public func rate(_ pace: Pace) -> Double {
            switch pace {
            case .fast: fastRate
            case .held: max(heldRate, restRate, 1e-3)
            case .lying: max(restRate, 1e-3)
            }
        }
    }

    public enum Pace: String, Sendable, Hashable {
        /// The device moves, or the detector decides: every reading.
        case fast
        /// At rest and swaying (in a hand): ``Settings/heldRate``.
        case held
        /// At rest and still (on a table): ``Settings/restRate``.
        case lying

        public var isRest: Bool { self != .fast }
    }

    public let settings: Settings
    public private(set) var pace: Pace = .fast
    /// The first reading of the steady stretch (fast), or the resting gravity (at rest).
    private var reference: Vector3?
    private var steadySince = 0.0
    private var steadySum = Vector3.zero
    private var steadyCount = 0
    /// The stretch's latest readings, up to `restTime` of them at the fast rate: whether the device
    /// swayed is judged on these against the stretch's mean.
    private var recent: [Vector3] = []
    /// When a resting read last swayed (held), or the device came to rest.
    private var swayedAt = 0.0

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// A working gyroscope is read with the accelerometer: the fast pace reads at
    /// ``Settings/movingRate(gyroscope:)``.
    public var gyroscopeWorking = false

    /// Seconds until the next reading at the pace in force.
    public var interval: Double {
        1 / (pace == .fast ? settings.movingRate(gyroscope: gyroscopeWorking) : settings.rate(pace))
    }

    /// Feeds one reading taken at `time`; returns the new pace when it changed.
    public mutating func observe(_ reading: Vector3, at time: Double, detectorSettled: Bool) -> Pace? {
        guard reading.isFinite else { return restart(at: time, with: nil) }
        let moved = reference.map { (reading - $0).magnitude > settings.motionMargin } ?? true
        if pace.isRest {
            if moved { return restart(at: time, with: reading) }
            if reference.map({ (reading - $0).magnitude > settings.swayMargin }) == true {
                swayedAt = time
                return settle(.held)
            }
            return time - swayedAt >= settings.stillTime ? settle(.lying) : nil
        }
        if moved {
            _ = restart(at: time, with: reading)
            return nil
        }
        steadySum = steadySum + reading
        steadyCount += 1
        recent.append(reading)
        if recent.count > recentCapacity { recent.removeFirst() }
        guard detectorSettled, time - steadySince >= settings.restTime else { return nil }
        let mean = (1 / Double(steadyCount)) * steadySum
        reference = mean
        swayedAt = time
        let swayed = recent.contains { ($0 - mean).magnitude > settings.swayMargin }
        recent.removeAll(keepingCapacity: true)
        return settle(swayed ? .held : .lying)
    }

    /// `restTime` of readings at the fast rate (at least two).
    private var recentCapacity: Int { max(2, Int((settings.restTime * settings.fastRate).rounded())) }

    /// The pace becomes `new`; returns it when it changed.
    private mutating func settle(_ new: Pace) -> Pace? {
        guard new != pace else { return nil }
        pace = new
        return new
    }

    /// A stretch starts afresh at `reading` (nil: none yet), at the fast pace.
    private mutating func restart(at time: Double, with reading: Vector3?) -> Pace? {
        reference = reading
        steadySince = time
        steadySum = reading ?? .zero
        steadyCount = reading == nil ? 0 : 1
        recent.removeAll(keepingCapacity: true)
        if let reading { recent.append(reading) }
        return settle(.fast)
    }
}
