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
        #expect(changes.first?.1 == .rest)
        #expect(
            abs((changes.first?.0 ?? 0) - 0.52) < 1e-9,
            "settled at 0.5 s, then the next reading (0.5 s of steady ones by then)")
        #expect(pace.interval == 1 / 1.9, "the default rest rate")
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
        #expect(pace.pace == .rest)
        // 5° of tilt moves the reading by 0.86 m/s² (< 0.981): still rest; 7° by 1.2 m/s²: motion.
        func tilted(_ degrees: Double) -> Vector3 {
            let radians = degrees * .pi / 180
            return Vector3(0, -9.81 * cos(radians), -9.81 * sin(radians))
        }
        #expect(pace.observe(tilted(5), at: 2, detectorSettled: true) == nil)
        #expect(pace.observe(tilted(7), at: 3, detectorSettled: true) == .fast)
        // A new stretch starts at the moving reading: it must hold for the rest time again.
        #expect(pace.observe(tilted(7), at: 3.25, detectorSettled: true) == nil)
        #expect(pace.observe(tilted(7), at: 3.5, detectorSettled: true) == .rest)
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
