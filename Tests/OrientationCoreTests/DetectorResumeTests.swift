import Testing
@testable import OrientationCore

/// After a sleep the device may hold another pose than the one shown: ``OrientationDetector/startAfresh(at:)``
/// (detection.md §5).
@Suite("Detector: a fresh start after a resume")
struct DetectorResumeTests {
    /// Portrait for a second, then a sleep of `gap` seconds and `pose` held after it, with or
    /// without the fresh start at the resume.
    private static func resumed(
        to pose: Pose, afresh: Bool, gap: Double = 1.5
    ) -> (simulator: PoseSimulator, resumedAt: Double) {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.time += gap
        if afresh { simulator.detector.startAfresh(at: simulator.time) }
        let resumedAt = simulator.time
        simulator.hold(pose, for: 1)
        return (simulator, resumedAt)
    }

    @Test("the pose held after the resume is shown one sample period after its first reading, from the old one")
    func newPoseAtTheSecondReading() throws {
        let (simulator, resumedAt) = Self.resumed(to: .landscapeLeft, afresh: true)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
        let change = try #require(simulator.changes.last)
        #expect(change.from == .portrait, "no passage through unknown")
        #expect(abs(change.time - (resumedAt + 1 / simulator.rate)) < 1e-9)

        // Without it, a gap only re-primes the estimate: the rest rule waits for its window.
        let (plain, plainResumedAt) = Self.resumed(to: .landscapeLeft, afresh: false)
        let slower = try #require(plain.changes.last)
        #expect(slower.time - plainResumedAt > change.time - resumedAt)
    }

    @Test("the same pose after the resume changes nothing, and a turn after it is as quick as ever")
    func samePoseIsNoChange() throws {
        var (simulator, _) = Self.resumed(to: .portrait, afresh: true)
        #expect(simulator.reported == [.portrait])
        let turn = simulator.time
        simulator.hold(.landscapeRight, for: 1)
        let change = try #require(simulator.changes.last)
        #expect(change.to == .landscapeRight)
        #expect(change.time - turn <= 0.121)
    }

    @Test("a sensor silent after the resume makes the orientation unknown at the silence timeout")
    func silenceAfterTheResume() throws {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.detector.startAfresh(at: 10)
        #expect(simulator.detector.advance(to: 11.9) == nil)
        let silence = simulator.detector.advance(to: 12)
        let change = try #require(silence)
        #expect((change.from, change.to, change.time) == (.portrait, .unknown, 12))
    }

    @Test("a fresh start before any decision is the start-up it already is")
    func beforeTheFirstDecision() {
        var simulator = PoseSimulator()
        simulator.detector.startAfresh(at: 0)
        #expect(simulator.detector.advance(to: 5) == nil)
        simulator.hold(.landscapeLeft, for: 1)
        #expect(simulator.reported == [.landscapeLeft])
    }
}
