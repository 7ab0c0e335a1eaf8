import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import OrientationCore

@Suite("Gyroscope check")
struct GyroscopeCheckTests {
    static let upright = Vector3(0, -9.81, 0)
    static let onItsSide = Vector3(-9.81, 0, 0)

    @Test("a reading frozen while the accelerometer turns is a fault; frozen at rest is not; a new reading ends it")
    func frozen() {
        var check = GyroscopeCheck()
        let stuck = Vector3(0.01, -0.02, 0.03)
        // Two seconds at rest on the same reading (a bias, quantised): nothing.
        for step in 0...100 {
            #expect(
                check.observe(time: Double(step) * 0.02, rate: stuck, reading: Self.upright, lastReanchor: nil) == nil)
        }
        // Turned onto its side while the gyroscope still says the same.
        var verdicts: [GyroscopeCheck.Verdict] = []
        for step in 101...130 {
            if let verdict = check.observe(
                time: Double(step) * 0.02, rate: stuck, reading: Self.onItsSide, lastReanchor: nil)
            {
                verdicts.append(verdict)
            }
        }
        #expect(verdicts.count == 1)
        guard case .failed(let detail) = verdicts.first else {
            Issue.record("no fault: \(verdicts)")
            return
        }
        // 90° turned, give or take the few degrees the held bias (0.037 rad/s) turns it in 2.6 s.
        let degrees = detail.split(separator: "turned ").last.flatMap { Int($0.prefix { $0.isNumber }) }
        #expect(detail.contains("frozen") && (84...96).contains(degrees ?? 0), "\(detail)")
        #expect(
            check.observe(time: 2.7, rate: Vector3(0.011, -0.02, 0.03), reading: Self.onItsSide, lastReanchor: nil)
                == .working)
    }

    @Test(
        """
        a turn made while the gyroscope was off is no evidence: it comes back with the same reading (a \
        simulated or quantised bias) after the device turned at rest, and the frozen run starts afresh
        """)
    func turnedWhileOff() {
        var check = GyroscopeCheck()
        let bias = Vector3(0.01, -0.02, 0.03)
        // Read for 0.6 s upright, off for 0.5 s while the device is turned, read again on its side.
        for step in 0...30 {
            _ = check.observe(time: Double(step) * 0.02, rate: bias, reading: Self.upright, lastReanchor: nil)
        }
        for step in 55...150 {
            _ = check.observe(time: Double(step) * 0.02, rate: bias, reading: Self.onItsSide, lastReanchor: nil)
            #expect(check.verdict == .working, "judged failed at \(Double(step) * 0.02) s")
        }
        // Read on through the turn instead, the same readings are a fault.
        var continuous = GyroscopeCheck()
        for step in 0...150 {
            _ = continuous.observe(
                time: Double(step) * 0.02, rate: bias, reading: step <= 30 ? Self.upright : Self.onItsSide,
                lastReanchor: nil)
        }
        #expect(continuous.verdict != .working)
    }

    @Test("a turn the gyroscope reports is no evidence, whatever the accelerometer says meanwhile")
    func turning() {
        var check = GyroscopeCheck()
        for step in 0...100 {
            let rate = Vector3(0, 0, 1 + Double(step % 7) * 0.01)
            let reading = step < 50 ? Self.upright : Self.onItsSide
            #expect(check.observe(time: Double(step) * 0.02, rate: rate, reading: reading, lastReanchor: nil) == nil)
        }
    }

    @Test(
        """
        a steady turn repeats one rate (or a hub reports it once): the rate, held, turns gravity as the \
        accelerometer saw, so it is no fault; held at zero or the other way through the same turn, it is
        """)
    func steadyTurn() {
        /// A device turned about its z axis at `speed` for 1.5 s (50 Hz), its gyroscope reading `rate`
        /// all along: gravity, fixed in the world, turns the other way in the device's frame.
        func verdicts(rate: Vector3, speed: Double = 1) -> [GyroscopeCheck.Verdict] {
            var check = GyroscopeCheck()
            var seen: [GyroscopeCheck.Verdict] = []
            for step in 0...75 {
                let time = Double(step) * 0.02
                let angle = speed * time
                let reading = Vector3(-9.81 * sin(angle), -9.81 * cos(angle), 0)
                if let verdict = check.observe(time: time, rate: rate, reading: reading, lastReanchor: nil) {
                    seen.append(verdict)
                }
            }
            return seen
        }
        #expect(verdicts(rate: Vector3(0, 0, 1)).isEmpty, "1 rad/s for 1.5 s is 86°, and the rate says so")
        // A rate that lags or leads the true turn by a few percent (a hub's rounding) still agrees.
        #expect(verdicts(rate: Vector3(0, 0, 0.95)).isEmpty)
        guard case .failed(let detail)? = verdicts(rate: .zero).first else {
            Issue.record("a rate stuck at zero through 86° was no fault")
            return
        }
        #expect(detail.contains("frozen at (0.0, 0.0, 0.0) rad/s"), "\(detail)")
        #expect(verdicts(rate: Vector3(0, 0, -1)).first != nil, "the rate the other way")
    }

    @Test("three large disagreements with the accelerometer within a minute are a fault, over a minute later")
    func atOdds() {
        var check = GyroscopeCheck()
        var time = 0.0
        func sample(reanchor: (Double, Double)?) -> GyroscopeCheck.Verdict? {
            time += 0.1
            return check.observe(
                time: time, rate: Vector3(0, 0, time), reading: Self.upright, lastReanchor: reanchor)
        }
        #expect(sample(reanchor: (0.1, 25)) == nil)
        #expect(sample(reanchor: (0.1, 25)) == nil, "the same re-anchoring seen again counts once")
        #expect(sample(reanchor: (0.3, 8)) == nil, "small: a push, a learned bias")
        #expect(sample(reanchor: (0.4, 30)) == nil)
        guard case .failed(let detail)? = sample(reanchor: (0.5, 22)) else {
            Issue.record("no fault after three")
            return
        }
        #expect(detail.contains("disagreed"))
        var recovered: GyroscopeCheck.Verdict?
        while recovered == nil, time < 70 { recovered = sample(reanchor: (0.5, 22)) }
        #expect(recovered == .working)
        #expect(time > 60)
    }

    @Test("a frozen gyroscope leaves detection to the accelerometer: the turn is decided as without one")
    func detectorFallsBack() {
        var fused = OrientationDetector()
        var alone = OrientationDetector()
        var withRates: [OrientationChange] = []
        var without: [OrientationChange] = []
        for step in 0..<200 {
            let time = Double(step) * 0.02
            let reading = step < 100 ? Self.upright : Self.onItsSide
            if let change = fused.process(
                AccelerationSample(time: time, vector: reading, rotationRate: Vector3(0.2, 0.2, 0.2)))
            {
                withRates.append(change)
            }
            if let change = alone.process(AccelerationSample(time: time, vector: reading)) { without.append(change) }
        }
        #expect(withRates == without)
        #expect(withRates.last?.to == .landscapeLeft)
        #expect(fused.gyroscopeVerdict != .working)
    }
}
