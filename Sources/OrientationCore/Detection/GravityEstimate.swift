/// The one estimate of gravity a sample gives, made once per sample by the detector's
/// ``GravityEstimator`` (``OrientationDetector/estimate``): from its ``GravityFusion`` while samples
/// carry a rotation rate, from its low-pass of the accelerometer without one. The detector's rules
/// read it without asking what made it, and the motion topic reads it (``MotionEstimator``), so what
/// it streams and what the detector judges come from the same fusion with the same settings
/// (`gyro-correction-time` among them).
public struct GravityEstimate: Sendable, Hashable {
    /// The sample's time (seconds, in the samples' clock).
    public var time: Double
    /// Gravity in the display frame, m/s², pointing the way it pulls (upright portrait reads
    /// (0, −9.81, 0)): the fusion's while samples carry a rate (and for a sample without one soon
    /// after, so it does not jump to the low-pass, which trails a turn), else the low-pass.
    public var gravity: Vector3
    /// The sample's rotation rate with the gyroscope's learned bias removed (rad/s), nil when the
    /// sample carried none.
    public var rotationRate: Vector3?
    /// Whether ``up`` follows a turn as it happens and is not tilted by linear acceleration: the
    /// fusion, anchored (``GravityFusion/isReliable``), with a gyroscope that can be believed.
    /// Otherwise ``up`` trails a turn by its speed times the low-pass's time constant.
    public var isAnchored: Bool
    /// How long the gyroscope has shown the device still, in seconds (0 without one).
    public var stillFor: Double
    /// The gyroscope shows the device still now: turning slower than the still rate, the
    /// accelerometer at gravity's length (``GravityFusion/isStill``).
    public var isStill: Bool
    /// The up vector the rules judge (the negated reading, Android's sign; of about gravity's length):
    /// the fused gravity while anchored; before that, with a gyroscope that can be believed, the
    /// low-pass turned by it as it goes (heading where the low-pass is heading, not trailing); else
    /// the low-pass.
    public var up: Vector3
    /// The low-passed reading's up vector: its length is gravity's while the device does not
    /// accelerate (the gates read it), its direction trails a turn.
    public var lowPassUp: Vector3
    /// The turn a gyroscope that can be believed measures; nil without one.
    public var turn: MeasuredTurn?

    public init(
        time: Double, gravity: Vector3, rotationRate: Vector3? = nil, isAnchored: Bool = false, stillFor: Double = 0,
        isStill: Bool = false, up: Vector3? = nil, lowPassUp: Vector3? = nil, turn: MeasuredTurn? = nil
    ) {
        self.time = time
        self.gravity = gravity
        self.rotationRate = rotationRate
        self.isAnchored = isAnchored
        self.stillFor = stillFor
        self.isStill = isStill
        self.up = up ?? -gravity
        self.lowPassUp = lowPassUp ?? -gravity
        self.turn = turn
    }
}

/// A turn a believed gyroscope measures, as the rules read it.
public struct MeasuredTurn: Sendable, Hashable {
    /// The rate, bias removed (rad/s).
    public var rate: Vector3
    /// Faster than the still rate (`gyro-still-rate`).
    public var isTurning: Bool
    /// Faster than on the sample before, in the same sense: a smooth (minimum-jerk) turn speeds up
    /// for its first half.
    public var isSpeedingUp: Bool
    /// Where ``GravityEstimate/up`` would be after `gyro-settle-horizon` if the device kept turning
    /// at this rate; nil while it turns slower than `gyro-settle-rate` (no turn under way).
    public var heading: Vector3?
    /// The anchored up vector where the present turn began (the last sample slower than
    /// `gyro-settle-rate`); nil when it began unanchored.
    public var start: Vector3?
    /// The present turn began as a reversal: a rate faster than `gyro-settle-rate` pointed against
    /// the one before it within `gyro-settle-horizon` (a flick's far pose, coming back).
    public var isReversal: Bool
}
