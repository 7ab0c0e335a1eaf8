import Foundation
import Testing
@testable import OrientationCore

/// ``PacedReplay``: a trace read as the daemon polls a sensor.
@Suite("Paced replay")
struct PacedReplayTests {
    /// A still portrait trace at 100 Hz for `seconds`, then landscapeRight (x = +g) for as long.
    static func stepTrace(seconds: Double) -> [(time: Double, reading: Vector3)] {
        (0..<Int(200 * seconds)).map { index in
            let time = Double(index) / 100
            return (time, time < seconds ? Vector3(0, -9.81, 0) : Vector3(9.81, 0, 0))
        }
    }

    static func replay(
        _ samples: [(time: Double, reading: Vector3)], _ settings: SamplingPace.Settings,
        timing: PacedReplay.Timing = PacedReplay.Timing()
    ) -> (reads: [PacedReplay.Read], replay: PacedReplay) {
        var replay = PacedReplay(pipeline: OrientationPipeline(), pace: settings, timing: timing)
        var reads: [PacedReplay.Read] = []
        for sample in samples { reads += replay.offer(time: sample.time, reading: sample.reading) }
        reads += replay.finish(at: samples.last!.time)
        return (reads, replay)
    }

    @Test("at a fixed pace a read falls every period from the phase and takes the newest sample at or before it")
    func fixedGrid() {
        let samples = Self.stepTrace(seconds: 2)
        let settings = SamplingPace.Settings(fastRate: 10, restRate: 10, heldRate: 10)
        let (reads, replay) = Self.replay(samples, settings, timing: PacedReplay.Timing(phase: 0.015))
        #expect(replay.reads == reads.count)
        #expect(reads.count == 40)  // 0.015, 0.115, … 3.915
        for (index, read) in reads.enumerated() {
            #expect(abs(read.time - (0.015 + Double(index) / 10)) < 1e-9)
        }
        // The step at 2.000 s is read at 2.015 s (the sample of 2.01 s).
        let change = reads.compactMap(\.change).last
        #expect(change?.to == .landscapeRight)
        #expect(change.map { $0.time >= 2.015 && $0.time < 2.015 + 0.3 } == true)
    }

    @Test("at the default pace a still device is read at the lying rate, and a step brings the sampling rate back")
    func adaptive() {
        let samples = Self.stepTrace(seconds: 10)
        let (reads, _) = Self.replay(samples, SamplingPace.Settings())
        #expect(reads.compactMap(\.pace).contains(.lying))
        let still = reads.filter { $0.time > 4 && $0.time < 10 }
        #expect(Double(still.count) / 6 < 2, "\(still.count) reads in 6 still seconds")
        let afterStep = reads.filter { $0.time >= 10 && $0.time < 11 }
        #expect(afterStep.contains { $0.pace == .fast })
        #expect(afterStep.count >= 10)
    }

    /// Reads per second between 1 and 3 s of a 200 Hz trace turning in the screen plane at 1 rad/s
    /// (the pace stays fast), its gyroscope reading `rate(time)` about z when given, and the verdict
    /// at the end.
    static func movingReads(rate: ((Double) -> Double)?) -> (perSecond: Double, verdict: GyroscopeCheck.Verdict) {
        var replay = PacedReplay(pipeline: OrientationPipeline(), pace: SamplingPace.Settings())
        var reads: [PacedReplay.Read] = []
        for index in 0..<800 {
            let time = Double(index) / 200
            let reading = Vector3(-9.81 * sin(time), -9.81 * cos(time), 0)
            reads += replay.offer(time: time, reading: reading, rotationRate: rate.map { Vector3(0, 0, $0(time)) })
        }
        let moving = reads.filter { $0.time >= 1 && $0.time < 3 }
        return (Double(moving.count) / 2, replay.pipeline.detector.gyroscopeVerdict)
    }

    @Test(
        """
        while the device moves, a working gyroscope is read at the gyroscope rate (50 Hz, where a hand's \
        quickest turn integrates), a trace without one at the sampling rate (25 Hz), a failed one too
        """)
    func gyroscopeReadFaster() {
        let working = Self.movingReads(rate: { 1 + 0.01 * sin(37 * $0) })
        #expect(working.verdict == .working)
        #expect(abs(working.perSecond - 50) <= 1, "\(working.perSecond) reads/s with a working gyroscope")
        let none = Self.movingReads(rate: nil)
        #expect(abs(none.perSecond - 25) <= 1, "\(none.perSecond) reads/s without a gyroscope")
        // Frozen at zero while the accelerometer turns: judged failed, and read as without one.
        let frozen = Self.movingReads(rate: { _ in 0 })
        #expect(frozen.verdict != .working)
        #expect(abs(frozen.perSecond - 25) <= 1, "\(frozen.perSecond) reads/s with a failed gyroscope")
    }

    @Test("a read after a rest carries one reading's weight in the low-pass, not the whole pause's")
    func readAfterRest() throws {
        // Still in portrait until 5 s, then one reading 40° off (a flick's far pose) and portrait again.
        var samples = (0..<500).map { (time: Double($0) / 100, reading: Vector3(0, -9.81, 0)) }
        let angle = 40.0 * .pi / 180
        samples.append((5.0, Vector3(9.81 * sin(angle), -9.81 * cos(angle), 0)))
        var replay = PacedReplay(pipeline: OrientationPipeline(), pace: SamplingPace.Settings())
        for sample in samples.dropLast() { _ = replay.offer(time: sample.time, reading: sample.reading) }
        #expect(replay.pace.pace == .lying)
        let before = try #require(replay.pipeline.detector.filteredGravity)
        _ = replay.offer(time: 5.0, reading: samples.last!.reading)
        _ = replay.finish(at: 5.0 + 1 / 1.8)
        let after = try #require(replay.pipeline.detector.filteredGravity)
        // One 25 Hz reading's weight: 0.04 / (0.2 + 0.04) = 1/6 of the way.
        let expected = before + (1.0 / 6) * (samples.last!.reading - before)
        #expect((after - expected).magnitude < 1e-6, "\(after) against \(expected)")
    }

    @Test("a realisation's timing is the same every time and its phase lies within one sampling period")
    func realisations() {
        var phases: Set<Double> = []
        for seed in UInt64(0)..<40 {
            let timing = PacedReplay.Timing.random(seed: seed, fastRate: 25)
            #expect(timing == PacedReplay.Timing.random(seed: seed, fastRate: 25))
            #expect(timing.phase >= 0 && timing.phase < 0.04)
            #expect(timing.maximumLateness == 0.002)
            phases.insert(timing.phase)
        }
        #expect(phases.count == 40)
        let samples = Self.stepTrace(seconds: 3)
        let one = Self.replay(samples, SamplingPace.Settings(), timing: .random(seed: 5, fastRate: 25)).reads
        let again = Self.replay(samples, SamplingPace.Settings(), timing: .random(seed: 5, fastRate: 25)).reads
        #expect(one == again)
        let other = Self.replay(samples, SamplingPace.Settings(), timing: .random(seed: 6, fastRate: 25)).reads
        #expect(one.map(\.time) != other.map(\.time))
    }
}
