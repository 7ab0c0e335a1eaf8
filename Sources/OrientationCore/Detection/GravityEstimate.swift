/// The one estimate of gravity a sample gives, made once per sample by the detector
/// (``OrientationDetector/estimate``): from its ``GravityFusion`` while samples carry a rotation
/// rate, from its low-pass of the accelerometer without one. The motion topic reads it
/// (``MotionEstimator``), so what it streams and what the detector judges come from the same fusion
/// with the same settings (`gyro-correction-time` among them).
public struct GravityEstimate: Sendable, Hashable {
    /// The sample's time (seconds, in the samples' clock).
    public var time: Double
    /// Gravity in the display frame, m/s², pointing the way it pulls (upright portrait reads
    /// (0, −9.81, 0)).
    public var gravity: Vector3
    /// The sample's rotation rate with the gyroscope's learned bias removed (rad/s), nil when the
    /// sample carried none.
    public var rotationRate: Vector3?
    /// Whether the estimate may be relied on: the low-pass always is (it is the accelerometer,
    /// smoothed); the fusion once anchored (``GravityFusion/isReliable``).
    public var isAnchored: Bool
    /// How long the gyroscope has shown the device still, in seconds (0 without one).
    public var stillFor: Double

    public init(
        time: Double, gravity: Vector3, rotationRate: Vector3? = nil, isAnchored: Bool = true, stillFor: Double = 0
    ) {
        self.time = time
        self.gravity = gravity
        self.rotationRate = rotationRate
        self.isAnchored = isAnchored
        self.stillFor = stillFor
    }
}
