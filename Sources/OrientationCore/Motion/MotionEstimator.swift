#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One sample of the device's motion, as the `motion` topic carries it (docs/protocol.md): the
/// quantities of CoreMotion's `CMDeviceMotion`, in orientd's display frame (detection.md §1).
public struct MotionSample: Sendable, Hashable {
    /// Seconds, in the samples' clock.
    public var time: Double
    /// Gravity in the device's frame, m/s², pointing the way it pulls (upright portrait reads
    /// (0, −9.81, 0)).
    public var gravity: Vector3
    /// The rest of the accelerometer's reading, m/s²: `gravity + userAcceleration` is the reading,
    /// as in CoreMotion (a device pushed toward its right edge reads a negative x).
    public var userAcceleration: Vector3
    /// rad/s about the device's axes, right-hand rule, the gyroscope's learned bias removed; nil
    /// without a gyroscope.
    public var rotationRate: Vector3?
    /// The device's attitude relative to its own attitude at the first sample with a gyroscope (of
    /// the stream; the hub gives each subscriber its own first sample): it turns a vector of the
    /// device's frame now into that reference frame. Its turn about gravity
    /// drifts slowly (nothing measures it), as Android's game rotation vector's does; nil without a
    /// gyroscope.
    public var attitude: Quaternion?
    /// The attitude's reference is this sample's frame (the stream's first sample with a rate): a
    /// subscriber that counts its own reference from a later sample starts it afresh here.
    public var startsAttitude: Bool

    public init(
        time: Double, gravity: Vector3, userAcceleration: Vector3, rotationRate: Vector3? = nil,
        attitude: Quaternion? = nil, startsAttitude: Bool = false
    ) {
        self.time = time
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.rotationRate = rotationRate
        self.attitude = attitude
        self.startsAttitude = startsAttitude
    }
}

/// Turns readings of the accelerometer (and the gyroscope, when there is one) into
/// ``MotionSample``s.
///
/// With a gyroscope, gravity is ``GravityFusion``'s and the attitude integrates the rotation rate,
/// its tilt held to the fused gravity at every sample (so only its turn about gravity is free to
/// drift). Without one, gravity is the accelerometer low-passed (as W3C's GravitySensor is on such
/// devices), and there is no rate and no attitude.
///
/// The attitude's reference is fixed at the first sample with a rate and kept for as long as the
/// estimator lives: across a gap, a slow sensor's long steps or samples without a rate, the attitude
/// keeps its heading (nothing measured the turn about gravity meanwhile) and is tilted onto gravity
/// again at the next sample with a rate. Starting it afresh there would hand apps a new reference
/// they cannot tell from a turn.
///
/// A pure state machine: time comes in with each sample.
public struct MotionEstimator: Sendable {
    /// τ of the low-pass that gives gravity without a gyroscope.
    public let filterTimeConstant: Double
    /// A longer gap between samples starts the low-pass afresh (the fusion has the same limit).
    public let maximumGap: Double
    /// A step between two samples with a rate up to this long is integrated into the attitude (a
    /// sensor read at 4 Hz or faster); a longer one keeps the heading.
    public static let maximumIntegratedStep = 0.25
    /// Readings longer than this (m/s²) are glitches, dropped: beyond the range of any phone's or
    /// tablet's accelerometer (±16 g at most).
    public static let maximumReading = 32 * 9.81
    /// Rates faster than this (rad/s) are glitches, dropped: beyond any MEMS gyroscope's range
    /// (±4000 °/s at most, 70 rad/s).
    public static let maximumRate = 100.0

    private var fusion: GravityFusion
    private var lowPass: Vector3?
    private var lastTime = -Double.infinity
    /// The last sample with a rate: the attitude integrates from it.
    private var lastRateTime = -Double.infinity
    private var attitude: Quaternion?
    /// Gravity in the reference frame (the device's frame at the first sample with a gyroscope).
    private var referenceGravity = Vector3.zero

    public init(fusion: GravityFusion.Settings = GravityFusion.Settings(), filterTimeConstant: Double = 0.2) {
        self.fusion = GravityFusion(settings: fusion)
        self.filterTimeConstant = filterTimeConstant
        maximumGap = fusion.maximumGap
    }

    /// Feeds one sample in the display frame: the accelerometer's reading (m/s², gravity-pointing)
    /// and the gyroscope's (rad/s), if any. Returns the motion it gives, or nil for a reading that
    /// carries nothing (not finite, zero, beyond any sensor's range, or not later than the last).
    public mutating func process(time: Double, reading: Vector3, rotationRate: Vector3?) -> MotionSample? {
        let length = reading.magnitude
        guard time.isFinite, reading.isFinite, length > 0, length <= Self.maximumReading,
            rotationRate.map({ $0.isFinite && $0.magnitude <= Self.maximumRate }) ?? true
        else { return nil }
        let interval = time - lastTime
        if interval <= 0, interval > -maximumGap { return nil }
        lastTime = time
        if let previous = lowPass, interval > 0, interval <= maximumGap {
            lowPass = previous + (interval / (filterTimeConstant + interval)) * (reading - previous)
        } else {
            lowPass = reading
        }
        guard let rotationRate else {
            // The gyroscope's last estimate while it is recent, so gravity does not jump to the
            // low-pass (which trails a turn) for one sample.
            let recent = time - lastRateTime >= 0 && time - lastRateTime <= maximumGap
            let gravity = (recent ? fusion.gravity : nil) ?? lowPass ?? reading
            return MotionSample(time: time, gravity: gravity, userAcceleration: reading - gravity)
        }
        let gravity = fusion.process(time: time, reading: reading, rotationRate: rotationRate)
        let rate = fusion.rotationRate
        let step = time - lastRateTime
        lastRateTime = time
        guard var turned = attitude else {
            attitude = .identity
            referenceGravity = gravity
            return MotionSample(
                time: time, gravity: gravity, userAcceleration: reading - gravity, rotationRate: rate,
                attitude: .identity, startsAttitude: true)
        }
        if step > 0, step <= Self.maximumIntegratedStep { turned = turned * Quaternion(rotationVector: step * rate) }
        // Hold the attitude's tilt to the fused gravity: the gravity it predicts in the device's
        // frame is turned onto the fused one by θ about their cross product, so the device's frame
        // is turned by −θ about it (atan2 of |a × b| and a · b keeps small angles exact).
        let predicted = turned.conjugate.rotate(referenceGravity)
        let axis = Vector3(
            predicted.y * gravity.z - predicted.z * gravity.y, predicted.z * gravity.x - predicted.x * gravity.z,
            predicted.x * gravity.y - predicted.y * gravity.x)
        let angle = atan2(axis.magnitude, predicted.dot(gravity))
        turned = (turned * Quaternion(axis: axis, angle: -angle)).normalized
        attitude = turned
        return MotionSample(
            time: time, gravity: gravity, userAcceleration: reading - gravity, rotationRate: rate, attitude: turned)
    }
}
