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
    /// there is one: the detector then judges the fused gravity (detection.md §18).
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

/// Turns a stream of accelerometer samples into device-orientation changes.
///
/// A pure state machine: time comes in with each sample (or through ``advance(to:)``), no clock or I/O
/// is used, and each call returns the change it decided, if any. Two paths decide:
///
/// * **Fast path**: when the last few raw samples (`restWindow`, at least `restMinimumSamples`) are
///   each close to 1 g and agree in direction, the device has stopped moving and that direction *is*
///   gravity; a new orientation beyond the hysteresis line is accepted at once. This gives the
///   latency of a step change without trusting a single sample (detection.md §13).
/// * **Slow path**: a first-order low-pass on the vector, gated by its magnitude (shakes, impacts,
///   free fall), classified with the same hysteresis and tilt windows, and accepted after a settle
///   time (a face state after a longer dwell). It decides when the raw stream is never quiet:
///   walking, car vibration, tremor.
/// * **Dwell rule** (detection.md §9.4 step 7, §15): a pose held clearly nearer a neighbour's axis
///   (past the dwell line, `dwellMargin` before the band's line) becomes the neighbour after
///   `dwellTime` at rest, or after `dwellMovingTime` of the low-passed pose while walking: people
///   lie and carry devices 20–35° off an axis, where the band alone would keep the old orientation.
/// * **Start-up**: from `unknown`, two samples that agree closely at gravity's length, or the fast
///   path's rest, give the nearest orientation.
/// * **With a gyroscope** (samples that carry a rotation rate; detection.md §18) the direction the
///   slow path and the dwell rule judge is the fused gravity (``GravityFusion``) instead of the
///   low-pass, which follows a turn as it happens and is not tilted by linear acceleration; the
///   gyroscope's rate, not the direction's drift, says when a candidate has settled, and its
///   stillness, not the low-pass catching up, when a pose is held. Until the fusion is anchored the
///   low-pass turned by the gyroscope is judged (`turnedUp`), and the gyroscope says when its
///   candidate has settled. Without one, or with one judged failed, nothing differs.
///
/// Internally the detector works on the *up* vector (the negated reading, Android's sign); that flip
/// never leaves this type (detection.md §14).
public struct OrientationDetector: Sendable {
    /// The fast path's ring capacity: a 200 ms window at up to 600 Hz; faster sensors get a shorter
    /// window of this many samples.
    public static let restCapacity = 128

    public let configuration: DetectorConfiguration

    /// The orientation last decided: `unknown` before the first decision and after silence.
    public private(set) var orientation: DeviceOrientation = .unknown
    /// The low-passed reading in the gravity-pointing display frame, or nil before the first sample
    /// and after silence.
    public var filteredGravity: Vector3? { primed ? -filteredUp : nil }
    /// Samples dropped as glitches (non-finite, exactly zero, or longer than
    /// `maximumSampleMagnitude`).
    public private(set) var droppedSamples = 0
    /// Times the filter was re-primed after a gap or a backwards timestamp.
    public private(set) var reprimeCount = 0

    /// Nothing is on its way: primed, no candidate waiting to settle, no acceleration being waited
    /// out. A sampler may slow down only then (``SamplingPace``): a decision in progress needs every
    /// sample.
    public var isSettled: Bool {
        primed && slowCandidate == nil && restingDwellCandidate == nil && movingDwellCandidate == nil
            && lastSampleTime >= acceleratingUntil
    }

    /// When the orientation becomes unknown if no sample arrives before (nil: nothing to forget), so
    /// a caller's timer can wait for exactly that moment instead of checking at a fixed period.
    public var silenceDeadline: Double? { primed ? lastSampleTime + configuration.silenceTimeout : nil }

    // Precomputed thresholds (sines and cosines), so the per-sample path needs few trigonometric calls.
    private let sinFaceEnter: Double
    private let sinFaceExit: Double
    private let sinUprightMaximum: Double
    private let sinUprightMinimum: Double
    private let sinOverheadEnter: Double
    private let sinOverheadExit: Double
    private let cosHysteresisLine: Double
    private let restingDwellLine: DwellLine
    private let movingDwellLine: DwellLine
    private let sinStartupFace: Double
    private let cosRestSpread: Double
    private let cosStartupSpread: Double
    private let cosSettleDrift: Double
    private let cosDwellAgreement: Double
    private let cosDwellDrift: Double
    private let cosDwellMovingSpread: Double
    private let gyroSettleRate: Double

    private var primed = false
    private var lastSampleTime = -Double.infinity
    /// The time between the last two samples (0 after a re-prime): a wait ends at the sample within
    /// a quarter of it of its end (``waited(_:for:)``).
    private var sampleInterval = 0.0
    private var filteredUp = Vector3.zero
    /// The gravity estimate from the gyroscope and the accelerometer, fed while samples carry a rate.
    private var fusion: GravityFusion
    /// Whether the gyroscope can be believed; while it cannot, the accelerometer alone decides.
    private var gyroscopeCheck: GyroscopeCheck
    /// The gyroscope's verdict (``GyroscopeCheck``): `failed` while evidence against it holds.
    public var gyroscopeVerdict: GyroscopeCheck.Verdict { gyroscopeCheck.verdict }
    /// The gravity estimate the last sample gave (``GravityEstimate``): the fusion's while samples
    /// carry a rate (and for a sample without one soon after, so it does not jump to the low-pass,
    /// which trails a turn), else the low-pass. nil before the first sample.
    public private(set) var estimate: GravityEstimate?
    /// The last sample that carried a rate.
    private var lastRateTime = -Double.infinity
    /// The last sample carried a rotation rate.
    private var gyroscopeFed = false
    /// ...and the fusion's estimate is reliable (``GravityFusion/isReliable``): `judgedUp` is the
    /// fused gravity's.
    private var fused = false
    /// The up vector the slow path and the dwell rule judge: `filteredUp`, or with a gyroscope the
    /// fused one (of gravity's length).
    private var judgedUp = Vector3.zero
    /// The low-pass turned by the gyroscope as it goes (`filteredUp` with each step's measured turn
    /// applied before the reading pulls it): where the low-pass is heading, not trailing a turn by
    /// its speed times the time constant. While the fusion is not yet anchored
    /// (``GravityFusion/isReliable``) the slow path's candidate is read from it, and whether the
    /// candidate has settled: a gyroscope switched on in mid-turn adds no more trail, and a device
    /// swinging in a pocket keeps turning, so the low-pass never stops drifting, yet the turn stays
    /// inside the candidate.
    private var turnedUp = Vector3.zero
    /// With a gyroscope: the last sample's rate, the judged up vector where the present turn began
    /// (the last sample turning slower than `gyroSettleRate`), the last rate faster than that and
    /// when, and when such a rate last pointed against the one before it (``headingInto(_:at:ahead:)``).
    private var previousRate = Vector3.zero
    private var turnStart: Vector3?
    private var lastFastRate = Vector3.zero
    private var lastFastTime = -Double.infinity
    private var reversedAt = -Double.infinity
    private var acceleratingUntil = -Double.infinity
    private var overheadLocked = false
    private var slowCandidate: DeviceOrientation?
    private var slowCandidateSince = 0.0
    private var slowCandidateDirection = Vector3.zero
    /// The orientation the last change left, if the dwell rule made it, and the direction in the
    /// screen plane it was made at (unit, x and y): returning to it by the dwell rule needs the
    /// device turned back by twice the margin from that direction, so a hand wobbling about the
    /// diagonal, which pauses past the line at each turn, changes the orientation once, not at each
    /// pause. Measured from where the change was made, not from the axis: a pose taken far past the
    /// line is left by a turn of the same size as one taken at it (detection.md §15).
    private var leftByDwell: (orientation: DeviceOrientation, x: Double, y: Double)?
    private var restingDwellCandidate: DeviceOrientation?
    private var restingDwellSince = 0.0
    private var restingDwellDirection = Vector3.zero
    /// With a gyroscope: since when the low-passed pose has agreed with the resting one.
    private var restingDwellAgreedSince: Double?
    private var movingDwellCandidate: DeviceOrientation?
    private var movingDwellSince = 0.0
    private var movingDwellSum = Vector3.zero
    /// With a gyroscope: how long the candidate has lasted while the device turned (was not still),
    /// and the time of its last sample.
    private var movingDwellTurning = 0.0
    private var movingDwellLast = 0.0
    private var restTimes: [Double]
    private var restVectors: [Vector3]
    private var restCount = 0
    private var restNext = 0

    /// A detector with the given parameters; call ``DetectorConfiguration/validate()`` first for
    /// parameters from a user.
    public init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
        func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
        sinFaceEnter = sin(radians(configuration.faceEnterTilt))
        sinFaceExit = sin(radians(configuration.faceExitTilt))
        sinUprightMaximum = sin(radians(configuration.uprightMaximumTilt))
        sinUprightMinimum = sin(radians(configuration.uprightMinimumTilt))
        sinOverheadEnter = sin(radians(configuration.overheadEnterTilt))
        sinOverheadExit = sin(radians(configuration.overheadExitTilt))
        cosHysteresisLine = cos(radians(45 + configuration.adjacentHysteresis / 2))
        restingDwellLine = DwellLine(margin: configuration.dwellMargin)
        movingDwellLine = DwellLine(margin: configuration.dwellMovingMargin)
        // From `unknown` the face band is split at its middle: either side holds once chosen.
        sinStartupFace = sin(radians((configuration.faceEnterTilt + configuration.faceExitTilt) / 2))
        cosRestSpread = cos(radians(configuration.restSpread))
        cosStartupSpread = cos(radians(configuration.startupSpread))
        cosSettleDrift = cos(radians(configuration.settleDrift))
        cosDwellAgreement = cos(radians(configuration.dwellAgreement))
        cosDwellDrift = cos(radians(configuration.dwellDrift))
        cosDwellMovingSpread = cos(radians(configuration.dwellMovingSpread))
        gyroSettleRate = radians(configuration.gyroSettleRate)
        var fusionSettings = GravityFusion.Settings()
        fusionSettings.gravity = configuration.gravity
        fusionSettings.correctionTime = configuration.gyroCorrectionTime
        fusionSettings.stillRate = radians(configuration.gyroStillRate)
        // A restart is trusted after the stillness that settles a candidate: the same physics (a
        // far pose is still for less), and a gyroscope switched on mid-turn costs no more.
        fusionSettings.anchorTime = configuration.gyroStillSettleTime
        fusion = GravityFusion(settings: fusionSettings)
        var checkSettings = GyroscopeCheck.Settings()
        checkSettings.gravity = configuration.gravity
        gyroscopeCheck = GyroscopeCheck(settings: checkSettings)
        restTimes = Array(repeating: 0, count: Self.restCapacity)
        restVectors = Array(repeating: .zero, count: Self.restCapacity)
    }

    /// Feeds one sample; returns the change it caused, if any.
    ///
    /// A sample after a silence longer than `silenceTimeout` first reports `unknown` (and starts
    /// afresh); it cannot decide an orientation itself, so at most one change results.
    public mutating func process(_ sample: AccelerationSample) -> OrientationChange? {
        let silenceChange = advance(to: sample.time)
        let reading = sample.vector
        let magnitude = reading.magnitude
        guard reading.isFinite, magnitude > 0, magnitude <= configuration.maximumSampleMagnitude else {
            droppedSamples += 1
            return silenceChange
        }
        let up = -reading
        let time = sample.time
        let interval = time - lastSampleTime
        if !primed || interval > configuration.gapReprime || interval < 0 {
            reprime(with: up, at: time)
            fuse(sample)
            // After a silence this sample only starts afresh, so the `unknown` is never displaced.
            if silenceChange != nil { return silenceChange }
        } else if interval == 0 {
            return silenceChange  // a duplicate timestamp carries no new time
        } else {
            lastSampleTime = time
            sampleInterval = interval
            let alpha = interval / (configuration.filterTimeConstant + interval)
            filteredUp = filteredUp + alpha * (up - filteredUp)
            if let rate = sample.rotationRate, rate.isFinite, gyroscopeFed {
                let turn = rate - fusion.bias
                let turned = Quaternion(axis: turn, angle: -turn.magnitude * interval).rotate(turnedUp)
                turnedUp = turned + alpha * (up - turned)
            } else {
                turnedUp = filteredUp
            }
            recordRest(up, at: time)
            fuse(sample)
        }
        return decide(at: time)
    }

    /// Sets the direction judged: the fused gravity while samples carry a rotation rate and the
    /// fusion is anchored (started afresh from the accelerometer when rates begin), else the
    /// low-pass, exactly as without a gyroscope.
    private mutating func fuse(_ sample: AccelerationSample) {
        if let rate = sample.rotationRate, rate.isFinite {
            previousRate = gyroscopeFed ? fusion.rotationRate : .zero
            if !gyroscopeFed { fusion.restart() }
            gyroscopeFed = true
            let gravity = fusion.process(time: sample.time, reading: sample.vector, rotationRate: rate)
            lastRateTime = sample.time
            estimate = GravityEstimate(
                time: sample.time, gravity: gravity, rotationRate: fusion.rotationRate, isAnchored: fusion.isReliable,
                stillFor: fusion.stillFor)
            _ = gyroscopeCheck.observe(
                time: sample.time, rate: rate, reading: sample.vector, lastReanchor: fusion.lastReanchor)
            fused = fusion.isReliable && gyroscopeCheck.verdict == .working
            judgedUp = fused ? -gravity : filteredUp
            let now = fusion.rotationRate
            if now.magnitude > gyroSettleRate {
                if now.dot(lastFastRate) < 0, sample.time - lastFastTime <= configuration.gyroSettleHorizon {
                    reversedAt = sample.time
                }
                lastFastRate = now
                lastFastTime = sample.time
            } else {
                turnStart = fused ? judgedUp : nil
            }
        } else {
            gyroscopeFed = false
            fused = false
            judgedUp = filteredUp
            let sinceRate = sample.time - lastRateTime
            if sinceRate >= 0, sinceRate <= fusion.settings.maximumGap, let gravity = fusion.gravity {
                estimate = GravityEstimate(time: sample.time, gravity: gravity, isAnchored: fusion.isReliable)
            } else {
                estimate = GravityEstimate(time: sample.time, gravity: -filteredUp)
            }
        }
    }

    /// The last reading is known to have stood until `time`: a motion interrupt armed while the
    /// device rested did not fire. The detector takes it as if that reading had repeated until
    /// then, so the next sample is neither a gap to re-prime after nor the end of a silence.
    public mutating func hold(until time: Double) {
        guard primed, time > lastSampleTime else { return }
        lastSampleTime = time
    }

    /// Tells the detector that time has passed without samples (the caller's timer).
    ///
    /// Returns the change to `unknown` once nothing has arrived for `silenceTimeout`; the change is
    /// dated at the deadline, not at `time`.
    public mutating func advance(to time: Double) -> OrientationChange? {
        guard primed, time - lastSampleTime >= configuration.silenceTimeout else { return nil }
        let deadline = lastSampleTime + configuration.silenceTimeout
        primed = false
        forgetCandidates()
        guard orientation != .unknown else { return nil }
        return accept(.unknown, at: deadline)
    }

    // MARK: - Deciding

    private mutating func decide(at time: Double) -> OrientationChange? {
        let filteredMagnitude = filteredUp.magnitude
        if filteredMagnitude < configuration.freeFallMagnitude {
            acceleratingUntil = time + configuration.accelerationHoldoff
            slowCandidate = nil
            return nil
        }
        // A filter primed this sample holds that one reading, not a sustained acceleration: a car's
        // or a stride's single peak there would hold the first decision for the whole hold-off.
        if sampleInterval > 0, abs(filteredMagnitude - configuration.gravity) > configuration.accelerationTolerance {
            acceleratingUntil = time + configuration.accelerationHoldoff
        }
        updateOverheadLock(sinTilt: judgedUp.z / judgedUp.magnitude)

        // The rest test once per sample: the fast path and the dwell rule judge the same samples.
        let rest = restingDirection(over: configuration.restWindow, excusingJolt: true)
        let resting = rest?.excusedJolt == false ? rest?.mean : nil
        let ahead = turnAhead()
        // With a gyroscope a rest is no rest while the device turns out of the candidate: turned about
        // its own centre, a device's accelerometer reads gravity alone, and agrees with itself near a
        // flick's far pose.
        if let candidate = fastCandidate(rest: rest), !(ahead.map { turnLeaves(candidate, to: $0) } ?? false) {
            return accept(candidate, at: time)
        }
        if let change = restingDwell(resting: resting, at: time) { return change }
        if let change = movingDwell(at: time, ahead: ahead) { return change }

        // With a gyroscope's guidance (below) the candidate is read from the turned low-pass until
        // the fusion is anchored, and the first orientation is the nearest one, as the fast path's
        // start-up takes it: nothing is shown yet to hold, and a pocket's swing tips the device past
        // the upright window for half of each stride.
        let guided = fused || gyroscopeFed && gyroscopeCheck.verdict == .working
        let seen = guided && !fused ? turnedUp : judgedUp
        let asked = guided && orientation == .unknown ? startupCandidate(seen) : classify(seen)
        guard let candidate = asked, candidate != orientation else {
            slowCandidate = nil
            return nil
        }
        // Settling means the candidate stays the same *and* the filtered direction stops moving: a
        // filter that is still following a turn would otherwise hand over whatever orientation the
        // turn passes through (lifting a phone off a table past upside-down). With a gyroscope the
        // turn is measured: a candidate settles unless the device turns out of it (``turnAhead()``).
        // Before the fusion is anchored, a working gyroscope still measures the turn: the low-pass
        // turned by it (`turnedUp`) shows where the low-pass is heading, and the turn ahead of that
        // must not leave the candidate.
        let direction = (1 / judgedUp.magnitude) * judgedUp
        let moving =
            fused
            ? ahead.map { turnLeaves(candidate, to: $0) } ?? false
            : guided
                ? turnLeaves(candidate, to: turnAhead(of: turnedUp) ?? turnedUp)
                : direction.dot(slowCandidateDirection) < cosSettleDrift
        if candidate != slowCandidate || moving {
            slowCandidate = candidate
            // With a gyroscope the wait begins at the first sample that shows the turn no longer
            // leaving, not at the last that showed it leaving: a sample period earlier would let a
            // slow sensor's glance (out, straight back) pass for a settled pose.
            slowCandidateSince = guided && moving ? .infinity : time
            slowCandidateDirection = direction
        } else if slowCandidateSince == .infinity {
            slowCandidateSince = time
        }
        let dwell = candidate.isFlat ? configuration.faceDwell : configuration.settleTime
        // A candidate the gyroscope shows the device at rest in needs no more than a glance's
        // turnaround could pass for (``DetectorConfiguration/gyroStillSettleTime``), and no hold-off:
        // still means not turning *and* the accelerometer back at gravity's length, agreeing.
        let stillInside =
            fused && !candidate.isFlat && fusion.isStill
            && waited(fusion.stillFor, for: configuration.gyroStillSettleTime)
        guard
            stillInside || headingInto(candidate, at: time, ahead: ahead)
                || waited(time - slowCandidateSince, for: dwell) && time >= acceleratingUntil
        else {
            return nil
        }
        return accept(candidate, at: time)
    }

    /// With a gyroscope: an upright candidate the turn is still speeding up into needs no settle time.
    /// A smooth (minimum-jerk) turn speeds up for its first half, so one still speeding up will go at
    /// least as far again; if that least extent stays short of the candidate's axis, and the turn
    /// ahead lies in the candidate, the turn is heading *into* it, not passing through (a half turn
    /// crossing landscape's line has gone 67.5°, and as far again is 135°: past landscape's axis). A
    /// turn that began as a reversal (a fast rate the other way within `gyroSettleHorizon`: a flick's
    /// far pose) does not count: its speeding up is the flick coming back.
    private func headingInto(_ candidate: DeviceOrientation, at time: Double, ahead: Vector3?) -> Bool {
        guard fused, let ahead, let start = turnStart, let axis = Self.uprightAxis(candidate),
            classify(ahead) == candidate, time - reversedAt > configuration.gyroSettleHorizon
        else { return false }
        let rate = fusion.rotationRate
        guard previousRate.dot(rate) < rate.dot(rate) else { return false }
        return 2 * start.angle(to: judgedUp) < start.angle(to: Vector3(axis.x, axis.y, 0))
    }

    /// Whether a wait is over after `elapsed` seconds between samples (``waitIsOver(_:for:period:)``).
    /// The dwell rule's waits and the start-up's span are bounds a glance's pause or a moving device
    /// must not pass, and are kept exactly (detection.md §9.4).
    private func waited(_ elapsed: Double, for wait: Double) -> Bool {
        waitIsOver(elapsed, for: wait, period: sampleInterval)
    }

    /// With a gyroscope, where the judged up vector would be after `gyroSettleHorizon` if the device
    /// kept turning at its present rate; nil without a gyroscope or while it turns slower than
    /// `gyroSettleRate`. A decision is held back while this lies outside its candidate: the turn may
    /// be passing through, or coming back. One that ends inside (a turn decelerating onto its pose, a
    /// body settling as it lies down) holds nothing back.
    private func turnAhead() -> Vector3? {
        fused ? turnAhead(of: judgedUp) : nil
    }

    /// Where `up` would be after `gyroSettleHorizon` at the gyroscope's present rate; nil while it
    /// turns slower than `gyroSettleRate`.
    private func turnAhead(of up: Vector3) -> Vector3? {
        let rate = fusion.rotationRate
        guard rate.magnitude > gyroSettleRate else { return nil }
        // Gravity, seen from the device, turns by −ω; the up vector with it.
        return Quaternion(axis: rate, angle: -rate.magnitude * configuration.gyroSettleHorizon).rotate(up)
    }

    /// Whether a turn that would carry the up vector to `ahead` (``turnAhead()``) leaves `candidate`:
    /// `ahead` asks for another orientation, or lies in the band that holds the current one. A pose
    /// beyond the upright window's tilt (tipped far back or screen down, short of a face state)
    /// holds whatever is shown, so a turn heading there does not leave an upright candidate: a
    /// phone in a pocket stood up with, turning from face up through portrait at 200 °/s, would
    /// otherwise look ahead past the upright window and wait for the turn to end.
    ///
    /// From `unknown` the candidate is the start-up's (``startupCandidate(_:)``), and so is `ahead`'s.
    private func turnLeaves(_ candidate: DeviceOrientation, to ahead: Vector3) -> Bool {
        if orientation == .unknown { return startupCandidate(ahead) != candidate }
        if let asked = classify(ahead) { return asked != candidate }
        guard Self.uprightAxis(candidate) != nil else { return true }
        let sinTilt = ahead.z / ahead.magnitude
        let tippedOut = sinTilt >= sinUprightMaximum || sinTilt <= sinUprightMinimum
        return !(tippedOut && abs(sinTilt) < sinFaceEnter)
    }

    /// The fast path: a new orientation read from raw samples at rest, or nil. A face state needs the
    /// longer `faceRestWindow` of rest, in which a landing's jolt is excused (`faceJoltTime`).
    ///
    /// From `unknown` the nearest orientation is taken (``startupCandidate(_:)``), and sooner: two
    /// samples over `startupRestWindow` suffice if they agree within `startupSpread` and each lies
    /// within `startupMagnitudeTolerance` of gravity. Agreement alone proves nothing (a flick's far
    /// pose, a step's bounce hold still for an instant); agreement that close to gravity's length
    /// leaves a moving device no room: a linear acceleration strong enough to move the reading far
    /// changes its length or its direction from one sample to the next (detection.md §17). The two
    /// must be distinct readings: a polled sensor read twice between its samples returns one reading
    /// twice.
    private func fastCandidate(rest: Rest?) -> DeviceOrientation? {
        if orientation == .unknown {
            // A working gyroscope that measures a turn says what two agreeing readings cannot: a
            // device raised at 65°/s moves 1.3° between two readings 20 ms apart, inside the spread,
            // and the start-up would show the pose it is leaving.
            let turning = fusion.rotationRate.magnitude >= fusion.settings.stillRate
            if gyroscopeFed, gyroscopeCheck.verdict == .working, turning { return nil }
            let still =
                restingDirection(
                    over: configuration.startupRestWindow, minimumSamples: 2, cosSpread: cosStartupSpread,
                    magnitudeTolerance: configuration.startupMagnitudeTolerance, strictSpan: true)?.mean
                ?? (rest?.excusedJolt == false ? rest?.mean : nil)
            return still.flatMap(startupCandidate)
        }
        guard let rest, let candidate = classify(rest.mean), candidate != orientation else { return nil }
        // A jolt is excused only on the way to a face state: a device laid on a surface lands.
        if rest.excusedJolt, !candidate.isFlat { return nil }
        if candidate.isFlat, configuration.faceRestWindow > configuration.restWindow {
            guard let longer = restingDirection(over: configuration.faceRestWindow, excusingJolt: true),
                classify(longer.mean) == candidate
            else {
                return nil
            }
        }
        return candidate
    }

    /// The dwell rule at rest: the raw samples rest (the fast path's test), their mean lies past the
    /// dwell line, the low-passed pose has caught up with it to within `dwellAgreement`, and it has
    /// stayed so, at rest and within `dwellDrift` of where it began, for `dwellTime`. A pose a person
    /// has settled into is taken even outside the hysteresis band.
    ///
    /// Why the low-passed pose: a hand that turns past the line, pauses and turns back rests there
    /// for an instant too. The filter trails a turn by its speed times τ and catches up only while
    /// the device stays, so a pause at the end of a quick turn ends before it agrees, and a pose
    /// reached slowly and held agrees soon (detection.md §17). Why the drift: the rest test lets a
    /// hand starting back pass for a few samples, and the reading then meets the filter half way;
    /// only a pose that stays put shows the filter catching up.
    ///
    /// With a gyroscope the stillness is measured: the device has turned slower than the still rate
    /// for `gyroDwellTime`, longer than a glance's pause.
    private mutating func restingDwell(resting: Vector3?, at time: Double) -> OrientationChange? {
        let agrees = resting.map { filteredUp.dot($0) >= cosDwellAgreement * filteredUp.magnitude * $0.magnitude }
        if agrees != true { restingDwellAgreedSince = nil }
        guard let resting, let target = dwellTarget(resting, line: restingDwellLine), fused || agrees == true else {
            restingDwellCandidate = nil
            return nil
        }
        let direction = (1 / resting.magnitude) * resting
        if target != restingDwellCandidate || direction.dot(restingDwellDirection) < cosDwellDrift {
            restingDwellCandidate = target
            restingDwellSince = time
            restingDwellDirection = direction
        }
        if fused {
            // Either evidence suffices: the gyroscope's stillness, or the low-pass caught up (the
            // rule without a gyroscope), each long enough that a glance's pause never passes it.
            if agrees == true, restingDwellAgreedSince == nil { restingDwellAgreedSince = time }
            let byFilter = restingDwellAgreedSince.map { time - max($0, restingDwellSince) >= configuration.dwellTime }
            guard fusion.stillFor >= configuration.gyroDwellTime || byFilter == true else { return nil }
        } else {
            guard time - restingDwellSince >= configuration.dwellTime else { return nil }
        }
        return accept(target, at: time, byDwell: resting)
    }

    /// The dwell rule in motion: walking or carried, the raw samples never rest, and the low-passed
    /// vector still sways a few degrees with each step. A candidate begins when the low-passed
    /// direction crosses the dwell line; it lasts while that direction stays on the candidate's side
    /// of the diagonal and the acceleration gate is clear, and it is accepted once it has lasted
    /// `dwellMovingTime` and the mean direction since it began lies past the dwell line. A turn that
    /// merely passes through never lasts; a pose held past the line does, whatever the steps do.
    ///
    /// With a gyroscope the fused direction does not trail a turn, so a glance that pauses past the
    /// line lies past it for its whole pause; but a device walked with is never still, and a pause
    /// is. Only the time the device turns counts then, and it must reach `gyroMovingDwellTime`; and
    /// nothing is taken while the device turns back across the diagonal (``turnAhead()``). The fused
    /// direction is not swayed by the steps either, so its line is the resting one (`dwellMargin`),
    /// and a direction that leaves the spread of the mean starts the mean afresh: the device has
    /// turned on to another pose (a body lying down tilts on after the line), which must now last.
    private mutating func movingDwell(at time: Double, ahead: Vector3?) -> OrientationChange? {
        guard time >= acceleratingUntil, Self.uprightAxis(orientation) != nil else {
            movingDwellCandidate = nil
            return nil
        }
        let line = fused ? restingDwellLine : movingDwellLine
        let direction = (1 / judgedUp.magnitude) * judgedUp
        if let candidate = movingDwellCandidate, dwellTarget(judgedUp, line: .diagonal) == candidate {
            if fused, direction.dot(movingDwellSum) < cosDwellMovingSpread * movingDwellSum.magnitude {
                movingDwellSince = time
                movingDwellSum = .zero
                movingDwellTurning = 0
            }
            movingDwellSum = movingDwellSum + direction
            if fusion.stillFor == 0, dwellTarget(judgedUp, line: line) == candidate {
                movingDwellTurning += time - movingDwellLast
            }
        } else if let target = dwellTarget(judgedUp, line: line) {
            movingDwellCandidate = target
            movingDwellSince = time
            movingDwellSum = direction
            movingDwellTurning = 0
        } else {
            movingDwellCandidate = nil
            return nil
        }
        movingDwellLast = time
        let lasted =
            fused
            ? movingDwellTurning >= configuration.gyroMovingDwellTime
            : time - movingDwellSince >= configuration.dwellMovingTime
        guard lasted, let candidate = movingDwellCandidate,
            dwellTarget(movingDwellSum, line: line) == candidate,
            direction.dot(movingDwellSum) >= cosDwellMovingSpread * movingDwellSum.magnitude,
            ahead.map({ dwellTarget($0, line: .diagonal) == candidate }) ?? true
        else { return nil }
        return accept(candidate, at: time, byDwell: judgedUp)
    }

    /// The neighbour `up` asks for under the dwell rule, or nil: the current orientation is upright,
    /// the tilt lies in the upright window, the overhead lock is off, and the direction in the screen
    /// plane lies past the dwell line (`45° + dwellMargin / 2` from the current axis) towards an axis
    /// other than the current one.
    private func dwellTarget(_ up: Vector3, line: DwellLine) -> DeviceOrientation? {
        guard let current = Self.uprightAxis(orientation), !overheadLocked else { return nil }
        let magnitude = up.magnitude
        guard magnitude >= configuration.freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        let planar = (up.x * up.x + up.y * up.y).squareRoot()
        guard sinTilt < sinUprightMaximum, sinTilt > sinUprightMinimum, planar > 0 else { return nil }
        let nearest = Self.nearestUpright(up)
        guard nearest != orientation else { return nil }
        guard (up.x * current.x + up.y * current.y) / planar <= line.cosLine else { return nil }
        if let left = leftByDwell, nearest == left.orientation {
            guard (up.x * left.x + up.y * left.y) / planar <= line.cosReturnTurn else { return nil }
        }
        return nearest
    }

    /// The first orientation (from `unknown`): the nearest one, without the hold bands (there is
    /// nothing to hold yet, and either neighbour of a diagonal is as good as the other). Screen-down
    /// between the upright limit and the split of the face band gives the upright orientation its
    /// direction asks for: nothing is there to flip from, so the overhead lock has nothing to hold.
    private func startupCandidate(_ up: Vector3) -> DeviceOrientation? {
        let magnitude = up.magnitude
        guard magnitude >= configuration.freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        if sinTilt >= sinStartupFace { return .faceUp }
        if sinTilt <= -sinStartupFace { return .faceDown }
        return up.x == 0 && up.y == 0 ? nil : Self.nearestUpright(up)
    }

    /// A dwell line as the cosine of its angle from the current axis, `45° + margin / 2`, and of the
    /// turn back, twice the margin, that a return to the orientation a dwell change left needs from
    /// the direction the change was made at.
    private struct DwellLine {
        var cosLine: Double
        var cosReturnTurn: Double

        init(margin: Double) {
            cosLine = cos((45 + margin / 2) * .pi / 180)
            cosReturnTurn = cos(2 * margin * .pi / 180)
        }

        /// The diagonal itself (no margin).
        static let diagonal = DwellLine(margin: 0)
    }

    private static func nearestUpright(_ up: Vector3) -> DeviceOrientation {
        abs(up.y) >= abs(up.x)
            ? (up.y >= 0 ? .portrait : .portraitUpsideDown)
            : (up.x >= 0 ? .landscapeLeft : .landscapeRight)
    }

    /// The orientation `up` asks for, given the current one; nil where the current orientation
    /// should simply hold (tilt between the upright window and the face threshold, inside the
    /// hysteresis dead zone, overhead, or too short to mean anything).
    private func classify(_ up: Vector3) -> DeviceOrientation? {
        let magnitude = up.magnitude
        guard magnitude >= configuration.freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        if sinTilt >= sinFaceEnter { return .faceUp }
        if sinTilt <= -sinFaceEnter { return .faceDown }
        if orientation.isFlat, abs(sinTilt) >= sinFaceExit { return nil }
        // From a face state screen-down poses short of it are upright too: there is no upright
        // orientation the overhead lock could be holding (as from `unknown`).
        guard sinTilt < sinUprightMaximum,
            orientation.isFlat || sinTilt > sinUprightMinimum && !overheadLocked
        else { return nil }

        // Direction in the screen plane: 0° top edge up, 90° left edge down (landscapeLeft).
        let planar = (up.x * up.x + up.y * up.y).squareRoot()
        let nearest = Self.nearestUpright(up)
        if nearest != orientation, let current = Self.uprightAxis(orientation) {
            // Stay unless the direction is past the hysteresis line measured from the current
            // orientation's axis (67.5° with the default 45° gap).
            let cosFromCurrent = (up.x * current.x + up.y * current.y) / planar
            if cosFromCurrent > cosHysteresisLine { return nil }
        }
        return nearest
    }

    /// The unit direction of the up vector for each upright orientation, in the screen plane.
    private static func uprightAxis(_ orientation: DeviceOrientation) -> (x: Double, y: Double)? {
        switch orientation {
        case .portrait: (0, 1)
        case .portraitUpsideDown: (0, -1)
        case .landscapeLeft: (1, 0)
        case .landscapeRight: (-1, 0)
        case .unknown, .faceUp, .faceDown: nil
        }
    }

    private mutating func updateOverheadLock(sinTilt: Double) {
        if sinTilt <= sinOverheadEnter {
            overheadLocked = true
        } else if sinTilt >= sinOverheadExit {
            overheadLocked = false
        }
    }

    /// Takes `candidate`; `byDwell` is the up vector the dwell rule took it at, if it did.
    private mutating func accept(
        _ candidate: DeviceOrientation, at time: Double, byDwell: Vector3? = nil
    )
        -> OrientationChange
    {
        let change = OrientationChange(time: time, from: orientation, to: candidate)
        leftByDwell = byDwell.map { up in
            let planar = (up.x * up.x + up.y * up.y).squareRoot()
            return (orientation, up.x / planar, up.y / planar)
        }
        orientation = candidate
        slowCandidate = nil
        restingDwellCandidate = nil
        movingDwellCandidate = nil
        return change
    }

    // MARK: - Filter and rest window

    /// Restarts the filter from `up` after a gap or a backwards timestamp; the orientation holds.
    ///
    /// The rest window is emptied (samples from before the gap prove nothing about now), but the
    /// slow path's candidate is kept: if this sample agrees with the one before the gap, two
    /// readings a gap apart agree, which is what a slow (1 Hz) sensor can offer. A stale first
    /// sample after a resume is outvoted by the next one, which resets the candidate.
    private mutating func reprime(with up: Vector3, at time: Double) {
        if primed { reprimeCount += 1 }
        primed = true
        lastSampleTime = time
        sampleInterval = 0
        filteredUp = up
        turnedUp = up
        fusion.restart()
        acceleratingUntil = -Double.infinity
        restingDwellCandidate = nil
        movingDwellCandidate = nil
        restCount = 0
        restNext = 0
        recordRest(up, at: time)
    }

    private mutating func forgetCandidates() {
        slowCandidate = nil
        restingDwellCandidate = nil
        movingDwellCandidate = nil
        restCount = 0
        restNext = 0
    }

    private mutating func recordRest(_ up: Vector3, at time: Double) {
        restTimes[restNext] = time
        restVectors[restNext] = up
        restNext = (restNext + 1) % Self.restCapacity
        restCount = min(restCount + 1, Self.restCapacity)
    }

    /// A rest the newest samples show: their mean up vector, and whether a landing's jolt was
    /// excused in it (``restingDirection(over:minimumSamples:cosSpread:magnitudeTolerance:excusingJolt:strictSpan:)``).
    private struct Rest {
        var mean: Vector3
        var excusedJolt: Bool
    }

    /// The rest of the newest samples over `span` seconds, if they show one: at least
    /// `minimumSamples` (default `restMinimumSamples`) samples reaching back `span` (to within a quarter
    /// period, ``waited(_:for:)``; exactly, and from distinct readings, with `strictSpan`), each within
    /// `magnitudeTolerance` (default `restMagnitudeTolerance`) of gravity and within the spread
    /// (default `restSpread`, given as its cosine) of their mean direction.
    ///
    /// `excusingJolt`: samples off gravity's length by no more than `accelerationTolerance`, spanning
    /// at most `faceJoltTime`, are a landing's jolt when they point with the rest; they are left out of
    /// the mean and the rest says so. One pass serves both the strict test and the excusing one.
    private func restingDirection(
        over span: Double, minimumSamples: Int? = nil, cosSpread: Double? = nil, magnitudeTolerance: Double? = nil,
        excusingJolt: Bool = false, strictSpan: Bool = false
    ) -> Rest? {
        let minimumSamples = minimumSamples ?? configuration.restMinimumSamples
        let magnitudeTolerance = magnitudeTolerance ?? configuration.restMagnitudeTolerance
        let newest = (restNext - 1 + Self.restCapacity) % Self.restCapacity
        let newestTime = restTimes[newest]
        var sum = Vector3.zero
        var count = 0
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
            if examined == restCount {
                // History does not reach back `span`: too early after (re)priming, unless the ring is
                // full because the sensor is fast, in which case its samples are plenty. Not for the
                // start-up: its repeats are skipped, so a full ring may hold only two readings.
                guard restCount == Self.restCapacity, !strictSpan else { return nil }
                break
            }
            let vector = restVectors[index]
            let time = restTimes[index]
            examined += 1
            let offGravity = abs(vector.magnitude - configuration.gravity)
            if offGravity > magnitudeTolerance {
                guard excusingJolt, offGravity <= configuration.accelerationTolerance,
                    (newestJolt ?? time) - time <= configuration.faceJoltTime
                else { return nil }
                if newestJolt == nil { newestJolt = time }
            } else if strictSpan, vector == newer {
                if count == 1 { spanEnd = time }
                index = (index - 1 + Self.restCapacity) % Self.restCapacity
                continue
            } else {
                sum = sum + vector
                count += 1
            }
            newer = vector
            let spanned = strictSpan ? spanEnd - time >= span : waited(newestTime - time, for: span)
            if count >= minimumSamples, spanned { break }
            index = (index - 1 + Self.restCapacity) % Self.restCapacity
        }
        guard count >= minimumSamples else { return nil }
        let mean = (1 / Double(count)) * sum
        let meanMagnitude = mean.magnitude
        let cosSpread = cosSpread ?? cosRestSpread
        index = newest
        for _ in 0..<examined {
            let vector = restVectors[index]
            if vector.dot(mean) < cosSpread * vector.magnitude * meanMagnitude { return nil }
            index = (index - 1 + Self.restCapacity) % Self.restCapacity
        }
        return Rest(mean: mean, excusedJolt: newestJolt != nil)
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
