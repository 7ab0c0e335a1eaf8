import Testing
@testable import OrientationCore

#if canImport(Glibc)
import Glibc
#endif

@Suite("Screen tilt")
struct TiltClassifierTests {
    /// Gravity for a screen tilted `degrees` from upright: positive faces the sky.
    static func reading(_ degrees: Double, g: Double = 9.81) -> Vector3 {
        let radians = degrees * .pi / 180
        return Vector3(0, -g * cos(radians), -g * sin(radians))
    }

    @Test("upright, tilted and flat, either way, with iio-sensor-proxy's boundaries and the sign that is physically right")
    func classes() {
        let expected: [(Double, ScreenTilt)] = [
            (0, .vertical), (19, .vertical), (30, .tiltedUp), (69, .tiltedUp), (80, .faceUp), (90, .faceUp),
            (-30, .tiltedDown), (-90, .faceDown), (-10, .vertical),
        ]
        for (degrees, tilt) in expected {
            var classifier = TiltClassifier()
            _ = classifier.process(Self.reading(degrees))
            #expect(classifier.tilt == tilt, "\(degrees)°")
        }
    }

    @Test("a class changes only past its boundary plus the hysteresis, and reports each change once")
    func hysteresis() {
        var classifier = TiltClassifier()
        #expect(classifier.process(Self.reading(10)) == .vertical)
        #expect(classifier.process(Self.reading(22)) == nil, "20° + 5° not reached")
        #expect(classifier.process(Self.reading(26)) == .tiltedUp)
        #expect(classifier.process(Self.reading(17)) == nil, "20° − 5° not passed")
        #expect(classifier.process(Self.reading(72)) == nil)
        #expect(classifier.process(Self.reading(76)) == .faceUp)
        #expect(classifier.process(Self.reading(67)) == nil)
        #expect(classifier.process(Self.reading(60)) == .tiltedUp)
        #expect(classifier.process(Self.reading(12)) == .vertical)
    }

    @Test("a jolt (|a| far from g) changes nothing")
    func jolts() {
        var classifier = TiltClassifier()
        _ = classifier.process(Self.reading(0))
        #expect(classifier.process(Self.reading(90, g: 25)) == nil)
        #expect(classifier.process(Self.reading(90, g: 2)) == nil)
        #expect(classifier.tilt == .vertical)
    }
}
