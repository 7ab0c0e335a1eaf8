#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import OrientationCore

/// A person doing the wizard's poses with a device whose sensor is mounted by `mounting`
/// (device = mounting · raw): readings in the sensor's frame at 25 Hz, with hand tremor, each pose
/// held a few degrees off, and the turn between poses jerky enough not to look still.
struct CalibratingPerson {
    let mounting: MountMatrix
    var time = 0.0
    var events: [PoseCaptureEvent] = []
    var capture = PoseCapture()
    private var seed: UInt64 = 0x2545_F491_4F6C_DD1D
    private var held: Vector3

    init(mounting: MountMatrix, startingFrom start: Vector3 = Vector3(0, 0, -9.81)) {
        self.mounting = mounting
        held = start
        events = capture.start(at: 0)
    }

    private mutating func random() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(seed >> 11) / Double(1 << 53) * 2 - 1
    }

    /// raw = mountingᵀ · device (a signed permutation or rotation is orthogonal).
    func raw(_ device: Vector3) -> Vector3 { mounting.sensorReading(for: device) }

    mutating func feed(_ device: Vector3, tremor: Double = 0.08) {
        let reading = raw(device) + Vector3(random() * tremor, random() * tremor, random() * tremor)
        events += capture.observe(time: time, reading: reading)
        time += 0.04
    }

    /// Holds the current direction still for `seconds`.
    mutating func hold(_ seconds: Double) {
        for _ in 0..<Int(seconds * 25) { feed(held) }
    }

    /// Turns to `pose` (a few degrees off it) over `seconds`, shaking as hands do, then holds it.
    mutating func turn(
        to pose: DeviceOrientation, over seconds: Double = 1.2, hold seconds2: Double = 1.6, offBy degrees: Double = 6
    ) {
        let target = Self.tilted(pose.gravityReading! * 9.81, by: degrees, seed: random())
        let steps = Int(seconds * 25)
        for step in 1...steps {
            let f = Double(step) / Double(steps)
            let blend = held * (1 - f) + target * f
            let jerk = Vector3(random(), random(), random()) * 2.5
            feed(blend * (9.81 / blend.magnitude) + jerk)
        }
        held = target
        hold(seconds2)
    }

    /// `v` turned by `degrees` towards a direction chosen by `seed`.
    static func tilted(_ v: Vector3, by degrees: Double, seed: Double) -> Vector3 {
        let any = abs(v.x) < 5 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
        let side = v.cross(any) / v.cross(any).magnitude * v.magnitude
        let a = degrees * .pi / 180 * (seed >= 0 ? 1 : -1)
        return v * cos(a) + side * sin(a)
    }

    /// The whole wizard: rests as it started, then each pose asked for, the last one still held
    /// while the next prompt is read.
    mutating func doTheWizard() {
        hold(2)
        for pose in capture.configuration.poses {
            turn(to: pose)
            hold(1.5)
        }
    }

    var captures: [PoseCapture.Capture]? {
        for case .finished(let captures) in events { return captures }
        return nil
    }
    var rejections: [String] { events.compactMap { if case .rejected(_, let reason) = $0 { reason } else { nil } } }
}

@Suite("Mount calibration")
struct MountCalibrationTests {
    @Test(
        "every signed permutation, proper and improper, is found from a person's poses",
        arguments: MountMatrix.signedPermutations)
    func findsEveryMounting(mounting: MountMatrix) throws {
        var person = CalibratingPerson(mounting: mounting)
        person.doTheWizard()
        let captures = try #require(
            person.captures, "finished: \(person.events.filter { if case .stillness = $0 { false } else { true } })")
        #expect(captures.map(\.pose) == [.portrait, .landscapeLeft, .faceUp])
        #expect(person.rejections.isEmpty, "the pose still held while reading the prompt is no second attempt")
        let fit = try #require(MountFit.fit(captures))
        #expect(fit.matrix == mounting)
        #expect(fit.isSignedPermutation)
        #expect(fit.worstError < 10)
    }

    @Test("a sensor mounted askew gets the best rotation, not a permutation")
    func askewMounting() throws {
        // 25° about the display's z axis, after swapping x and y (improper).
        let a = 25 * Double.pi / 180
        let mounting = try MountMatrix(rows: [[sin(a), cos(a), 0], [cos(a), -sin(a), 0], [0, 0, 1]])
        var person = CalibratingPerson(mounting: mounting)
        person.doTheWizard()
        let captures = try #require(person.captures)
        let fit = try #require(MountFit.fit(captures))
        #expect(!fit.isSignedPermutation)
        for (found, truth) in zip(fit.matrix.rows, mounting.rows) {
            #expect((found - truth).magnitude < 0.2, "\(fit.matrix.text) vs \(mounting.text)")
        }
        #expect(fit.worstError < 10)
        #expect(
            fit.matrix.rows[0].dot(fit.matrix.rows[1].cross(fit.matrix.rows[2])) < 0, "a reflection stays a reflection")
    }

    @Test("the pose the device rests in when the wizard starts is not taken as the first")
    func restingStartIsNoAnswer() {
        // Lying upright in portrait already (in a stand): still for 5 s, nothing is captured.
        var person = CalibratingPerson(mounting: .identity, startingFrom: Vector3(0, -9.81, 0))
        person.hold(5)
        #expect(!person.events.contains { if case .captured = $0 { true } else { false } })
        // Picked up, turned away and back: now it counts.
        person.turn(to: .faceUp, hold: 0.4)
        person.turn(to: .portrait)
        #expect(
            person.events.contains(.captured(.portrait, person.capture.captures.first?.reading ?? Vector3(0, 0, 0))))
    }

    @Test("a tap on the table is not a turn")
    func tapIsNoTurn() {
        var person = CalibratingPerson(mounting: .identity)
        person.hold(1)
        person.feed(Vector3(6, 0, -14))  // one jolt, far from 1 g
        person.hold(3)
        #expect(person.capture.captures.isEmpty)
    }

    @Test("an earlier pose held again is rejected once, with the reason")
    func poseHeldTwice() {
        var person = CalibratingPerson(mounting: .identity)
        person.hold(1)
        person.turn(to: .portrait)
        person.turn(to: .faceUp, hold: 0.3)
        person.turn(to: .portrait, hold: 4)  // back to portrait when landscape was asked for
        #expect(person.rejections.count == 1)
        #expect(person.rejections.first?.contains("held as it was for portrait") == true)
        #expect(person.rejections.first?.contains("turn it to landscapeLeft") == true)
        #expect(person.capture.captures.count == 1)
        // Then the right pose is taken.
        person.turn(to: .landscapeLeft)
        #expect(person.capture.captures.map(\.pose) == [.portrait, .landscapeLeft])
    }

    @Test("a device that is never still gives up after the timeout, saying what it waited for")
    func neverStill() {
        var configuration = PoseCaptureConfiguration()
        configuration.poseTimeout = 10
        var person = CalibratingPerson(mounting: .identity)
        person.capture = PoseCapture(configuration: configuration)
        person.events = person.capture.start(at: 0)
        for _ in 0..<(12 * 25) { person.feed(Vector3(0, -9.81, 0), tremor: 3) }
        let failures = person.events.compactMap { if case .failed(let reason) = $0 { reason } else { nil } }
        #expect(failures.count == 1)
        #expect(failures.first?.hasPrefix("no still portrait pose in 10 s") == true)
        #expect(person.capture.captures.isEmpty)
    }

    @Test("captures along only two axes fix no matrix")
    func twoAxesAreNotEnough() {
        let captures = [
            PoseCapture.Capture(pose: .portrait, reading: Vector3(0, -9.81, 0)),
            PoseCapture.Capture(pose: .portraitUpsideDown, reading: Vector3(0, 9.81, 0)),
            PoseCapture.Capture(pose: .landscapeLeft, reading: Vector3(-9.81, 0, 0)),
        ]
        #expect(MountFit.fit(captures) == nil, "z's sign would be a guess")
        let third = PoseCapture.Capture(pose: .faceUp, reading: Vector3(0, 0, -9.81))
        #expect(MountFit.fit(captures + [third])?.matrix == .identity)
    }
}
