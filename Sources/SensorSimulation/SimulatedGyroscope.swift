import OrientationCore

/// A working gyroscope as a simulated session reads it (rad/s, device axes, right-hand rule): the
/// true rate plus a bias of its own per axis, white noise, quantised to its step and clipped at its
/// range. The defaults are a phone's MEMS part at the full scale Linux drivers set (the MPU-6050 and
/// BMI260 at ±2000 °/s, 16 bits: 0.061 °/s a count), with a bias of 0.5–3 °/s as parts leave the
/// factory and noise of 0.1 °/s at 25 Hz.
public struct SimulatedGyroscope: Sendable {
    /// rad/s per count.
    public var countStep = 2000.0 / 32768 * .pi / 180
    /// rad/s either way.
    public var range = 2000.0 * .pi / 180
    /// Standard deviation of the white noise, rad/s.
    public var noise = 0.1 * .pi / 180
    /// rad/s, drawn by ``drawBias(random:)``.
    public var bias = Vector3.zero

    public init() {}

    /// A bias of 0.5–3 °/s in magnitude, in a random direction.
    public mutating func drawBias(random: inout SimulationRandom) {
        let direction = Vector3(random.gaussian(), random.gaussian(), random.gaussian())
        let length = max(direction.magnitude, 1e-9)
        bias = (random.uniform(0.5, 3) * .pi / 180 / length) * direction
    }

    /// What the part reports for a true rate.
    public func measure(_ truth: Vector3, random: inout SimulationRandom) -> Vector3 {
        func axis(_ value: Double, _ bias: Double, _ draw: Double) -> Double {
            let clipped = Swift.min(Swift.max(value + bias + noise * draw, -range), range)
            return (clipped / countStep).rounded() * countStep
        }
        return Vector3(
            axis(truth.x, bias.x, random.gaussian()), axis(truth.y, bias.y, random.gaussian()),
            axis(truth.z, bias.z, random.gaussian()))
    }
}
