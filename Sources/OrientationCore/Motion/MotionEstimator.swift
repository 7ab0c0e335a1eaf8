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
    /// The device's attitude relative to its own attitude at the first sample with a gyroscope: it
    /// turns a vector of the device's frame now into that reference frame. Its turn about gravity
    /// drifts slowly (nothing measures it), as Android's game rotation vector's does; nil without a
    /// gyroscope.
    public var attitude: Quaternion?

    public init(
        time: Double, gravity: Vector3, userAcceleration: Vector3, rotationRate: Vector3? = nil,
        attitude: Quaternion? = nil
    ) {
        self.time = time
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.rotationRate = rotationRate
        self.attitude = attitude
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
/// A pure state machine: time comes in with each sample.
public struct MotionEstimator: Sendable {
    /// τ of the low-pass that gives gravity without a gyroscope.
    public let filterTimeConstant: Double
    /// A longer gap between samples starts afresh (the attitude's reference too).
    public let maximumGap: Double

    private var fusion: GravityFusion
    private var lowPass: Vector3?
    private var lastTime = -Double.infinity
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
    /// carries nothing (not finite, zero, or not later than the last).
    public mutating func process(time: Double, reading: Vector3, rotationRate: Vector3?) -> MotionSample? {
        guard reading.isFinite, reading.magnitude > 0, rotationRate?.isFinite ?? true else { return nil }
        let interval = time - lastTime
        if interval <= 0, interval > -maximumGap { return nil }
        let fresh = !(interval > 0 && interval <= maximumGap)
        lastTime = time
        if fresh {
            lowPass = reading
            fusion.restart()
            attitude = nil
        } else if let previous = lowPass {
            lowPass = previous + (interval / (filterTimeConstant + interval)) * (reading - previous)
        }
        guard let rotationRate else {
            attitude = nil
            let gravity = lowPass ?? reading
            return MotionSample(time: time, gravity: gravity, userAcceleration: reading - gravity)
        }
        let gravity = fusion.process(time: time, reading: reading, rotationRate: rotationRate)
        let rate = fusion.rotationRate
        guard var turned = attitude else {
            attitude = .identity
            referenceGravity = gravity
            return MotionSample(
                time: time, gravity: gravity, userAcceleration: reading - gravity, rotationRate: rate,
                attitude: .identity)
        }
        if !fresh { turned = turned * Quaternion(rotationVector: interval * rate) }
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
