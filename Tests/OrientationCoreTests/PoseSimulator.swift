#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import OrientationCore

/// A device pose: `angle` is the direction of "up" in the screen plane (0° portrait, 90°
/// landscapeLeft, 180° portraitUpsideDown, −90° landscapeRight), `tilt` the angle of the screen above
/// the horizontal plane's normal (0° upright, +90° face up, −90° face down).
struct Pose {
    var angle: Double
    var tilt: Double

    static let portrait = Pose(angle: 0, tilt: 0)
    static let landscapeLeft = Pose(angle: 90, tilt: 0)
    static let portraitUpsideDown = Pose(angle: 180, tilt: 0)
    static let landscapeRight = Pose(angle: -90, tilt: 0)
    static let faceUp = Pose(angle: 0, tilt: 90)
    static let faceDown = Pose(angle: 0, tilt: -90)

    /// The six named poses and the orientation each must give.
    static let named: [(pose: Pose, orientation: DeviceOrientation)] = [
        (.portrait, .portrait), (.landscapeLeft, .landscapeLeft), (.portraitUpsideDown, .portraitUpsideDown),
        (.landscapeRight, .landscapeRight), (.faceUp, .faceUp), (.faceDown, .faceDown),
    ]

    /// The reading in the gravity-pointing display frame (detection.md §1).
    func reading(gravity: Double = 9.81) -> Vector3 {
        let a = angle * .pi / 180
        let t = tilt * .pi / 180
        return Vector3(-gravity * sin(a) * cos(t), -gravity * cos(a) * cos(t), -gravity * sin(t))
    }
}

/// Feeds a detector at a fixed rate and records the changes, with the clock advancing across calls.
struct PoseSimulator {
    var detector: OrientationDetector
    var time = 0.0
    var rate = 25.0
    var changes: [OrientationChange] = []
    /// Deterministic tremor: a small wobble of ±`tremor` m/s² per axis from a fixed LCG.
    var tremor = 0.05
    private var seed: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(configuration: DetectorConfiguration = DetectorConfiguration(), rate: Double = 25) {
        detector = OrientationDetector(configuration: configuration)
        self.rate = rate
    }

    var orientation: DeviceOrientation { detector.orientation }

    private mutating func noise() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(seed >> 11) / Double(1 << 53) * 2 - 1) * tremor
    }

    /// Feeds one sample of `reading` at the current time, then advances the clock one period.
    mutating func feed(_ reading: Vector3) {
        let sample = AccelerationSample(time: time, vector: reading + Vector3(noise(), noise(), noise()))
        if let change = detector.process(sample) { changes.append(change) }
        time += 1 / rate
    }

    /// Holds `pose` for `seconds`.
    mutating func hold(_ pose: Pose, for seconds: Double) {
        let count = Int((seconds * rate).rounded())
        let reading = pose.reading()
        for _ in 0..<count { feed(reading) }
    }

    /// Turns smoothly from `from` to `to` over `seconds` (both angles interpolated linearly).
    mutating func turn(from: Pose, to: Pose, over seconds: Double) {
        let count = max(1, Int((seconds * rate).rounded()))
        for step in 1...count {
            let f = Double(step) / Double(count)
            feed(
                Pose(angle: from.angle + (to.angle - from.angle) * f, tilt: from.tilt + (to.tilt - from.tilt) * f)
                    .reading())
        }
    }

    /// The orientations reported so far, in order.
    var reported: [DeviceOrientation] { changes.map(\.to) }
}
