import OrientationCore

/// What a source of a gyroscope in a device of its own reports (an HID sensor hub's `gyro_3d`, a
/// gyroscope's own IIO device); an IMU's gyroscope comes with its accelerometer's samples instead
/// (``SensorSample/rotationRate``).
public enum GyroscopeEvent: Sendable, Hashable {
    /// A gyroscope was found (at start or plugged in): what is read, for the log
    /// (`iio:device2 (gyro_3d)`), its mount matrix (sensor axes → display axes), and what its
    /// attributes got wrong that was worked around (warnings: a matrix that cannot be parsed).
    case available(name: String, mountMatrix: MountMatrix, problems: [String] = [])
    /// None: none found, or removed, or (`unusable`) one found that cannot be read (a scale that
    /// converts nothing, a place in a convertible's base). The accelerometer decides alone.
    case unavailable(reason: String, unusable: Bool = false)
    /// A reading: monotonic seconds and rad/s about the sensor's axes (right-hand rule).
    case rate(time: Double, rate: Vector3)
    /// It cannot be read (said once per episode; the next rate ends it): the accelerometer decides
    /// alone meanwhile.
    case lost(reason: String)
}

/// A source of a gyroscope in a device of its own (the one shape of every source, ``SensorSource``):
/// sampled only while the daemon asks, which is while the device moves.
public protocol GyroscopeSource: SensorSource where Event == GyroscopeEvent {}
