import OrientationCore
import SensorSimulation
import Testing

/// A turn shows one rotation: a neighbour the device merely passes through on its way (a walk's turn
/// from landscape to landscape through portrait) is not reported (detection-log.md §17, "A turn passing
/// through"). Judged on the soak's walking sessions, whose poses lie on the axes and are held 15–60 s,
/// so every change that lasts less than `passing` seconds is one the turn passed through.
@Suite("One rotation per turn")
struct OneRotationPerTurnTests {
    static let passing = 0.7

    /// The changes that lasted less than `passing`, and all changes, over 14 walking sessions.
    static func walkingChanges(_ configuration: DetectorConfiguration) -> (passing: Int, all: Int) {
        var passing = 0, all = 0
        for seed in UInt64(1)...14 {
            let session = WorkingSensorSession(.walking, seed: seed)
            let step = session.part.countStep
            var detector = OrientationDetector(configuration: configuration)
            var times: [Double] = []
            for reading in session {
                let sample = AccelerationSample(time: reading.time, vector: step * reading.raw)
                if let change = detector.process(sample) { times.append(change.time) }
            }
            all += times.count
            passing += zip(times, times.dropFirst()).filter { $1 - $0 < Self.passing }.count
        }
        return (passing, all)
    }

    @Test("walking for 2.3 simulated hours, turned between portrait and either landscape: no change is passed through")
    func walkingTurns() {
        let changes = Self.walkingChanges(DetectorConfiguration())
        #expect(changes.passing == 0, "\(changes.passing) of \(changes.all) changes lasted under \(Self.passing) s")
        #expect(changes.all >= 14 * 10)
    }

    @Test("without the moving dwell rule's spread (180°) the same walks pass through the neighbour on the way")
    func walkingTurnsWithoutSpread() {
        var configuration = DetectorConfiguration()
        configuration.movingDwell.spread = 180
        #expect(Self.walkingChanges(configuration).passing > 0)
    }
}
