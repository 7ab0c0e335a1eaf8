#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import OrientationCore

/// A working accelerometer part: what it turns a true reading into. Calibration, noise, resolution,
/// range and an HID sensor hub's change-only reporting are modelled, because each of them makes a
/// working part's values hold still or stray in ways a fault policy must accept.
public struct SimulatedAccelerometer: Sendable {
    /// m/s² per count: the device's `scale`.
    public var countStep: Double
    /// The full-scale range, ± this many m/s²; readings beyond clip.
    public var range: Double
    /// White noise, m/s² (one standard deviation) per axis.
    public var noise: Double
    /// Per-axis gain (1 ± a few %) and offset (m/s²; up to 30 mg on phone parts).
    public var gain = SIMD3<Double>(1, 1, 1)
    public var offset = SIMD3<Double>(0, 0, 0)
    /// An axis without noise: with a device turned in its own plane its value is exactly constant.
    public var exactAxis: Int?
    /// HID sensor hubs report an axis only when it moved by more than this (m/s²) since the last
    /// report; nil for parts read directly.
    public var changeSensitivity: Double?

    private var reported = SIMD3<Double>(repeating: .nan)

    public init(
        countStep: Double, range: Double, noise: Double, exactAxis: Int? = nil, changeSensitivity: Double? = nil
    ) {
        self.countStep = countStep
        self.range = range
        self.noise = noise
        self.exactAxis = exactAxis
        self.changeSensitivity = changeSensitivity
    }

    /// A part of `bits` bits over ±`rangeInG` g (6 bits over ±1.5 g is the MMA7660's 21.3 counts per g).
    public static func quantised(bits: Int, rangeInG: Double, noiseInG: Double) -> SimulatedAccelerometer {
        let range = rangeInG * standardGravity
        return SimulatedAccelerometer(
            countStep: 2 * range / Double(1 << bits), range: range, noise: noiseInG * standardGravity)
    }

    /// The `scale` attribute as IIO prints it (IIO_VAL_INT_PLUS_NANO: nine decimals).
    public var scaleText: String {
        let nanos = Int((countStep * 1e9).rounded())
        let fraction = String(nanos % 1_000_000_000)
        return "\(nanos / 1_000_000_000).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)\n"
    }

    /// Draws a calibration within a phone part's tolerances: gain ±`gainError`, offset ±`offsetInG` g.
    public mutating func calibrate(gainError: Double, offsetInG: Double, random: inout SimulationRandom) {
        for axis in 0..<3 {
            gain[axis] = 1 + random.uniform(-gainError, gainError)
            offset[axis] = random.uniform(-offsetInG, offsetInG) * standardGravity
        }
    }

    /// The raw counts the part gives for a true reading (m/s², gravity-pointing).
    public mutating func measure(_ truth: Vector3, random: inout SimulationRandom) -> Vector3 {
        let values = SIMD3(truth.x, truth.y, truth.z)
        var raw = SIMD3<Double>(repeating: 0)
        for axis in 0..<3 {
            let noisy = values[axis] * gain[axis] + offset[axis] + (axis == exactAxis ? 0 : noise * random.gaussian())
            let clipped = min(max(noisy, -range), range - countStep)
            let counts = clipped / countStep
            if let changeSensitivity {
                // Change-only reporting: the hub sends a new value only beyond its sensitivity.
                if !(abs(counts - reported[axis]) <= changeSensitivity / countStep) {
                    reported[axis] = counts.rounded()
                }
                raw[axis] = reported[axis]
            } else {
                raw[axis] = counts.rounded()
            }
        }
        return Vector3(raw[0], raw[1], raw[2])
    }
}

/// 9.80665 m/s².
public let standardGravity = 9.80665
