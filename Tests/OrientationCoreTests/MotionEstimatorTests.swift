import Foundation
import Testing
@testable import OrientationCore

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
        var estimator = MotionEstimator()
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
        var estimator = MotionEstimator()
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

    @Test("a gap starts afresh: the attitude's reference is the first sample after it")
    func gapStartsAfresh() throws {
        var estimator = MotionEstimator()
        _ = estimator.process(time: 0, reading: Vector3(0, -9.81, 0), rotationRate: .zero)
        _ = estimator.process(time: 0.01, reading: Vector3(0, -9.81, 0), rotationRate: Vector3(0, 0, 10))
        let maybeAfter = estimator.process(time: 5, reading: Vector3(-9.81, 0, 0), rotationRate: .zero)
        let after = try #require(maybeAfter)
        #expect(after.attitude == .identity)
        #expect(after.gravity == Vector3(-9.81, 0, 0))
        #expect(estimator.process(time: 5, reading: Vector3(-9.81, 0, 0), rotationRate: .zero) == nil)
    }
}
