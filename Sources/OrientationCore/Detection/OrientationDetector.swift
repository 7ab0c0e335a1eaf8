#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One accelerometer reading in the gravity-pointing display frame (detection.md §1), after the
/// mount matrix: upright portrait reads (0, −9.81, 0), lying face up (0, 0, −9.81).
public struct AccelerationSample: Sendable, Hashable {
    /// Monotonic seconds; only differences matter.
    public var time: Double
    /// m/s², pointing the way gravity pulls.
    public var vector: Vector3
    /// The gyroscope's reading at the same moment, rad/s about the same axes (right-hand rule), when
    /// there is one: the gravity estimate the detector judges is then fused from both (``GravityEstimator``).
    public var rotationRate: Vector3?

    public init(time: Double, vector: Vector3, rotationRate: Vector3? = nil) {
        self.time = time
        self.vector = vector
        self.rotationRate = rotationRate
    }

    public init(time: Double, x: Double, y: Double, z: Double) {
        self.init(time: time, vector: Vector3(x, y, z))
    }
}

/// A decision of the detector: the device orientation became `to` at `time`.
public struct OrientationChange: Sendable, Hashable {
    /// The time of the sample (or silence deadline) that decided it, in the samples' clock.
    public var time: Double
    public var from: DeviceOrientation
    public var to: DeviceOrientation

    public init(time: Double, from: DeviceOrientation, to: DeviceOrientation) {
        self.time = time
        self.from = from
        self.to = to
    }
}

/// Turns a stream of accelerometer samples into device-orientation changes: the judge.
///
/// A pure state machine: time comes in with each sample (or through ``advance(to:)``), no clock or I/O
/// is used, and each call returns the change it decided, if any. Each sample makes one
/// ``GravityEstimate`` (``GravityEstimator``: the low-pass alone without a gyroscope, one fusion with
/// one), and rules that each own a file read it, in this order (detection.md's rule index):
///
/// * the gates: free fall and linear acceleration hold decisions back (rule 1);
/// * **start-up** (``StartupRule``): from `unknown`, two readings that prove the device still give
///   the nearest orientation;
/// * **rest** (``RestRule``): the raw samples agree at gravity's length, so their mean *is* gravity;
///   a new orientation beyond the band is taken at once (a face state after the face rule's longer
///   rest, ``FaceRule``);
/// * **dwell at rest** (``RestingDwellRule``) and **dwell while moving** (``MovingDwellRule``): a pose
///   held past the dwell line becomes the neighbour inside the band;
/// * **settle** (``SettleRule``): what the estimate asks for, held for the settle time.
///
/// What each rule asks of the bands (hysteresis, upright window, overhead lock, face bands) is
/// ``OrientationBands``'. The rules read the estimate's fields (its up vector, whether it is
/// anchored, the measured turn and its heading, how long the device has been still), never what made
/// it. Internally the detector works on the *up* vector (the negated reading, Android's sign); that
/// flip never leaves this type and its rules (detection.md §1).
public struct OrientationDetector: Sendable {
    /// The rest test's ring capacity (``RestWindow/capacity``).
    public static let restCapacity = RestWindow.capacity

    public let configuration: DetectorConfiguration

    /// The orientation last decided: `unknown` before the first decision and after silence.
    public private(set) var orientation: DeviceOrientation = .unknown
    /// The low-passed reading in the gravity-pointing display frame, or nil before the first sample
    /// and after silence.
    public var filteredGravity: Vector3? { primed ? estimate.map { -$0.lowPassUp } : nil }
    /// Samples dropped as glitches (non-finite, exactly zero, or longer than
    /// `maximumSampleMagnitude`).
    public private(set) var droppedSamples = 0
    /// Times the estimate was re-primed after a gap or a backwards timestamp.
    public private(set) var reprimeCount = 0
    /// The gravity estimate the last sample gave (``GravityEstimate``); nil before the first sample.
    public private(set) var estimate: GravityEstimate?
    /// The gyroscope's verdict (``GyroscopeCheck``): `failed` while evidence against it holds.
    public var gyroscopeVerdict: GyroscopeCheck.Verdict { estimator.gyroscopeCheck.verdict }

    /// Nothing is on its way: primed, no candidate waiting, no acceleration being waited out. A
    /// sampler may slow down only then (``SamplingPace``): a decision in progress needs every sample.
    public var isSettled: Bool {
        primed && settle.candidate == nil && restingDwell.candidate == nil && movingDwell.candidate == nil
            && lastSampleTime >= acceleratingUntil
    }

    /// When the orientation becomes unknown if no sample arrives before (nil: nothing to forget), so
    /// a caller's timer can wait for exactly that moment instead of checking at a fixed period.
    public var silenceDeadline: Double? {
        primed || provingAgain ? lastSampleTime + configuration.estimate.silenceTimeout : nil
    }

    private var estimator: GravityEstimator
    private var bands: OrientationBands
    private var window: RestWindow
    private let startup: StartupRule
    private let rest: RestRule
    private let face: FaceRule
    private var settle: SettleRule
    private var restingDwell: RestingDwellRule
    private var movingDwell: MovingDwellRule

    private var primed = false
    private var lastSampleTime = -Double.infinity
    /// The time between the last two samples (0 after a re-prime): a wait ends at the sample within
    /// a quarter of it of its end (``waitIsOver(_:for:period:)``).
    private var sampleInterval = 0.0
    private var acceleratingUntil = -Double.infinity
    /// The last change, if the dwell rule made it: returning by the dwell rule needs a turn back.
    private var leftByDwell: DwellChange?
    /// Set by ``startAfresh()``: the orientation held is what the caller last published, not what
    /// any sample since has shown, so the start-up rule judges again as it does from `unknown`.
    private var provingAgain = false

    /// A detector with the given parameters; call ``DetectorConfiguration/validate()`` first for
    /// parameters from a user.
    public init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
        estimator = GravityEstimator(configuration: configuration)
        bands = OrientationBands(configuration: configuration)
        window = RestWindow(configuration: configuration)
        startup = StartupRule(configuration: configuration)
        rest = RestRule()
        face = FaceRule(configuration: configuration)
        settle = SettleRule(configuration: configuration)
        restingDwell = RestingDwellRule(configuration: configuration)
        movingDwell = MovingDwellRule(configuration: configuration)
    }

    /// Feeds one sample; returns the change it caused, if any.
    ///
    /// A sample after a silence longer than `silenceTimeout` first reports `unknown` (and starts
    /// afresh); it cannot decide an orientation itself, so at most one change results.
    public mutating func process(_ sample: AccelerationSample) -> OrientationChange? {
        let silenceChange = advance(to: sample.time)
        let reading = sample.vector
        let magnitude = reading.magnitude
        guard reading.isFinite, magnitude > 0, magnitude <= configuration.estimate.maximumSampleMagnitude else {
            droppedSamples += 1
            return silenceChange
        }
        let up = -reading
        let time = sample.time
        let interval = time - lastSampleTime
        let estimate: GravityEstimate
        if !primed || interval > configuration.estimate.gapReprime || interval < 0 {
            reprime(with: up, at: time)
            estimate = estimator.update(with: sample, up: up, interval: 0)
            self.estimate = estimate
            // After a silence this sample only starts afresh, so the `unknown` is never displaced.
            if silenceChange != nil { return silenceChange }
        } else if interval == 0 {
            return silenceChange  // a duplicate timestamp carries no new time
        } else {
            lastSampleTime = time
            sampleInterval = interval
            window.record(up, at: time)
            estimate = estimator.update(with: sample, up: up, interval: interval)
            self.estimate = estimate
        }
        return decide(estimate, at: time)
    }

    /// The last reading is known to have stood until `time`: a motion interrupt armed while the
    /// device rested did not fire. The detector takes it as if that reading had repeated until
    /// then, so the next sample is neither a gap to re-prime after nor the end of a silence.
    public mutating func hold(until time: Double) {
        guard primed, time > lastSampleTime else { return }
        lastSampleTime = time
    }

    /// The device may have turned while nothing was read (the system slept): what the samples
    /// before taught proves nothing now. The estimate starts from the next sample, and the start-up
    /// rule (two agreeing readings, one sample period apart) decides again as it does from
    /// `unknown`, but the orientation is kept and no change is returned: a caller that published it
    /// goes on showing it until a decision replaces it with the pose held now, or silence makes it
    /// unknown. So a resume shows the new pose one period after its first reading, never a passage
    /// through `unknown` that was not real (detection.md §5). `time` starts the silence timeout: a
    /// sensor that gives nothing after it still makes the orientation unknown.
    public mutating func startAfresh(at time: Double) {
        primed = false
        lastSampleTime = time
        forgetCandidates()
        window.clear()
        leftByDwell = nil
        acceleratingUntil = -Double.infinity
        provingAgain = orientation != .unknown
    }

    /// Tells the detector that time has passed without samples (the caller's timer).
    ///
    /// Returns the change to `unknown` once nothing has arrived for `silenceTimeout`; the change is
    /// dated at the deadline, not at `time`.
    public mutating func advance(to time: Double) -> OrientationChange? {
        let timeout = configuration.estimate.silenceTimeout
        guard primed || provingAgain, time - lastSampleTime >= timeout else { return nil }
        primed = false
        provingAgain = false
        forgetCandidates()
        window.clear()
        guard orientation != .unknown else { return nil }
        return accept(.unknown, at: lastSampleTime + timeout)
    }

    // MARK: - Judging

    /// The rules in turn, on this sample's estimate.
    private mutating func decide(_ estimate: GravityEstimate, at time: Double) -> OrientationChange? {
        let gates = configuration.estimate
        let lowPassMagnitude = estimate.lowPassUp.magnitude
        if lowPassMagnitude < gates.freeFallMagnitude {
            acceleratingUntil = time + gates.accelerationHoldoff
            settle.forget()
            return nil
        }
        // A low-pass primed this sample holds that one reading, not a sustained acceleration: a car's
        // or a stride's single peak there would hold the first decision for the whole hold-off.
        if sampleInterval > 0, abs(lowPassMagnitude - configuration.gravity) > gates.accelerationTolerance {
            acceleratingUntil = time + gates.accelerationHoldoff
        }
        bands.updateOverheadLock(estimate.up)

        // The rest test once per sample: the rest rule and the dwell rule at rest judge the same samples.
        let shown = window.rest(
            over: configuration.rest.window, period: sampleInterval, joltTime: configuration.face.joltTime)
        let resting = shown?.excusedJolt == false ? shown?.mean : nil
        let atRest =
            orientation == .unknown || provingAgain
            ? startup.candidate(rest: shown, window: window, period: sampleInterval, estimate: estimate, bands: bands)
            : rest.candidate(
                rest: shown, from: orientation, bands: bands, face: face, window: window, period: sampleInterval,
                estimate: estimate)
        if provingAgain, atRest == orientation {
            provingAgain = false  // proved again: what was shown is what the device holds
            return nil
        }
        if let atRest { return accept(atRest, at: time) }
        if let target = restingDwell.decide(
            resting: resting, estimate, from: orientation, at: time, bands: bands, leftByDwell: leftByDwell)
        {
            return accept(target, at: time, byDwell: resting)
        }
        if let target = movingDwell.decide(
            estimate, from: orientation, at: time, bands: bands, leftByDwell: leftByDwell,
            accelerating: time < acceleratingUntil)
        {
            return accept(target, at: time, byDwell: estimate.up)
        }
        guard
            let settled = settle.decide(
                estimate, resting: resting, from: orientation, at: time, period: sampleInterval, bands: bands,
                face: face,
                acceleratingUntil: acceleratingUntil)
        else { return nil }
        return accept(settled, at: time)
    }

    /// Takes `candidate`; `byDwell` is the up vector the dwell rule took it at, if it did.
    private mutating func accept(
        _ candidate: DeviceOrientation, at time: Double, byDwell: Vector3? = nil
    ) -> OrientationChange {
        let change = OrientationChange(time: time, from: orientation, to: candidate)
        provingAgain = false
        leftByDwell = byDwell.map { DwellChange(left: orientation, at: $0) }
        orientation = candidate
        forgetCandidates()
        return change
    }

    /// Restarts the estimate from `up` after a gap or a backwards timestamp; the orientation holds.
    ///
    /// The rest window is emptied (samples from before the gap prove nothing about now), but the
    /// settle rule's candidate is kept: if this sample agrees with the one before the gap, two
    /// readings a gap apart agree, which is what a slow (1 Hz) sensor can offer. A stale first
    /// sample after a resume is outvoted by the next one, which resets the candidate.
    private mutating func reprime(with up: Vector3, at time: Double) {
        if primed { reprimeCount += 1 }
        primed = true
        lastSampleTime = time
        sampleInterval = 0
        estimator.restart(from: up)
        acceleratingUntil = -Double.infinity
        restingDwell.forget()
        movingDwell.forget()
        window.clear()
        window.record(up, at: time)
    }

    private mutating func forgetCandidates() {
        settle.forget()
        restingDwell.forget()
        movingDwell.forget()
    }
}

/// Whether a wait is over after `elapsed` seconds between samples `period` apart: at the sample
/// within a quarter period of its end. Waits are whole numbers of periods (0.08 s is two at 25 Hz,
/// four at 50), and a sensor's clock runs a fraction of a per cent off nominal, its reads a
/// millisecond or two late: compared exactly, a clock 0.7 % fast (0.0794 s for two periods) costs a
/// whole period more.
func waitIsOver(_ elapsed: Double, for wait: Double, period: Double) -> Bool {
    elapsed + 0.25 * min(period, wait) >= wait
}
