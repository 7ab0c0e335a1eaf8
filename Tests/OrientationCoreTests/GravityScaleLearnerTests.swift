import Foundation
import Testing
@testable import OrientationCore

@Suite("Gravity learned at rest")
struct GravityScaleLearnerTests {
    /// `seconds` of one reading at `rate` Hz, starting at `start`.
    static func still(
        _ reading: Vector3, from start: Double = 0, seconds: Double, rate: Double = 25
    ) -> [(Double, Vector3)] {
        (0..<Int(seconds * rate)).map { (start + Double($0) / rate, reading) }
    }

    @Test("a correctly scaled sensor at rest keeps factor 1, every reading passed through unchanged")
    func trustedScale() {
        var learner = GravityScaleLearner()
        for (time, reading) in Self.still(Vector3(0.3, -9.78, 0.4), seconds: 5) {
            let (out, learned) = learner.process(time: time, reading: reading)
            #expect(out == reading)
            #expect(learned == nil)
        }
        #expect(learner.factor == 1)
        #expect(learner.measurement == nil)
    }

    @Test(
        "26 g at rest (iio-sensor-proxy's test beds), counts, g: learned after half a still second",
        arguments: [256.0, 1024.0, 1.0, 0.0981 * 9.81])
    func wrongScaleLearned(magnitude: Double) throws {
        var learner = GravityScaleLearner()
        var learnedAt: Double?
        for (time, reading) in Self.still(Vector3(0, -magnitude, 0), seconds: 3) {
            if learner.process(time: time, reading: reading).learned != nil, learnedAt == nil { learnedAt = time }
        }
        let at = try #require(learnedAt)
        #expect(at >= 0.5 && at < 0.6)
        let measurement = try #require(learner.measurement)
        #expect(abs(measurement.measuredGravity - magnitude) < 1e-9 * magnitude)
        #expect(abs(learner.process(time: 4, reading: Vector3(0, 0, magnitude)).reading.z - 9.81) < 1e-9)
    }

    @Test("a correctly scaled sensor turned back and forth faster than a window is never rescaled")
    func alternationIsNotSteady() {
        // Portrait and landscape alternating every 4 samples: each window's mean is 71 % of gravity
        // and the windows agree, yet nothing here says the scale is wrong.
        var learner = GravityScaleLearner()
        for step in 0..<500 {
            let reading = (step / 4) % 2 == 0 ? Vector3(0, -9.81, 0) : Vector3(9.81, 0, 0)
            #expect(learner.process(time: Double(step) * 0.04, reading: reading).learned == nil)
        }
        #expect(learner.factor == 1)
        // Without the coherence check the same readings would be taken for gravity 29 % short.
        var incoherent = GravityScaleLearner()
        incoherent.steadyCoherence = 0
        for step in 0..<500 {
            _ = incoherent.process(
                time: Double(step) * 0.04, reading: (step / 4) % 2 == 0 ? Vector3(0, -9.81, 0) : Vector3(9.81, 0, 0))
        }
        #expect(incoherent.factor > 1.3)
    }

    @Test("movement never measures: a turn, a shake, a short free fall")
    func movementIsNotRest() {
        var learner = GravityScaleLearner()
        // A slow turn of the direction (2° per sample) and a magnitude that breathes by 5 %.
        for index in 0..<200 {
            let angle = Double(index) * 2 * .pi / 180
            let length = 25.0 * (1 + 0.05 * sin(Double(index)))
            _ = learner.process(
                time: Double(index) / 25, reading: Vector3(length * sin(angle), -length * cos(angle), 0))
        }
        // Half a second of a biased sensor falling: a steady small vector, too short to count.
        for (time, reading) in Self.still(Vector3(0.1, 0.2, 0.3), from: 10, seconds: 0.5) {
            _ = learner.process(time: time, reading: reading)
        }
        #expect(learner.factor == 1)
    }

    @Test("zeros and NaN are no rest")
    func zerosAndNaN() {
        var learner = GravityScaleLearner()
        for (time, reading) in Self.still(.zero, seconds: 3) + Self.still(Vector3(.nan, 1, 1), from: 3, seconds: 3) {
            _ = learner.process(time: time, reading: reading)
        }
        #expect(learner.factor == 1)
    }

    @Test("a wrong measurement is corrected by the next rest; forgetting the sensor forgets the factor")
    func relearnAndForget() throws {
        var learner = GravityScaleLearner()
        for (time, reading) in Self.still(Vector3(0, 0, -100), seconds: 2) {
            _ = learner.process(time: time, reading: reading)
        }
        #expect(abs(learner.factor - 0.0981) < 1e-9)
        // The scale attribute is fixed: the sensor now reads the truth, which the old factor shrinks.
        for (time, reading) in Self.still(Vector3(0, 0, -9.81), from: 2, seconds: 2) {
            _ = learner.process(time: time, reading: reading)
        }
        #expect(abs(learner.factor - 1) < 1e-9)
        learner.restart(forgetFactor: true)
        #expect(learner.factor == 1 && learner.measurement == nil)
    }

    @Test("through the pipeline: a sensor reading 26 g rotates like a true one, half a still second later")
    func pipelineRotates() {
        var pipeline = OrientationPipeline()
        var changes: [OrientationChange] = []
        let portrait = Self.still(Vector3(0, -256, 0), seconds: 3)
        let landscape = Self.still(Vector3(256, 0, 0), from: 3, seconds: 3)
        for (time, reading) in portrait + landscape {
            if let change = pipeline.process(time: time, reading: reading) { changes.append(change) }
        }
        #expect(changes.map(\.to) == [.portrait, .landscapeRight])
        #expect(changes.first.map { $0.time >= 0.5 && $0.time < 0.7 } == true)
        // The turn itself is as fast as on a true sensor: the factor is already known.
        #expect(changes.last.map { $0.time - 3 < 0.2 } == true)
    }
}
