import Foundation
import Testing
@testable import OrientationCore

/// A device standing upright and turned in the screen plane by `angle(t)` radians, counter-clockwise
/// as its viewer sees it (about +z): its accelerometer reads gravity turned the other way, plus
/// `acceleration(t)`, and its gyroscope reads (0, 0, dθ/dt) plus `bias`.
private struct TurningDevice {
    var angle: (Double) -> Double
    var acceleration: (Double) -> Vector3 = { _ in .zero }
    var bias = Vector3.zero

    func gravity(at time: Double) -> Vector3 {
        let theta = angle(time)
        return Vector3(-9.81 * sin(theta), -9.81 * cos(theta), 0)
    }

    func sample(at time: Double) -> (reading: Vector3, rate: Vector3) {
        let step = 1e-4
        let rate = (angle(time + step) - angle(time - step)) / (2 * step)
        return (gravity(at: time) + acceleration(time), Vector3(0, 0, rate) + bias)
    }
}

private func degrees(between a: Vector3, _ b: Vector3) -> Double {
    acos(max(-1, min(1, a.dot(b) / (a.magnitude * b.magnitude)))) * 180 / .pi
}

/// A minimum-jerk turn by `by` radians from `start`, lasting `duration`.
private func minimumJerk(start: Double, duration: Double, by total: Double) -> (Double) -> Double {
    { time in
        let s = min(1, max(0, (time - start) / duration))
        return total * s * s * s * (10 - 15 * s + 6 * s * s)
    }
}

@Suite("Gravity fusion")
struct GravityFusionTests {
    @Test("a counter-clockwise turn seen from the front turns gravity toward −x, as the accelerometer does")
    func signConvention() throws {
        // Gyroscope only (no correction can help: every reading is far from gravity's length), so the
        // estimate after a quarter turn comes from the rotation rates alone.
        let device = TurningDevice(angle: minimumJerk(start: 0.1, duration: 0.5, by: .pi / 2))
        var fusion = GravityFusion()
        fusion.process(time: 0, reading: device.gravity(at: 0), rotationRate: .zero)
        for step in 1...100 {
            let time = Double(step) * 0.01
            fusion.process(
                time: time, reading: 3 * device.gravity(at: time), rotationRate: device.sample(at: time).rate)
        }
        let estimate = try #require(fusion.gravity)
        #expect(degrees(between: estimate, Vector3(-9.81, 0, 0)) < 0.5)
    }

    /// The worst angle (degrees) between the truth and, sample by sample at 100 Hz for `seconds`,
    /// the fusion's estimate and a 0.2 s low-pass of the accelerometer.
    private func worstErrors(_ device: TurningDevice, seconds: Double) -> (fused: Double, lowPass: Double) {
        var fusion = GravityFusion()
        var lowPass = device.gravity(at: 0)
        var worst = (fused: 0.0, lowPass: 0.0)
        for step in 0...Int(seconds * 100) {
            let time = Double(step) * 0.01
            let (reading, rate) = device.sample(at: time)
            let estimate = fusion.process(time: time, reading: reading, rotationRate: rate)
            lowPass = lowPass + (0.01 / 0.21) * (reading - lowPass)
            worst.fused = max(worst.fused, degrees(between: estimate, device.gravity(at: time)))
            worst.lowPass = max(worst.lowPass, degrees(between: lowPass, device.gravity(at: time)))
        }
        return worst
    }

    @Test("a turn is followed as it happens; the low-pass trails it")
    func followsTurn() {
        let worst = worstErrors(TurningDevice(angle: minimumJerk(start: 0.2, duration: 0.4, by: .pi / 2)), seconds: 0.6)
        #expect(worst.fused < 1)
        #expect(worst.lowPass > 20)
    }

    @Test("linear acceleration does not tilt the estimate; the low-pass it tilts")
    func ignoresLinearAcceleration() {
        // Upright and still; a 0.25 s push of 3 m/s² sideways (a braking car, a hand moving the
        // device along) reads as a 17° tilt to the accelerometer.
        let device = TurningDevice(
            angle: { _ in 0 }, acceleration: { $0 >= 1 && $0 < 1.25 ? Vector3(3, 0, 0) : .zero })
        let worst = worstErrors(device, seconds: 2)
        #expect(worst.fused < 2)
        #expect(worst.lowPass > 10)
    }

    @Test("a bias is learned while the device moves, from the correction (Mahony's integral term)")
    func learnsBiasWhileMoving() {
        // Walked with: never still (a 2 Hz bob of ±3° about x), and a gyroscope reading 3 °/s too
        // much about z, the axis the accelerometer observes when upright.
        let bias = Vector3(0, 0, 0.05)
        var fusion = GravityFusion()
        for step in 0...3000 {
            let time = Double(step) * 0.01
            let bob = 0.05 * sin(2 * .pi * 2 * time)
            let bobRate = 0.05 * 2 * .pi * 2 * cos(2 * .pi * 2 * time)
            let gravity = Quaternion(axis: Vector3(1, 0, 0), angle: -bob).rotate(Vector3(0, -9.81, 0))
            fusion.process(time: time, reading: gravity, rotationRate: Vector3(bobRate, 0, 0) + bias)
        }
        #expect(abs(fusion.bias.z - bias.z) < 0.005)
        #expect(fusion.stillFor == 0)
    }

    @Test("the gyroscope's bias is learned while still, and then does not drift the estimate")
    func learnsBias() {
        let bias = Vector3(0.03, -0.02, 0.05)  // 1.7, 1.1 and 2.9 °/s
        var fusion = GravityFusion()
        var device = TurningDevice(angle: { _ in 0 })
        device.bias = bias
        for step in 0...1000 {
            let time = Double(step) * 0.01
            let (reading, rate) = device.sample(at: time)
            fusion.process(time: time, reading: reading, rotationRate: rate)
        }
        #expect((fusion.bias - bias).magnitude < 0.002)
        #expect(fusion.stillFor > 9)
        // Then 2 s of readings the correction cannot use: the gyroscope alone holds the estimate.
        for step in 1...200 {
            let time = 10 + Double(step) * 0.01
            let (reading, rate) = device.sample(at: time)
            fusion.process(time: time, reading: 3 * reading, rotationRate: rate)
        }
        #expect(degrees(between: fusion.gravity!, device.gravity(at: 12)) < 0.3)
    }

    @Test("a gap restarts the estimate from the accelerometer")
    func gapRestarts() {
        var fusion = GravityFusion()
        fusion.process(time: 0, reading: Vector3(0, -9.81, 0), rotationRate: .zero)
        fusion.process(time: 2, reading: Vector3(-9.81, 0, 0), rotationRate: .zero)
        #expect(fusion.gravity == Vector3(-9.81, 0, 0))
    }

    @Test(
        """
        after a restart, still from its own sample on: anchored one still time (0.04 s) later at 25 Hz, the \
        clock 0.7 % fast or slow, and still since that sample
        """,
        arguments: [0.0397, 0.0403])
    func restartOnAStillSampleAnchorsAfterTheStillTime(period: Double) {
        var fusion = GravityFusion()
        let upright = Vector3(0.1, -9.8, 0.2)
        // Mid-turn, a step the rates cannot integrate (as a flick read at 25 Hz), then rest.
        fusion.process(time: 0, reading: Vector3(-9.81, 0, 0), rotationRate: Vector3(0, 0, -3))
        fusion.process(time: period, reading: upright, rotationRate: Vector3(0, 0, 0.01))
        #expect(!fusion.isReliable)
        fusion.process(time: 2 * period, reading: upright, rotationRate: Vector3(0, 0, 0.01))
        #expect(fusion.isReliable)
        #expect(fusion.gravity.map { degrees(between: $0, upright) < 0.1 } == true)
        #expect(abs(fusion.stillFor - period) < 1e-9)
    }

    @Test("after a restart mid-turn, the estimate is not trusted while the device turns")
    func restartWhileTurningIsNotAnchored() {
        var fusion = GravityFusion()
        for step in 0..<50 {
            let time = Double(step) * 0.02
            fusion.process(time: time, reading: Vector3(0, -9.81, 0), rotationRate: Vector3(0, 0, 0.5))
            #expect(!fusion.isReliable, "at \(time) s")
        }
    }

    @Test(
        """
        restarted at a shake's peak and read at 100 Hz, the estimate is not trusted until the accelerometer \
        has corrected it: time since the restart is no correction
        """)
    func shakeStartedAtItsPeakIsNotTrustedWrong() {
        // Shaken in landscape, 2 g along x at 2.5 Hz and turning ±0.3 rad with it: the readings pass
        // gravity's length only near each reversal of the push, so the restart's error (63°: its
        // first sample reads gravity plus 2 g) is pulled away only slowly. Integrable at 100 Hz.
        let shake = TurningDevice(
            angle: { .pi / 2 + 0.3 * sin(2 * .pi * 2.5 * $0) },
            acceleration: { Vector3(2 * 9.81 * cos(2 * .pi * 2.5 * $0), 0, 0) })
        var fusion = GravityFusion()
        var trustedWrong: [Double] = []
        for step in 0...300 {
            let time = Double(step) * 0.01
            let (reading, rate) = shake.sample(at: time)
            let estimate = fusion.process(time: time, reading: reading, rotationRate: rate)
            if fusion.isReliable, degrees(between: estimate, shake.gravity(at: time)) > 10 { trustedWrong.append(time) }
        }
        #expect(trustedWrong.first == nil, "trusted more than 10° wrong at \(trustedWrong.count) samples")
    }

    @Test("a mirrored mount matrix keeps the right-hand rule")
    func mirroredMount() throws {
        let mirrored = try MountMatrix(rows: [[-1, 0, 0], [0, 1, 0], [0, 0, 1]])
        // Mirroring x: a turn about z that was counter-clockwise reads clockwise in the mirrored frame.
        #expect(mirrored.applyToRotation(Vector3(0, 0, 1)) == Vector3(0, 0, -1))
        #expect(mirrored.applyToRotation(Vector3(1, 0, 0)) == Vector3(1, 0, 0))
        let turned = try MountMatrix(parsing: "0, -1, 0; -1, 0, 0; 0, 0, -1")
        #expect(turned.applyToRotation(Vector3(0, 0, 1)) == turned.apply(Vector3(0, 0, 1)))
    }
}
