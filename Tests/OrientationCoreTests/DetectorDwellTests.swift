import Foundation
import Testing
@testable import OrientationCore

/// The dwell rule and the start-up rule (detection.md §9.4 steps 8 and 9, §15).
@Suite("Detector: dwell rule and start-up")
struct DetectorDwellTests {
    /// Walking while holding `pose`: a 0.25 g bounce along gravity at 1.9 steps a second, and the
    /// body's sway turning the reading ±`sway`° in the screen plane at the stride rate (0.95 Hz).
    static func walk(_ simulator: inout PoseSimulator, _ pose: Pose, for seconds: Double, sway: Double = 4) {
        let count = Int((seconds * simulator.rate).rounded())
        for _ in 0..<count {
            let t = simulator.time
            let swayed = Pose(angle: pose.angle + sway * sin(2 * .pi * 0.95 * t), tilt: pose.tilt)
            let bounce = 1 + 0.25 * sin(2 * .pi * 1.9 * t)
            simulator.feed(bounce * swayed.reading())
        }
    }

    @Test("walking with the device held 30° off landscape: landscape once the low-passed pose has held")
    func walkingOffAxis() throws {
        var simulator = PoseSimulator(rate: 50)
        Self.walk(&simulator, Pose(angle: 0, tilt: 30), for: 3)
        #expect(simulator.reported == [.portrait])
        // The turn happens while walking: the raw samples never rest.
        let turnStart = simulator.time
        for step in 1...25 {
            let pose = Pose(angle: 60 * Double(step) / 25, tilt: 30)
            Self.walk(&simulator, pose, for: 0.02)
        }
        let turnEnd = simulator.time
        Self.walk(&simulator, Pose(angle: 60, tilt: 30), for: 5)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
        let change = try #require(simulator.changes.last)
        // Not on the fast path (no rest) and not by the band (60° is short of 67.5°): after the turn,
        // no sooner than the moving dwell time, and within a second.
        #expect(change.time > turnStart + DetectorConfiguration().dwellMovingTime)
        #expect(change.time - turnEnd < 1.0, "changed \(change.time - turnEnd) s after the turn")
    }

    @Test("walking while holding 47° (±4° of sway) never changes: the moving line is 55°")
    func walkingNearDiagonal() {
        var simulator = PoseSimulator(rate: 50)
        Self.walk(&simulator, Pose(angle: 0, tilt: 30), for: 2)
        for step in 1...20 { Self.walk(&simulator, Pose(angle: 47 * Double(step) / 20, tilt: 30), for: 0.02) }
        Self.walk(&simulator, Pose(angle: 47, tilt: 30), for: 20)
        #expect(simulator.reported == [.portrait])
    }

    @Test("without the dwell rule (margins at the band's 45°) a pose held 30° off landscape stays portrait")
    func withoutDwellRule() {
        var configuration = DetectorConfiguration()
        configuration.dwellMargin = 45
        configuration.dwellMovingMargin = 45
        var simulator = PoseSimulator(configuration: configuration)
        simulator.hold(Pose(angle: 0, tilt: 20), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: 20), to: Pose(angle: 60, tilt: 20), over: 0.5)
        simulator.hold(Pose(angle: 60, tilt: 20), for: 3)
        #expect(simulator.reported == [.portrait])
    }

    @Test("a pending dwell keeps the detector unsettled (the sampler stays fast) until it is decided")
    func dwellKeepsPaceFast() {
        var simulator = PoseSimulator()
        simulator.hold(Pose(angle: 0, tilt: 20), for: 1)
        #expect(simulator.detector.isSettled)
        simulator.turn(from: Pose(angle: 0, tilt: 20), to: Pose(angle: 60, tilt: 20), over: 0.5)
        var sawPending = false
        while simulator.reported.count < 2, simulator.time < 5 {
            simulator.hold(Pose(angle: 60, tilt: 20), for: 1 / simulator.rate)
            if simulator.reported.count < 2 { sawPending = sawPending || !simulator.detector.isSettled }
        }
        #expect(sawPending)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
    }

    @Test("the dwell rule does not apply overhead (screen down past −40°) or beyond the upright window")
    func dwellRespectsTiltLimits() {
        for tilt in [-50.0, 72] {
            var simulator = PoseSimulator()
            simulator.hold(Pose(angle: 0, tilt: 0), for: 1)
            simulator.turn(from: Pose(angle: 0, tilt: 0), to: Pose(angle: 0, tilt: tilt), over: 0.5)
            simulator.hold(Pose(angle: 0, tilt: tilt), for: 1)
            simulator.turn(from: Pose(angle: 0, tilt: tilt), to: Pose(angle: 60, tilt: tilt), over: 0.5)
            simulator.hold(Pose(angle: 60, tilt: tilt), for: 3)
            #expect(simulator.reported == [.portrait], "tilt \(tilt)")
        }
    }

    // MARK: after a slow read

    /// The time of the change to landscape when the device, resting in portrait, is read `before`
    /// seconds apart (a rested sampler: 0.53 s; a fast one: 0.04 s) and then at 25 Hz in landscape.
    static func stepTime(readsBefore interval: Double) throws -> Double {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        for _ in 0..<4 {
            simulator.time += interval - 1 / simulator.rate
            simulator.hold(.portrait, for: 1 / simulator.rate)
        }
        simulator.time += interval - 1 / simulator.rate
        let first = simulator.time
        simulator.hold(.landscapeLeft, for: 1)
        let change = try #require(simulator.changes.last)
        #expect(change.to == .landscapeLeft)
        return change.time - first
    }

    @Test("after the sampler rested, two agreeing samples (40 ms) decide; read fast throughout, three (80 ms)")
    func afterSlowRead() throws {
        #expect(abs(try Self.stepTime(readsBefore: 1 / 1.9) - 0.04) < 1e-6)
        #expect(abs(try Self.stepTime(readsBefore: 1 / 25.0) - 0.08) < 1e-6)
    }

    // MARK: start-up

    /// The first change of a detector fed `pose` from its first sample (25 Hz, the first at 0).
    static func firstChange(resting pose: Pose) -> OrientationChange? {
        var simulator = PoseSimulator()
        simulator.hold(pose, for: 1)
        return simulator.changes.first
    }

    @Test(
        "start-up at rest: the nearest unambiguous orientation within 0.10 s of the first reading",
        arguments: [
            (Pose(angle: 5, tilt: -30), DeviceOrientation.portrait),  // held overhead, screen down 30°
            (Pose(angle: 88, tilt: -55), .landscapeLeft),  // lying on the back, reading overhead
            (Pose(angle: -62, tilt: 25), .landscapeRight),  // 28° off landscape
            (Pose(angle: 180, tilt: 60), .portraitUpsideDown),
            (Pose(angle: 0, tilt: -82), .faceDown),
            (Pose(angle: 0, tilt: 71), .faceUp),  // past the middle of the face band (70°)
        ])
    func startUp(pose: Pose, orientation: DeviceOrientation) throws {
        let change = try #require(Self.firstChange(resting: pose))
        #expect(change.from == .unknown)
        #expect(change.to == orientation)
        #expect(change.time <= 0.10)
    }

    @Test("start-up near the diagonal (44°) waits for the full rest window, then takes the nearest axis")
    func startUpAmbiguous() throws {
        let change = try #require(Self.firstChange(resting: Pose(angle: 44, tilt: 10)))
        #expect(change.to == .portrait)
        #expect(change.time >= DetectorConfiguration().restWindow)
    }

    @Test("start-up during a turn faster than 250°/s decides nothing until the samples rest")
    func startUpMoving() {
        // Two samples 40 ms apart within 5° of their mean bound the turn rate at 250°/s; this turn
        // moves 11° between samples.
        var simulator = PoseSimulator()
        simulator.turn(from: Pose(angle: 0, tilt: 10), to: Pose(angle: 90, tilt: 10), over: 0.32)
        let turned = simulator.time
        simulator.hold(Pose(angle: 90, tilt: 10), for: 1)
        #expect(simulator.reported == [.landscapeLeft])
        #expect((simulator.changes.first?.time ?? 0) >= turned - 0.25)
    }
}
