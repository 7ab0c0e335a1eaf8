#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Gravity from the gyroscope and the accelerometer together: a complementary filter on the
/// direction of gravity in the device's frame (detection-log.md §18).
///
/// Why: the accelerometer alone cannot tell gravity from the device's own acceleration, so the
/// detector low-passes it and waits for it to settle. A gyroscope measures the turn itself and is
/// blind to linear acceleration: the estimate is turned by each rotation-rate reading as it comes
/// (following a turn without lag) and pulled toward the accelerometer's direction only slowly
/// (`correctionTime`), and only by readings near gravity's length, so the steps of a walk, a car's
/// bumps or a flick's lever arm do not tilt it. The slow pull is what removes the gyroscope's drift.
///
/// The gyroscope's bias (0.5–3 °/s on phone parts, and it moves with temperature) is learned while
/// the device is still: at rest the true rate is zero, so the mean reading *is* the bias. Until it is
/// learned the drift it causes is bounded by the correction: bias × `correctionTime`.
///
/// **Trusted only once anchored.** A restart (the first sample, a gap, a gyroscope switched on in
/// the middle of a motion) begins from the accelerometer's reading, which may be anything but
/// gravity then (a flick's lever arm reads up to 2 g). The estimate is ``isReliable`` only once the
/// device has been still (turning slower than `stillRate` at gravity's length) for `anchorTime`,
/// when it is set to the reading, or once the correction has pulled it as far as `convergenceTime` of
/// uninterrupted correction would (time alone is no correction: a shake's readings are rarely near
/// gravity's length, and a restart at its peak stays as wrong as it began). Once
/// reliable, a device still for `reanchorTime` whose accelerometer disagrees is re-anchored: nothing
/// but a wrong estimate (or a steady push that long) explains it.
///
/// A pure state machine: time comes in with each sample.
public struct GravityFusion: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Standard gravity, m/s².
        public var gravity: Double = 9.81
        /// Time constant of the pull toward the accelerometer's direction while the device moves.
        public var correctionTime: Double = 0.5
        /// ...and while it is still (the accelerometer is then gravity itself, so trust it sooner).
        public var stillCorrectionTime: Double = 0.1
        /// Degrees between the accelerometer's direction and the estimate beyond which they disagree
        /// (then the device is not still, whatever the gyroscope says: a push or a drifted estimate).
        public var disagreement: Double = 5.0
        /// While they disagree and the gyroscope measures no turn, the difference is the device's
        /// own acceleration (a push, a braking car): the pull is this much weaker (four times slower)
        /// until `reanchorTime` says the estimate itself is wrong.
        public var pushWeight: Double = 0.25
        /// While the device moves the bias is learned from the correction itself (Mahony's integral
        /// term): an estimate that keeps drifting the same way, which the accelerometer keeps pulling
        /// back, has that drift added to the bias, by this gain (1/s²). About the axis of gravity
        /// nothing is learned this way (nothing measures a turn about it).
        public var biasGain: Double = 0.2
        /// A reading further than this from gravity's length (m/s²) does not correct at all; nearer,
        /// its weight falls linearly with the distance.
        public var accelerationTolerance: Double = 2.0
        /// Still: the rotation rate, the bias removed, below this (rad/s; 0.1 rad/s is 5.7 °/s, above
        /// a hand's sway and tremor, 1–3 °/s), the reading within `stillAccelerationTolerance` of
        /// gravity's length (m/s²) and within `disagreement` of the estimate.
        public var stillRate: Double = 0.1
        public var stillAccelerationTolerance: Double = 0.5
        /// Time constant of the bias's mean while still.
        public var biasTime: Double = 2.0
        /// A reading of a rate beyond this (rad/s) is not trusted as a bias (a gyroscope whose bias
        /// is this large is faulty: phone parts are specified to a few degrees a second).
        public var maximumBias: Double = 0.35
        /// A longer gap between samples restarts the estimate from the accelerometer: a rate cannot
        /// be integrated over it (a polled gyroscope read at a rest pace, or switched off).
        public var maximumGap: Double = 0.1
        /// A step whose rate changes by more than this (rad/s) times the step's length (s) cannot be
        /// integrated from its two ends (a shake read at 25 Hz: rates of ±6 rad/s reversing five
        /// times a second): the estimate restarts, as after a gap. 0.1 rad, about 6° of doubt.
        public var maximumStepChange: Double = 0.1
        /// Still this long after a restart anchors the estimate to the accelerometer: a flick's far
        /// pose or a shake's reversal is still for milliseconds, a glance's of 75° or more out in up
        /// to 0.5 s for less than 40 ms (`gyro-still-settle-time`, which ``GravityEstimator`` passes
        /// here).
        /// Counted from the restart's own sample when that is still, and met at the sample within a
        /// quarter period of it, as the detector's waits are: a gyroscope switched on as a turn ends
        /// (the daemon's pace goes fast, detection-log.md §16) then costs the anchor no extra period.
        public var anchorTime: Double = 0.04
        /// Correction this long anchors it too (three correction times: e⁻³ of the restart's error
        /// left), counting the readings near enough gravity's length to pull or agreeing with the
        /// estimate, not the time itself: a shake's readings do neither for most of it.
        public var convergenceTime: Double = 1.5
        /// Still this long while the accelerometer disagrees re-anchors a reliable estimate.
        public var reanchorTime: Double = 0.3

        public init() {}
    }

    public let settings: Settings
    /// The estimate of gravity in the device's frame (m/s², gravity-pointing, of gravity's length),
    /// nil before the first sample.
    public private(set) var gravity: Vector3?
    /// The gyroscope's bias as learned so far (rad/s).
    public private(set) var bias = Vector3.zero
    /// The rotation rate of the last sample with the bias removed (rad/s).
    public private(set) var rotationRate = Vector3.zero
    /// How long the device has been still (the rate below `stillRate`, the accelerometer at
    /// gravity's length and agreeing with the estimate) as of the last sample, in seconds: the
    /// evidence of rest the gyroscope gives.
    public var stillFor: Double { stillSince.map { lastTime - $0 } ?? 0 }
    /// The last sample was still (``stillFor`` counts from the first of the run).
    public var isStill: Bool { stillSince != nil }
    /// The estimate is anchored (see the type's notes); before, a caller should not rely on it.
    public private(set) var isReliable = false
    /// The last re-anchoring: when, and by how many degrees the estimate was set back.
    public private(set) var lastReanchor: (time: Double, angle: Double)?

    private var lastTime = -Double.infinity
    private var stillSince: Double?
    /// Since when the rate has been low at gravity's length, whatever the estimate says, and since
    /// when the accelerometer has disagreed meanwhile.
    private var slowSince: Double?
    private var slowReading: Vector3?
    private var disagreeingSince: Double?
    /// The share of the restart's error that uninterrupted correction would have left by now,
    /// counting only the readings that could correct it or confirm it.
    private var errorLeft = 1.0
    /// The last sample's rate (bias removed): a step turns by the mean of the rates at its two ends.
    private var lastRate: Vector3?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Feeds one sample: the accelerometer's reading (m/s², gravity-pointing) and the gyroscope's
    /// (rad/s, same axes, right-hand rule). Returns the new estimate.
    @discardableResult
    public mutating func process(time: Double, reading: Vector3, rotationRate measured: Vector3) -> Vector3 {
        let interval = time - lastTime
        let length = reading.magnitude
        guard length > 0, reading.isFinite, measured.isFinite else { return gravity ?? reading }
        let unintegrable = lastRate.map { ((measured - bias) - $0).magnitude * interval > settings.maximumStepChange }
        guard let estimate = gravity, interval >= 0, interval <= settings.maximumGap, unintegrable != true else {
            // The first sample, or after a gap or a backwards timestamp: start from the accelerometer.
            restart()
            gravity = (settings.gravity / length) * reading
            rotationRate = measured - bias
            lastTime = time
            errorLeft = 1
            // A first sample that shows rest begins a still run (see `anchorTime`).
            if showsRest(rate: rotationRate, length: length) {
                slowSince = time
                slowReading = reading
            }
            return gravity!
        }
        guard interval > 0 else { return estimate }
        lastTime = time
        let rate = measured - bias
        rotationRate = rate
        // The world stands still while the device turns by ω: gravity, seen from the device, turns
        // by −ω (dg/dt = g × ω). The mean of the step's two rates halves a rate's half-step lag.
        let stepRate = 0.5 * (rate + (lastRate ?? rate))
        lastRate = rate
        var turned = Quaternion(axis: stepRate, angle: -stepRate.magnitude * interval).rotate(estimate)

        let off = abs(length - settings.gravity)
        let target = (settings.gravity / length) * reading
        let agrees = turned.dot(reading) >= cos(settings.disagreement * .pi / 180) * turned.magnitude * length
        // Slow: not turning, at gravity's length, and pointing where it pointed when that began (a
        // shake without a turn passes gravity's length at each reversal, each time elsewhere).
        var slow = showsRest(rate: rate, length: length)
        if slow, let first = slowReading,
            first.dot(reading) < cos(settings.disagreement * .pi / 180) * first.magnitude * length
        {
            slow = false
        }
        if slow {
            if slowSince == nil {
                slowSince = time
                slowReading = reading
            }
        } else {
            slowSince = nil
            slowReading = nil
        }
        let slowFor = slowSince.map { time - $0 } ?? 0
        if slow && !agrees {
            if disagreeingSince == nil { disagreeingSince = time }
        } else {
            disagreeingSince = nil
        }
        let disagreeingFor = disagreeingSince.map { time - $0 } ?? 0
        let anchoredByRest = slowSince != nil && waitIsOver(slowFor, for: settings.anchorTime, period: interval)
        if !isReliable && (anchoredByRest || errorLeft <= exp(-settings.convergenceTime / settings.correctionTime))
            || isReliable && disagreeingFor >= settings.reanchorTime
        {
            if isReliable {
                let cosine = max(-1, min(1, turned.dot(target) / (turned.magnitude * target.magnitude)))
                lastReanchor = (time, acos(cosine) * 180 / .pi)
            }
            if slowFor > 0 || isReliable { turned = target }
            // Anchored by stillness, the device has been still since that began: the estimate was
            // merely unknown then, and the rate, the length and the direction already showed rest.
            if !isReliable, slowFor > 0 { stillSince = slowSince }
            isReliable = true
        }
        let still = slow && (agrees || turned == target)
        if still {
            if stillSince == nil { stillSince = time }
            if measured.magnitude < settings.maximumBias {
                let weight = interval / (settings.biasTime + interval)
                bias = bias + weight * (measured - bias)
            }
        } else {
            stillSince = nil
        }
        // A reading near enough gravity's length to pull, or agreeing with the estimate whatever its
        // length (a walk's bounce lies along gravity), is a correction step toward anchoring; one
        // that neither pulls nor agrees (a shake's peak) shows nothing of the restart's error.
        if agrees || off < settings.accelerationTolerance {
            errorLeft *= settings.correctionTime / (settings.correctionTime + interval)
        }
        if off < settings.accelerationTolerance {
            let trust = 1 - off / settings.accelerationTolerance
            let pushed = slow && !still ? settings.pushWeight : 1
            let weight =
                pushed * trust * interval
                / ((still ? settings.stillCorrectionTime : settings.correctionTime) + interval)
            if !still, isReliable {
                // ĝ × â is the bias's error perpendicular to gravity, to first order (a gyroscope
                // reading b too much turns the estimate by ĝ × b a second, away from â).
                let g = (1 / turned.magnitude) * turned
                let a = (1 / length) * reading
                let error = g.cross(a)
                let learned = bias + (trust * settings.biasGain * interval) * error
                if learned.magnitude < settings.maximumBias { bias = learned }
            }
            turned = turned + weight * (target - turned)
        }
        let magnitude = turned.magnitude
        gravity = magnitude > 0 ? (settings.gravity / magnitude) * turned : estimate
        return gravity!
    }

    /// Not turning (the bias removed) and at gravity's length: a sample that may be at rest.
    private func showsRest(rate: Vector3, length: Double) -> Bool {
        rate.magnitude < settings.stillRate && abs(length - settings.gravity) < settings.stillAccelerationTolerance
    }

    /// Forgets the estimate (a gap, another sensor); the bias learned is kept.
    public mutating func restart() {
        gravity = nil
        stillSince = nil
        slowSince = nil
        slowReading = nil
        disagreeingSince = nil
        lastRate = nil
        isReliable = false
        lastTime = -Double.infinity
    }
}
