/// The daemon's detection pipeline from a sensor-frame reading to device-orientation changes: the
/// gravity scale learned at rest (for sensors whose scale is wrong), the mount matrix, then the
/// detector.
///
/// Every source goes through this one type (real sensors, trace replay, stdin), so `orientd replay`
/// and the tests exercise exactly what the daemon runs.
public struct OrientationPipeline: Sendable {
    /// Sensor axes → display axes (`device = M · raw`); replaced when another sensor is used.
    public var mountMatrix: MountMatrix
    public private(set) var detector: OrientationDetector
    /// Rescales a sensor whose gravity at rest reads far from 1 g (``GravityScaleLearner``).
    public private(set) var gravityScale: GravityScaleLearner

    public init(mountMatrix: MountMatrix = .identity, configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.mountMatrix = mountMatrix
        self.detector = OrientationDetector(configuration: configuration)
        self.gravityScale = GravityScaleLearner(gravity: configuration.gravity)
    }

    /// The orientation last decided.
    public var orientation: DeviceOrientation { detector.orientation }

    /// Feeds a reading in the sensor's frame (m/s², gravity-pointing), with the gyroscope's (rad/s,
    /// same axes) when there is one, or a gyroscope of its own's already in the display frame
    /// (`displayRotationRate`); returns the change it caused.
    public mutating func process(
        time: Double, reading: Vector3, rotationRate: Vector3? = nil, displayRotationRate: Vector3? = nil
    ) -> OrientationChange? {
        let scaled = gravityScale.process(time: time, reading: reading).reading
        return detector.process(
            AccelerationSample(
                time: time, vector: mountMatrix.apply(scaled),
                rotationRate: rotationRate.map(mountMatrix.applyToRotation) ?? displayRotationRate))
    }

    /// A sensor-frame reading as the detector sees it: rescaled by the gravity scale learned so far,
    /// in the display frame. The sampling pace judges rest on this too (``SamplingPace``).
    public func displayReading(_ reading: Vector3) -> Vector3 {
        mountMatrix.apply(gravityScale.factor * reading)
    }

    /// Another sensor (or the same one re-read): what was learned of the last one's scale is forgotten.
    public mutating func forgetGravityScale() {
        gravityScale.restart(forgetFactor: true)
    }

    /// The last reading stood until `time`; see ``OrientationDetector/hold(until:)``.
    public mutating func hold(until time: Double) {
        detector.hold(until: time)
    }

    /// The device may have turned unseen (the system slept); see ``OrientationDetector/startAfresh(at:)``.
    public mutating func startAfresh(at time: Double) {
        detector.startAfresh(at: time)
    }

    /// Lets time pass without samples; see ``OrientationDetector/advance(to:)``.
    public mutating func advance(to time: Double) -> OrientationChange? {
        detector.advance(to: time)
    }
}
