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

    @Test(
        "upright, tilted and flat, either way, with iio-sensor-proxy's boundaries and the sign that is physically right"
    )
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

    @Test("a class is entered at its boundary, left only 5° back past it, and each change is reported once")
    func hysteresis() {
        var classifier = TiltClassifier()
        #expect(classifier.process(Self.reading(10)) == .vertical)
        #expect(classifier.process(Self.reading(19)) == nil)
        #expect(classifier.process(Self.reading(21)) == .tiltedUp, "past 20°, as iio-sensor-proxy")
        #expect(classifier.process(Self.reading(17)) == nil, "20° − 5° not passed")
        #expect(classifier.process(Self.reading(69)) == nil)
        #expect(classifier.process(Self.reading(70.5)) == .faceUp, "70° and more, as iio-sensor-proxy")
        #expect(classifier.process(Self.reading(67)) == nil, "70° − 5° not passed")
        #expect(classifier.process(Self.reading(60)) == .tiltedUp)
        #expect(classifier.process(Self.reading(16)) == nil)
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
