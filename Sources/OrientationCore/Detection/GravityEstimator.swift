#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the one ``GravityEstimate`` per sample: one low-pass of the accelerometer, and with a
/// gyroscope one ``GravityFusion`` and the ``GyroscopeCheck`` that says whether to believe it. The
/// rules judge what it makes and never ask how (detection.md, rule 1).
///
/// A pure state machine: time comes in with each sample.
struct GravityEstimator: Sendable {
    let settings: DetectorConfiguration.Estimate
    private let turnRate: Double
    private var lowPassUp = Vector3.zero
    /// The low-pass turned by the gyroscope as it goes (the low-pass with each step's measured turn
    /// applied before the reading pulls it): where the low-pass is heading, not trailing a turn by
    /// its speed times the time constant. Judged while the fusion is not yet anchored: a gyroscope
    /// switched on in mid-turn adds no more trail, and a device swinging in a pocket keeps turning,
    /// so the low-pass never stops drifting, yet the turn stays inside the candidate.
    private var turnedUp = Vector3.zero
    private var fusion: GravityFusion
    private(set) var gyroscopeCheck: GyroscopeCheck
    /// The last sample carried a rotation rate, and when one last did.
    private var gyroscopeFed = false
    private var lastRateTime = -Double.infinity
    /// The turn's history: the rate before this sample's, the anchored up vector where the present
    /// turn began, the last rate faster than `turnRate` and when, and when such a rate last pointed
    /// against the one before it.
    private var previousRate = Vector3.zero
    private var turnStart: Vector3?
    private var lastFastRate = Vector3.zero
    private var lastFastTime = -Double.infinity
    private var reversedAt = -Double.infinity

    init(configuration: DetectorConfiguration) {
        settings = configuration.estimate
        turnRate = configuration.estimate.turnRate * .pi / 180
        var fusionSettings = GravityFusion.Settings()
        fusionSettings.gravity = configuration.gravity
        fusionSettings.correctionTime = settings.correctionTime
        fusionSettings.stillRate = settings.stillRate * .pi / 180
        // A restart is trusted after the stillness that settles a candidate: the same physics (a
        // far pose is still for less), and a gyroscope switched on mid-turn costs no more.
        fusionSettings.anchorTime = configuration.settle.stillTime
        fusion = GravityFusion(settings: fusionSettings)
        var checkSettings = GyroscopeCheck.Settings()
        checkSettings.gravity = configuration.gravity
        gyroscopeCheck = GyroscopeCheck(settings: checkSettings)
    }

    /// Starts afresh from `up` (a first sample, or one after a gap or a backwards timestamp).
    mutating func restart(from up: Vector3) {
        lowPassUp = up
        turnedUp = up
        fusion.restart()
    }

    /// The estimate after `sample` (whose up vector is `up`), `interval` seconds after the one before
    /// (0 right after ``restart(from:)``).
    mutating func update(with sample: AccelerationSample, up: Vector3, interval: Double) -> GravityEstimate {
        if interval > 0 {
            let alpha = interval / (settings.filterTimeConstant + interval)
            lowPassUp = lowPassUp + alpha * (up - lowPassUp)
            if let rate = sample.rotationRate, rate.isFinite, gyroscopeFed {
                let turn = rate - fusion.bias
                let turned = Quaternion(axis: turn, angle: -turn.magnitude * interval).rotate(turnedUp)
                turnedUp = turned + alpha * (up - turned)
            } else {
                turnedUp = lowPassUp
            }
        }
        guard let rate = sample.rotationRate, rate.isFinite else {
            gyroscopeFed = false
            let sinceRate = sample.time - lastRateTime
            let recent = sinceRate >= 0 && sinceRate <= fusion.settings.maximumGap
            return GravityEstimate(
                time: sample.time, gravity: recent ? fusion.gravity ?? -lowPassUp : -lowPassUp, up: lowPassUp,
                lowPassUp: lowPassUp)
        }
        previousRate = gyroscopeFed ? fusion.rotationRate : .zero
        if !gyroscopeFed { fusion.restart() }
        gyroscopeFed = true
        lastRateTime = sample.time
        let gravity = fusion.process(time: sample.time, reading: sample.vector, rotationRate: rate)
        _ = gyroscopeCheck.observe(
            time: sample.time, rate: rate, reading: sample.vector, lastReanchor: fusion.lastReanchor)
        let believed = gyroscopeCheck.verdict == .working
        let anchored = believed && fusion.isReliable
        let judged = anchored ? -gravity : believed ? turnedUp : lowPassUp
        let now = fusion.rotationRate
        let fast = now.magnitude > turnRate
        if fast {
            if now.dot(lastFastRate) < 0, sample.time - lastFastTime <= settings.turnHorizon {
                reversedAt = sample.time
            }
            lastFastRate = now
            lastFastTime = sample.time
        } else {
            turnStart = anchored ? judged : nil
        }
        let turn = MeasuredTurn(
            rate: now, isTurning: now.magnitude >= fusion.settings.stillRate,
            isSpeedingUp: previousRate.dot(now) < now.dot(now),
            // Gravity, seen from the device, turns by −ω; the up vector with it.
            heading: fast ? Quaternion(axis: now, angle: -now.magnitude * settings.turnHorizon).rotate(judged) : nil,
            start: turnStart, isReversal: sample.time - reversedAt <= settings.turnHorizon)
        return GravityEstimate(
            time: sample.time, gravity: gravity, rotationRate: now, isAnchored: anchored, stillFor: fusion.stillFor,
            isStill: fusion.isStill, up: judged, lowPassUp: lowPassUp, turn: believed ? turn : nil)
    }
}
