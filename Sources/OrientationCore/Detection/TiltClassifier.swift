#if canImport(Glibc)
import Glibc
#endif

/// How far the screen faces up or down: the angle between the display plane and the vertical,
/// in the classes iio-sensor-proxy 3.6+ serves as `AccelerometerTilt`.
public enum ScreenTilt: String, Sendable, Hashable, CaseIterable {
    /// Within 20° of upright.
    case vertical
    /// The screen faces upwards, 20°–70° from upright.
    case tiltedUp
    /// The screen faces downwards, 20°–70° from upright.
    case tiltedDown
    /// The screen faces the sky (70° or more).
    case faceUp
    /// The screen faces the floor (70° or more).
    case faceDown
}

/// Classifies display-frame readings into ``ScreenTilt``, physically: the screen faces up when
/// gravity points into it (z < 0 in orientd's frame, where lying flat screen-up reads (0, 0, −g)).
///
/// The class boundaries are iio-sensor-proxy's (20° and 70°), entered where it enters them. Unlike
/// it, a class is left only `hysteresis` degrees back past its boundary, so a device held near 20°
/// does not flap, and a reading whose magnitude is far from g (a jolt, a throw) is ignored. No
/// trigonometry per sample: the boundaries are compared as sines of the elevation, −z / |a|.
public struct TiltClassifier: Sendable {
    public static let verticalLimit = 20.0
    public static let faceLimit = 70.0
    public static let hysteresis = 5.0

    public private(set) var tilt: ScreenTilt?

    /// The sine of each boundary and of the boundary moved back by the hysteresis: (enter at or
    /// above, leave below). Entering at the boundary itself serves what clients of the incumbent
    /// (and its test suite) expect at 20° and 70°; leaving 5° back keeps a device near one still.
    private static let tiltedBand = (enter: sine(verticalLimit), leave: sine(verticalLimit - hysteresis))
    private static let faceBand = (enter: sine(faceLimit), leave: sine(faceLimit - hysteresis))
    /// Readings with |a| outside this band (m/s²) are not gravity alone.
    private static let magnitude = (low: 0.6 * 9.81, high: 1.4 * 9.81)

    public init() {}

    /// Feeds one display-frame reading; returns the new class when it changed.
    public mutating func process(_ vector: Vector3) -> ScreenTilt? {
        let length = vector.magnitude
        guard length >= Self.magnitude.low, length <= Self.magnitude.high else { return nil }
        let up = -vector.z / length  // sine of the elevation of the screen's normal
        let next = classify(abs(up), facesUp: up > 0)
        guard next != tilt else { return nil }
        tilt = next
        return next
    }

    private func classify(_ elevation: Double, facesUp: Bool) -> ScreenTilt {
        let face: Bool, tilted: Bool
        switch tilt {
        case .faceUp?, .faceDown?:
            face = elevation >= Self.faceBand.leave
            tilted = elevation >= Self.tiltedBand.leave
        case .tiltedUp?, .tiltedDown?:
            face = elevation >= Self.faceBand.enter
            tilted = elevation >= Self.tiltedBand.leave
        case .vertical?, nil:
            face = elevation >= Self.faceBand.enter
            tilted = elevation > Self.tiltedBand.enter
        }
        // Which way the screen faces may flip inside a class only through vertical (a sign change
        // of z passes zero elevation), so the sign of this reading decides.
        if face { return facesUp ? .faceUp : .faceDown }
        if tilted { return facesUp ? .tiltedUp : .tiltedDown }
        return .vertical
    }

    private static func sine(_ degrees: Double) -> Double { sin(degrees * .pi / 180) }
}
