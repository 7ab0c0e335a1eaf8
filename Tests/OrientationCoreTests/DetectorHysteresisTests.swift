import Foundation
import Testing
@testable import OrientationCore

/// Edges of the dead zones. Each case is chosen so that a detector without the band would answer
/// differently.
@Suite("Detector: hysteresis bands")
struct DetectorHysteresisTests {
    /// From portrait, the screen turned in its plane to `angle` and held still for 3 s.
    func portraitTurned(to angle: Double, tilt: Double = 20) -> [DeviceOrientation] {
        var simulator = PoseSimulator()
        simulator.hold(Pose(angle: 0, tilt: tilt), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: tilt), to: Pose(angle: angle, tilt: tilt), over: 0.5)
        simulator.hold(Pose(angle: angle, tilt: tilt), for: 3)
        return simulator.reported
    }

    @Test(
        "past the diagonal but short of the dwell line (53° with the default 16° margin) stays portrait",
        arguments: [50.0, 52, -50, -52])
    func insideBand(angle: Double) {
        // Nearest-axis classification alone would say landscape for all of these.
        #expect(portraitTurned(to: angle) == [.portrait])
    }

    @Test(
        "held still past the dwell line but inside the band switches after the dwell time",
        arguments: [(58.0, DeviceOrientation.landscapeLeft), (66, .landscapeLeft), (-60, .landscapeRight)])
    func dwellPastLine(angle: Double, orientation: DeviceOrientation) throws {
        var simulator = PoseSimulator()
        simulator.hold(Pose(angle: 0, tilt: 20), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: 20), to: Pose(angle: angle, tilt: 20), over: 0.5)
        let stopped = simulator.time
        simulator.hold(Pose(angle: angle, tilt: 20), for: 3)
        #expect(simulator.reported == [.portrait, orientation])
        let change = try #require(simulator.changes.last)
        // Not before the pose has been past the line (53°) for the dwell time (the turn is linear).
        let crossed = stopped - 0.5 + 0.5 * 53 / abs(angle)
        #expect(change.time - crossed >= DetectorConfiguration().restingDwell.time)
        // ...and once the low-passed pose has caught up within `dwellAgreement` (a first-order filter
        // trails a turn at ω by ω·τ and closes the gap exponentially after it stops), no later than the
        // dwell time and a sample after that.
        let configuration = DetectorConfiguration()
        let lag = abs(angle) / 0.5 * configuration.estimate.filterTimeConstant
        let caughtUp = configuration.estimate.filterTimeConstant * log(lag / configuration.restingDwell.agreement)
        #expect(
            change.time - stopped <= max(caughtUp, configuration.rest.window) + configuration.restingDwell.time + 0.04)
    }

    @Test(
        "beyond the band (67.5° with the default 45° gap) switches",
        arguments: [
            (69.0, DeviceOrientation.landscapeLeft), (75, .landscapeLeft), (-69, .landscapeRight),
        ])
    func beyondBand(angle: Double, orientation: DeviceOrientation) {
        #expect(portraitTurned(to: angle) == [.portrait, orientation])
    }

    @Test("coming back from landscape, the band is measured from landscape")
    func bandFromLandscape() {
        var simulator = PoseSimulator()
        simulator.hold(.landscapeLeft, for: 1)
        simulator.turn(from: .landscapeLeft, to: Pose(angle: 38, tilt: 0), over: 0.3)
        simulator.hold(Pose(angle: 38, tilt: 0), for: 3)
        // 38° is nearer portrait, but only 52° from landscapeLeft (short of the 53° dwell line): stays.
        #expect(simulator.reported == [.landscapeLeft])
        simulator.turn(from: Pose(angle: 38, tilt: 0), to: Pose(angle: 20, tilt: 0), over: 0.2)
        simulator.hold(Pose(angle: 20, tilt: 0), for: 2)
        #expect(simulator.reported == [.landscapeLeft, .portrait])
    }

    /// Wobbling `amplitude` degrees about the diagonal at 1 Hz for 20 s, from portrait.
    func wobbled(amplitude: Double) -> [DeviceOrientation] {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.turn(from: .portrait, to: Pose(angle: 45, tilt: 10), over: 0.5)
        let high = Pose(angle: 45 + amplitude, tilt: 10), low = Pose(angle: 45 - amplitude, tilt: 10)
        for _ in 0..<20 {
            simulator.turn(from: Pose(angle: 45, tilt: 10), to: high, over: 0.25)
            simulator.turn(from: high, to: low, over: 0.5)
            simulator.turn(from: low, to: Pose(angle: 45, tilt: 10), over: 0.25)
        }
        return simulator.reported
    }

    @Test("wobbling between 38° and 52° (inside both dwell lines) for 20 s changes nothing")
    func wobbleInsideDwellLines() {
        #expect(wobbled(amplitude: 7) == [.portrait])
    }

    @Test("wobbling between 35° and 55° for 20 s never flaps: the pause at 55° (0.2 s) may count once, no more")
    func wobbleAt45() {
        // Each turn pauses past the 53° line long enough to pass the rest test and the dwell time;
        // the way back to portrait by the dwell rule then needs a turn back of twice the margin (32°)
        // from there, to about 23°, which 35° never reaches.
        let reported = wobbled(amplitude: 10)
        #expect(reported == [.portrait] || reported == [.portrait, .landscapeLeft], "\(reported)")
    }

    /// From portrait turned to `angle` (tilted 10°) and held 2 s, then to each of `returns` in turn,
    /// each held 2 s: what was reported after each hold.
    func dwellTakenThenTurnedBack(at angle: Double, to returns: [Double]) -> [[DeviceOrientation]] {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        var from = Pose.portrait
        var reported: [[DeviceOrientation]] = []
        for target in [angle] + returns {
            let pose = Pose(angle: target, tilt: 10)
            simulator.turn(from: from, to: pose, over: 0.5)
            simulator.hold(pose, for: 2)
            reported.append(simulator.reported)
            from = pose
        }
        return reported
    }

    @Test("a dwell change is undone by a turn back of twice the margin from where it was made, not before")
    func dwellReturnLine() {
        // 33° is past landscape's dwell line (57° from its axis) but only 27° back from 60°, short of
        // twice the margin (32°); 26° is 34° back.
        let reported = dwellTakenThenTurnedBack(at: 60, to: [33, 26])
        #expect(
            reported == [
                [.portrait, .landscapeLeft], [.portrait, .landscapeLeft], [.portrait, .landscapeLeft, .portrait],
            ])
    }

    @Test("the return is measured from where the dwell change was made: taken at 63°, undone at 30°, 33° back")
    func dwellReturnFromWhereTaken() {
        // 30° from portrait is 60° from landscapeLeft's axis, short of the 61° a return line
        // measured from the axis would ask, but 33° back from where landscapeLeft was taken.
        let reported = dwellTakenThenTurnedBack(at: 63, to: [30])
        #expect(reported == [[.portrait, .landscapeLeft], [.portrait, .landscapeLeft, .portrait]])
    }

    @Test("the band's width is the configured gap")
    func configuredGap() {
        var configuration = DetectorConfiguration()
        configuration.bands.adjacentHysteresis = 10
        var simulator = PoseSimulator(configuration: configuration)
        simulator.hold(.portrait, for: 1)
        simulator.turn(from: .portrait, to: Pose(angle: 55, tilt: 0), over: 0.5)
        simulator.hold(Pose(angle: 55, tilt: 0), for: 2)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
    }

    // MARK: face up / face down

    /// From `start` held still, tilted to `tilt` (same in-plane angle) and held for 3 s.
    func tilted(from start: Pose, to tilt: Double) -> [DeviceOrientation] {
        var simulator = PoseSimulator()
        simulator.hold(start, for: 1)
        let end = Pose(angle: start.angle, tilt: tilt)
        simulator.turn(from: start, to: end, over: 0.6)
        simulator.hold(end, for: 3)
        return simulator.reported
    }

    @Test("reading in bed (tilted back 60–74°) stays portrait", arguments: [60.0, 65, 70, 74])
    func readingInBed(tilt: Double) {
        #expect(tilted(from: Pose(angle: 0, tilt: 20), to: tilt) == [.portrait])
    }

    @Test(
        "beyond 75° a device becomes faceUp or faceDown",
        arguments: [(76.0, DeviceOrientation.faceUp), (85, .faceUp), (-76, .faceDown), (-88, .faceDown)])
    func entersFace(tilt: Double, orientation: DeviceOrientation) {
        #expect(tilted(from: Pose(angle: 0, tilt: 10), to: tilt) == [.portrait, orientation])
    }

    @Test("a slightly uneven table (5–24° off flat) stays faceUp", arguments: [85.0, 78, 70, 66])
    func unevenTable(tilt: Double) {
        // Between 65° and 75° a detector without the face band would call this portrait.
        #expect(tilted(from: .faceUp, to: tilt) == [.faceUp])
    }

    @Test(
        "lifted below 65° a face state gives way to the upright orientation",
        arguments: [(64.0, DeviceOrientation.portrait), (40, .portrait)])
    func leavesFace(tilt: Double, orientation: DeviceOrientation) {
        #expect(tilted(from: .faceUp, to: tilt) == [.faceUp, orientation])
    }

    @Test("held overhead (screen down 55°) and turned, an upright orientation is locked: it holds")
    func overheadLockHoldsUpright() {
        var simulator = PoseSimulator()
        simulator.hold(Pose(angle: 0, tilt: 20), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: 20), to: Pose(angle: 0, tilt: -55), over: 0.6)
        simulator.hold(Pose(angle: 0, tilt: -55), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: -55), to: Pose(angle: 90, tilt: -55), over: 0.6)
        simulator.hold(Pose(angle: 90, tilt: -55), for: 3)
        #expect(simulator.reported == [.portrait])
    }

    @Test(
        """
        face down holds until |tilt| < 65°; screen still facing down, the direction then decides: from a face \
        state there is no upright orientation for the overhead lock to hold
        """)
    func faceDownHolds() {
        #expect(tilted(from: .faceDown, to: -68) == [.faceDown])
        #expect(tilted(from: .faceDown, to: -60) == [.faceDown, .portrait])
        #expect(tilted(from: .faceDown, to: -30) == [.faceDown, .portrait])
        #expect(tilted(from: Pose(angle: 90, tilt: -88), to: -45) == [.faceDown, .landscapeLeft])
        #expect(tilted(from: .faceDown, to: 10) == [.faceDown, .portrait])
    }
}
