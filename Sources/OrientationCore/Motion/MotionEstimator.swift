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

/// Turns readings of the accelerometer, with the detector's gravity estimate of each
/// (``GravityEstimate``), into ``MotionSample``s.
///
/// Gravity is the estimate's: with a gyroscope the detector's ``GravityFusion`` (the same fusion,
/// with the same settings, that the orientation is judged on), without one the accelerometer
/// low-passed (as W3C's GravitySensor is on such devices), and then there is no rate and no
/// attitude. The attitude integrates the estimate's rotation rate, its tilt held to the estimate's
/// gravity at every sample (so only its turn about gravity is free to drift).
///
/// The attitude's reference is fixed at the first sample with a rate and kept for as long as the
/// estimator lives: across a gap, a slow sensor's long steps or samples without a rate, the attitude
/// keeps its heading (nothing measured the turn about gravity meanwhile) and is tilted onto gravity
/// again at the next sample with a rate. Starting it afresh there would hand apps a new reference
/// they cannot tell from a turn.
///
/// A pure state machine: time comes in with each estimate.
public struct MotionEstimator: Sendable {
    /// A step between two samples with a rate up to this long is integrated into the attitude (a
    /// sensor read at 4 Hz or faster); a longer one keeps the heading.
    public static let maximumIntegratedStep = 0.25
    /// Readings longer than this (m/s²) are glitches, dropped: beyond the range of any phone's or
    /// tablet's accelerometer (±16 g at most).
    public static let maximumReading = 32 * 9.81
    /// Rates faster than this (rad/s) are glitches, dropped: beyond any MEMS gyroscope's range
    /// (±4000 °/s at most, 70 rad/s).
    public static let maximumRate = 100.0
    /// A sample this little before the last one is a repeat or out of order, dropped; further back,
    /// the clock started again (the detector starts afresh too).
    public static let maximumBackstep = 0.1

    private var lastTime = -Double.infinity
    /// The last sample with a rate: the attitude integrates from it.
    private var lastRateTime = -Double.infinity
    private var attitude: Quaternion?
    /// Gravity in the reference frame (the device's frame at the first sample with a gyroscope).
    private var referenceGravity = Vector3.zero

    public init() {}

    /// Feeds one sample: the accelerometer's reading in the display frame (m/s², gravity-pointing)
    /// and the detector's estimate from it. Returns the motion it gives, or nil for a reading that
    /// carries nothing (not finite, zero, beyond any sensor's range, or not later than the last).
    public mutating func process(reading: Vector3, estimate: GravityEstimate) -> MotionSample? {
        let time = estimate.time
        let length = reading.magnitude
        guard time.isFinite, reading.isFinite, length > 0, length <= Self.maximumReading,
            estimate.rotationRate.map({ $0.isFinite && $0.magnitude <= Self.maximumRate }) ?? true
        else { return nil }
        let interval = time - lastTime
        if interval <= 0, interval > -Self.maximumBackstep { return nil }
        lastTime = time
        let gravity = estimate.gravity
        guard let rate = estimate.rotationRate else {
            return MotionSample(time: time, gravity: gravity, userAcceleration: reading - gravity)
        }
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
        // Hold the attitude's tilt to the estimate's gravity: the gravity it predicts in the device's
        // frame is turned onto the estimate by θ about their cross product, so the device's frame
        // is turned by −θ about it (atan2 of |a × b| and a · b keeps small angles exact).
        let predicted = turned.conjugate.rotate(referenceGravity)
        let axis = predicted.cross(gravity)
        let angle = atan2(axis.magnitude, predicted.dot(gravity))
        turned = (turned * Quaternion(axis: axis, angle: -angle)).normalized
        attitude = turned
        return MotionSample(
            time: time, gravity: gravity, userAcceleration: reading - gravity, rotationRate: rate, attitude: turned)
    }
}
