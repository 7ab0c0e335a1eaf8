import Foundation
import Testing
@testable import OrientationCore

/// The daemon's way (``DetectionStage``): the detector makes each sample's gravity estimate, the
/// motion estimator reads it.
private struct MotionPipeline {
    var detector: OrientationDetector
    var estimator = MotionEstimator()

    init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        detector = OrientationDetector(configuration: configuration)
    }

    mutating func process(time: Double, reading: Vector3, rotationRate: Vector3?) -> MotionSample? {
        _ = detector.process(AccelerationSample(time: time, vector: reading, rotationRate: rotationRate))
        guard let estimate = detector.estimate, estimate.time == time else { return nil }
        return estimator.process(reading: reading, estimate: estimate)
    }
}

@Suite("Motion estimator")
struct MotionEstimatorTests {
    /// Gravity seen by a device turned counter-clockwise (about +z) by `theta` from `start`.
    private func turned(_ start: Vector3, by theta: Double) -> Vector3 {
        Quaternion(axis: Vector3(0, 0, 1), angle: -theta).rotate(start)
    }

    private func minimumJerk(_ s: Double) -> (angle: Double, rate: Double) {
        let s = min(1, max(0, s))
        return (s * s * s * (10 - 15 * s + 6 * s * s), 30 * s * s * (1 - s) * (1 - s))
    }

    @Test("without a gyroscope: the low-passed reading is gravity, the rest is the user's; no rate, no attitude")
    func withoutGyroscope() throws {
        var estimator = MotionPipeline()
        var last: MotionSample?
        for step in 0...200 {
            let time = Double(step) * 0.01
            let push = time >= 1.9 ? Vector3(-2, 0, 0) : .zero
            last = estimator.process(time: time, reading: Vector3(0, -9.81, 0) + push, rotationRate: nil)
        }
        let sample = try #require(last)
        #expect(sample.rotationRate == nil)
        #expect(sample.attitude == nil)
        #expect((sample.gravity + sample.userAcceleration - Vector3(-2, -9.81, 0)).magnitude < 1e-9)
        // 0.1 s into the push the 0.2 s low-pass has taken about 2 · (1 − e^−0.5) of it.
        #expect(abs(sample.gravity.x - -2 * (1 - exp(-0.5))) < 0.1)
    }

    @Test(
        "with a gyroscope, a quarter turn counter-clockwise gives that attitude, upright and lying",
        arguments: [Vector3(0, -9.81, 0), Vector3(0, 0, -9.81)])
    func quarterTurn(start: Vector3) throws {
        var estimator = MotionPipeline()
        var last: MotionSample?
        let duration = 0.5
        for step in 0...150 {
            let time = Double(step) * 0.01
            let (fraction, speed) = minimumJerk((time - 0.2) / duration)
            let theta = fraction * .pi / 2
            let rate = Vector3(0, 0, speed * .pi / 2 / duration)
            last = estimator.process(time: time, reading: turned(start, by: theta), rotationRate: rate)
        }
        let sample = try #require(last)
        let attitude = try #require(sample.attitude)
        let expected = Quaternion(axis: Vector3(0, 0, 1), angle: .pi / 2)
        // q and −q are the same rotation.
        let agreement = abs(
            attitude.w * expected.w + attitude.x * expected.x + attitude.y * expected.y + attitude.z * expected.z)
        #expect(agreement > cos(1 * .pi / 360))  // within 1°
        #expect((sample.gravity - turned(start, by: .pi / 2)).magnitude < 0.1)
        #expect(sample.userAcceleration.magnitude < 0.1)
        #expect(sample.rotationRate.map { $0.magnitude < 0.01 } == true)
    }

    @Test("a gap keeps the attitude's reference: the heading is kept across it, the tilt follows gravity again")
    func gapKeepsTheReference() throws {
        var estimator = MotionPipeline()
        let upright = Vector3(0, -9.81, 0)
        // A quarter turn counter-clockwise in 0.5 s at 100 Hz, then 5 s of nothing, then lying on its back.
        var time = 0.0
        for step in 0...100 {
            time = Double(step) * 0.01
            let (fraction, speed) = minimumJerk(time / 0.5)
            _ = estimator.process(
                time: time, reading: turned(upright, by: fraction * .pi / 2),
                rotationRate: Vector3(0, 0, speed * .pi / 2 / 0.5))
        }
        let maybeAfter = estimator.process(time: time + 5, reading: turned(upright, by: .pi / 2), rotationRate: .zero)
        let after = try #require(maybeAfter)
        let attitude = try #require(after.attitude)
        #expect(after.startsAttitude == false)
        #expect(abs(2 * atan2(attitude.z, attitude.w) - .pi / 2) < 2 * .pi / 180, "\(attitude)")
    }

    @Test("a sensor read at 8 Hz (steps over the fusion's 0.1 s) still integrates its turn", arguments: [8.0, 10.0])
    func slowSensorIntegrates(rate: Double) throws {
        var estimator = MotionPipeline()
        var last: MotionSample?
        let duration = 2.0
        for step in 0...Int(3 * rate) {
            let time = Double(step) / rate
            let (fraction, speed) = minimumJerk(time / duration)
            last = estimator.process(
                time: time, reading: turned(Vector3(0, 0, -9.81), by: fraction * .pi / 2),
                rotationRate: Vector3(0, 0, speed * .pi / 2 / duration))
        }
        let attitude = try #require(last?.attitude)
        // The rectangle rule over eighth-second steps of a smooth turn: a few degrees.
        #expect(abs(2 * atan2(attitude.z, attitude.w) - .pi / 2) < 5 * .pi / 180, "\(attitude)")
    }

    @Test("a sample without a rate keeps the reference and the fused gravity; the turn goes on from it")
    func sampleWithoutRate() throws {
        var estimator = MotionPipeline()
        let upright = Vector3(0, -9.81, 0)
        var last: MotionSample?
        for step in 0...100 {
            let time = Double(step) * 0.01
            let (fraction, speed) = minimumJerk(time / 0.5)
            let truth = turned(upright, by: fraction * .pi / 2)
            let rate: Vector3? = step == 25 ? nil : Vector3(0, 0, speed * .pi / 2 / 0.5)
            last = estimator.process(time: time, reading: truth, rotationRate: rate)
            if step == 25 {
                #expect(last?.attitude == nil && last?.rotationRate == nil)
                // The fused gravity of the sample before: one step's turn (0.06 rad) behind, where the
                // 0.2 s low-pass trails the turn by half a radian.
                #expect(last.map { ($0.gravity - truth).magnitude < 0.1 * 9.81 } == true, "\(String(describing: last))")
            }
        }
        let attitude = try #require(last?.attitude)
        #expect(abs(2 * atan2(attitude.z, attitude.w) - .pi / 2) < 2 * .pi / 180, "\(attitude)")
    }

    @Test("gravity is the detector's fusion, with its settings: a longer gyro-correction-time follows a push less")
    func theDetectorsFusion() throws {
        func deviation(correctionTime: Double) throws -> Double {
            var configuration = DetectorConfiguration()
            configuration.estimate.correctionTime = correctionTime
            var pipeline = MotionPipeline(configuration: configuration)
            var last: MotionSample?
            // Still for a second, then pushed toward its left edge (2 m/s²) for 0.2 s, not turning
            // (shorter than the fusion's re-anchoring, 0.3 s, after which it follows any steady push).
            for step in 0...120 {
                let time = Double(step) * 0.01
                let push = time > 1 ? Vector3(2, 0, 0) : .zero
                last = pipeline.process(time: time, reading: Vector3(0, -9.81, 0) + push, rotationRate: .zero)
            }
            let sample = try #require(last)
            let estimate = try #require(pipeline.detector.estimate)
            #expect(sample.gravity == estimate.gravity)
            return sample.gravity.x
        }
        let quick = try deviation(correctionTime: 0.5)
        let slow = try deviation(correctionTime: 2.0)
        #expect(quick > 0.05 && slow < quick * 0.6, "quick \(quick), slow \(slow)")
    }

    @Test("readings and rates beyond any sensor's range are glitches, dropped; the attitude goes on unharmed")
    func glitches() throws {
        var estimator = MotionPipeline()
        let upright = Vector3(0, -9.81, 0)
        for step in 0...50 {
            _ = estimator.process(time: Double(step) * 0.01, reading: upright, rotationRate: .zero)
        }
        #expect(estimator.process(time: 0.51, reading: Vector3(1e300, 0, 0), rotationRate: .zero) == nil)
        #expect(estimator.process(time: 0.52, reading: upright, rotationRate: Vector3(1e20, 0, 0)) == nil)
        #expect(estimator.process(time: 0.53, reading: Vector3(400, 0, 0), rotationRate: nil) == nil)
        let maybeAfter = estimator.process(time: 0.54, reading: upright, rotationRate: .zero)
        let after = try #require(maybeAfter)
        #expect(
            after.attitude.map { abs($0.w) > cos(0.5 * .pi / 180) } == true, "\(String(describing: after.attitude))")
        #expect((after.gravity - upright).magnitude < 0.01)
    }
}
