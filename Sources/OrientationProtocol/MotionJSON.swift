import OrientationCore

/// The rates of the `motion` topic and the JSON of its events (docs/protocol.md, "motion").
public enum MotionRate {
    /// The slowest and fastest rates a subscriber may ask for, in Hz.
    public static let minimum = 1.0
    public static let maximum = 100.0
    /// Without `rate`: fast enough to draw a level or a tilt by, slow enough for any client.
    public static let defaultRate = 20.0
    /// Clients other than root and the control group get at most this: motion reveals what a person
    /// types and says (gyroscope side channels), and W3C's Generic Sensor API and Android 12 cap
    /// untrusted readers of motion sensors at 60 and 200 Hz (W3C's is the lower).
    public static let unprivilegedMaximum = 60.0

    /// The rate a subscriber gets: what it asked for (or the default), at most the unprivileged
    /// cap for a client that is not root or in the control group, and at most the sensor's rate
    /// when it is known.
    public static func granted(asked: Double?, isPrivileged: Bool, sensorRate: Double?) -> Double {
        var rate = asked ?? defaultRate
        if !isPrivileged { rate = min(rate, unprivilegedMaximum) }
        if let sensorRate, sensorRate > 0 { rate = min(rate, sensorRate) }
        return rate
    }

    /// A motion event's own fields: m/s² to 0.1 mm/s² and rad/s to 10 µrad/s (below any phone
    /// sensor's resolution), the attitude as `[w, x, y, z]` to six places.
    public static func fields(_ sample: MotionSample) -> [(key: String, value: JSONValue)] {
        /// Rounded to `places`; a value too large to scale is written as it is (JSON has no
        /// infinity: an overflow would have become null).
        func rounded(_ value: Double, _ places: Double) -> JSONValue {
            let scaled = value * places
            return .number(scaled.isFinite ? scaled.rounded() / places : value)
        }
        func vector(_ v: Vector3, _ places: Double) -> JSONValue {
            .array([v.x, v.y, v.z].map { rounded($0, places) })
        }
        return [
            ("gravity", vector(sample.gravity, 1e4)),
            ("userAcceleration", vector(sample.userAcceleration, 1e4)),
            ("rotationRate", sample.rotationRate.map { vector($0, 1e5) } ?? .null),
            (
                "attitude",
                sample.attitude.map { q in .array([q.w, q.x, q.y, q.z].map { rounded($0, 1e6) }) }
                    ?? .null
            ),
        ]
    }
}
