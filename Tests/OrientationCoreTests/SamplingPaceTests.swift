import Testing
@testable import OrientationCore

@Suite("Sampling pace: fast while moving or deciding, slow at rest")
struct SamplingPaceTests {
    static let upright = Vector3(0, -9.81, 0)

    @Test("steady readings slow the pace after the rest time, once the detector has settled")
    func slowsAtRest() {
        var pace = SamplingPace()
        var changes: [(Double, SamplingPace.Pace)] = []
        for step in 0...50 {
            let time = Double(step) * 0.04
            // Noise of a few hundredths of g; the detector settles at 0.5 s.
            let noise = Vector3(0.02 * Double(step % 3), -0.03 * Double(step % 2), 0.01)
            if let change = pace.observe(Self.upright + noise, at: time, detectorSettled: time >= 0.5) {
                changes.append((time, change))
            }
        }
        #expect(changes.count == 1)
        #expect(changes.first?.1 == .lying)
        #expect(
            abs((changes.first?.0 ?? 0) - 0.52) < 1e-9,
            "settled at 0.5 s, then the next reading (0.5 s of steady ones by then)")
        #expect(pace.interval == 1 / 1.8, "the default rest rate")
    }

    @Test("an unsettled detector keeps the fast pace, however still the readings")
    func deciding() {
        var pace = SamplingPace()
        for step in 0...100 {
            #expect(pace.observe(Self.upright, at: Double(step) * 0.04, detectorSettled: false) == nil)
        }
        #expect(pace.pace == .fast)
        #expect(pace.interval == 1.0 / 25)
    }

    @Test("the first reading past the margin brings the fast pace back at once; within it, rest holds")
    func motion() {
        var pace = SamplingPace()
        for step in 0...30 { _ = pace.observe(Self.upright, at: Double(step) * 0.04, detectorSettled: true) }
        #expect(pace.pace == .lying)
        // 5° of tilt moves the reading by 0.86 m/s² (< 0.981): still rest; 7° by 1.2 m/s²: motion.
        func tilted(_ degrees: Double) -> Vector3 {
            let radians = degrees * .pi / 180
            return Vector3(0, -9.81 * cos(radians), -9.81 * sin(radians))
        }
        #expect(pace.observe(tilted(5), at: 2, detectorSettled: true) == .held, "5° is a hand's sway, not motion")
        #expect(pace.observe(tilted(7), at: 3, detectorSettled: true) == .fast)
        // A new stretch starts at the moving reading: it must hold for the rest time again.
        #expect(pace.observe(tilted(7), at: 3.25, detectorSettled: true) == nil)
        #expect(pace.observe(tilted(7), at: 3.5, detectorSettled: true) == .lying)
    }

    /// A hand's sway: the screen tilts by `degrees` about the x axis, 0.3 Hz.
    static func swaying(_ time: Double, degrees: Double = 1) -> Vector3 {
        let radians = degrees * sin(2 * .pi * 0.3 * time) * .pi / 180
        return Vector3(0, -9.81 * cos(radians), -9.81 * sin(radians))
    }

    @Test("a device that sways at rest is held and read at 4 Hz; one within the sensor's noise lies, at 1.8 Hz")
    func heldOrLying() {
        var held = SamplingPace(), lying = SamplingPace()
        var heldChanges: [SamplingPace.Pace] = [], lyingChanges: [SamplingPace.Pace] = []
        for step in 0...50 {
            let time = Double(step) * 0.04
            heldChanges += held.observe(Self.swaying(time), at: time, detectorSettled: true).map { [$0] } ?? []
            // ±0.002 g on each axis: a phone sensor's noise at 25 Hz.
            let noise = 0.002 * 9.81 * Vector3(Double(step % 3 - 1), Double(step % 2) * 2 - 1, Double(step % 5 - 2) / 2)
            lyingChanges += lying.observe(Self.upright + noise, at: time, detectorSettled: true).map { [$0] } ?? []
        }
        #expect(heldChanges == [.held])
        #expect(lyingChanges == [.lying])
        #expect(held.interval == 1.0 / 4)
        #expect(lying.interval == 1 / 1.8)
    }

    @Test("held becomes lying after 2 s without sway, and lying becomes held at the first read that sways")
    func heldToLyingAndBack() {
        var pace = SamplingPace()
        // A hand holds the device between upright and 0.8° off it: 0.4° (0.007 g) either side of
        // the mean, past the sway margin.
        var time = 0.0
        while pace.pace != .held {
            _ = pace.observe(
                Self.rotated(Self.upright, degrees: time.truncatingRemainder(dividingBy: 0.08) < 0.04 ? 0 : 0.8),
                at: time, detectorSettled: true)
            time += 0.04
        }
        #expect(abs(time - 0.56) < 1e-9)
        // Put down at the mean, on a table: within the sway margin, read at 4 Hz until 2 s pass.
        let resting = Self.rotated(Self.upright, degrees: 0.4)
        var changes: [(Double, SamplingPace.Pace)] = []
        let putDown = time - 0.04
        while time < putDown + 3 {
            if let change = pace.observe(resting, at: time, detectorSettled: true) { changes.append((time, change)) }
            time += pace.interval
        }
        #expect(changes.map(\.1) == [.lying])
        #expect(changes.count == 1 && changes[0].0 - putDown >= 2 && changes[0].0 - putDown < 2 + 0.25 + 1e-9)
        #expect(pace.interval == 1 / 1.8)
        // 0.6° further (0.0105 g): swaying again, far inside the motion margin (0.1 g).
        #expect(pace.observe(Self.rotated(resting, degrees: 0.6), at: time, detectorSettled: true) == .held)
        #expect(pace.interval == 1.0 / 4)
        // Within the sway margin again: held until 2 s have passed without sway.
        #expect(pace.observe(resting, at: time + 1.9, detectorSettled: true) == nil)
        #expect(pace.observe(resting, at: time + 2, detectorSettled: true) == .lying)
    }

    @Test("held-rate 0 or below the rest rate reads a held device at the rest rate")
    func heldRateOff() {
        #expect(SamplingPace.Settings(heldRate: 0).rate(.held) == 1.8)
        #expect(SamplingPace.Settings(restRate: 5, heldRate: 4).rate(.held) == 5)
        #expect(SamplingPace.Settings().rate(.held) == 4)
    }

    /// `vector` tilted further by `degrees` about the x axis.
    static func rotated(_ vector: Vector3, degrees: Double) -> Vector3 {
        let radians = degrees * .pi / 180
        return Vector3(
            vector.x, vector.y * cos(radians) - vector.z * sin(radians),
            vector.y * sin(radians) + vector.z * cos(radians))
    }

    @Test("NaN starts afresh at the fast pace")
    func notANumber() {
        var pace = SamplingPace()
        for step in 0...30 { _ = pace.observe(Self.upright, at: Double(step) * 0.04, detectorSettled: true) }
        #expect(pace.observe(Vector3(.nan, 0, 0), at: 2, detectorSettled: true) == .fast)
        #expect(pace.observe(Self.upright, at: 2.04, detectorSettled: true) == nil)
    }
}

#if canImport(Glibc)
import Glibc
#endif
