import Foundation
import Testing
import NIOConcurrencyHelpers
import OrientationCore
import SensorCore
@testable import OrientationDaemon

@Suite("Detection stage (the detector on the sensor's thread)")
struct DetectionStageTests {
    /// Samples of a device held still at `reading` (sensor frame) for `seconds` at 25 Hz; the changes they cause.
    func hold(
        _ stage: DetectionStage, _ reading: Vector3, from start: Double, seconds: Double = 1
    ) -> [OrientationChange] {
        stride(from: start, to: start + seconds, by: 0.04).compactMap { time in
            stage.observe(.sample(SensorSample(time: time, reading: reading))).change
        }
    }

    @Test("samples decide; a new sensor's matrix applies to the samples after it; a lost sensor starts afresh")
    func observe() throws {
        let stage = DetectionStage(configuration: DetectorConfiguration())
        #expect(stage.observe(.available(SensorDescription(identifier: "a", name: "a"))).change == nil)
        let upright = Vector3(0, -9.81, 0)
        #expect(hold(stage, upright, from: 0).map(\.to) == [.portrait])
        // The same raw reading through a matrix that turns the sensor's y into the display's x.
        let turned = try MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1")
        #expect(
            stage.observe(.available(SensorDescription(identifier: "b", name: "b", mountMatrix: turned))).change == nil)
        let afterTurn = hold(stage, upright, from: 1)
        #expect(afterTurn.count == 1)
        #expect(afterTurn.first?.from == .portrait)
        #expect(afterTurn.first.map { [.landscapeLeft, .landscapeRight].contains($0.to) } == true)
        #expect(stage.observe(.unavailable(reason: "removed")).change == nil)
        let again = hold(stage, upright, from: 2)
        #expect(again.first?.from == .unknown)
    }

    @Test(
        """
        a sleep nobody announced, seen on the clocks, starts the detector afresh: the pose held after it shows at \
        the second reading, from the one shown; an announced resume does the same and drops readings from before it
        """)
    func sleepSeenOnTheClocks() throws {
        let suspended = NIOLockedValueBox(0.0)
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), suspendedSoFar: { suspended.withLockedValue { $0 } })
        #expect(hold(stage, Vector3(0, -9.81, 0), from: 0).map(\.to) == [.portrait])
        suspended.withLockedValue { $0 = 3600 }  // an hour asleep; the monotonic clock ran on 1.5 s
        // Two distinct readings (a sensor's noise): one read twice proves nothing (detection.md rule 5).
        let left = Vector3(-9.81, 0, 0), leftAgain = Vector3(-9.8, 0.02, 0)
        let first = stage.observe(.sample(SensorSample(time: 2.5, reading: left)))
        #expect(first.sleptUnannounced == 3600 && first.change == nil)
        let second = try #require(stage.observe(.sample(SensorSample(time: 2.54, reading: leftAgain))).change)
        #expect((second.from, second.to) == (.portrait, .landscapeLeft))
        #expect(stage.observe(.sample(SensorSample(time: 2.58, reading: left))).sleptUnannounced == nil)

        suspended.withLockedValue { $0 = 7200 }  // announced: the resume looks at the clocks itself
        #expect(stage.resumes(at: 10) == 3600)
        let right = Vector3(9.81, 0, 0), rightAgain = Vector3(9.8, 0.02, 0)
        let stale = stage.observe(.sample(SensorSample(time: 9.9, reading: right)))
        #expect(stale == DetectionStage.Detection(), "a reading from before the resume proves nothing")
        #expect(stage.observe(.sample(SensorSample(time: 10.0, reading: right))).change == nil)
        let turned = try #require(stage.observe(.sample(SensorSample(time: 10.04, reading: rightAgain))).change)
        #expect((turned.from, turned.to) == (.landscapeLeft, .landscapeRight))
    }

    @Test("samples decide the screen tilt too, through the mount matrix, once per change")
    func tilt() throws {
        let stage = DetectionStage(configuration: DetectorConfiguration())
        // A sensor mounted upside down in z: its raw +g in z is the display's −g, screen to the sky.
        let flipped = try MountMatrix(parsing: "1, 0, 0; 0, 1, 0; 0, 0, -1")
        _ = stage.observe(.available(SensorDescription(identifier: "a", name: "a", mountMatrix: flipped)))
        let tilts = stride(from: 0.0, to: 1, by: 0.04).compactMap { time in
            stage.observe(.sample(SensorSample(time: time, reading: Vector3(0, 0, 9.81)))).tilt
        }
        #expect(tilts == [.faceUp])
    }

    @Test("a frozen reading or axis makes the gravity learner forget what it measured; other faults do not")
    func frozenReadingForgetsTheScale() {
        let stage = DetectionStage(configuration: DetectorConfiguration())
        _ = stage.observe(.available(SensorDescription(identifier: "a", name: "a")))
        _ = hold(stage, Vector3(0, -15.7, 0), from: 0, seconds: 2)  // frozen at 1.6 g: learned as gravity
        #expect(abs(stage.gravityScaleFactor - 9.81 / 15.7) < 0.01)
        _ = stage.observe(.fault(SensorFault(kind: .readFailed, device: "a", detail: "EIO")))
        #expect(stage.gravityScaleFactor != 1, "a read error says nothing of the lengths read before")
        _ = stage.observe(.fault(SensorFault(kind: .stuck, device: "a", detail: "frozen")))
        #expect(stage.gravityScaleFactor == 1)
        _ = hold(stage, Vector3(0, -15.7, 0), from: 3, seconds: 2)
        _ = stage.observe(.fault(SensorFault(kind: .axisStuck, device: "a", detail: "z frozen")))
        #expect(stage.gravityScaleFactor == 1)
    }

    /// Feeds `seconds` at 25 Hz from `start` of a device turning in the screen plane at 1 rad/s (the
    /// pace stays fast), the gyroscope's rate given by `rate(time)` when present, or held still in
    /// portrait when `still`; returns the read pace's fast interval after it.
    private func feed(
        _ stage: DetectionStage, _ readPace: ReadPace, from start: Double, seconds: Double, still: Bool = false,
        rate: ((Double) -> Double)?
    ) -> Double? {
        for time in stride(from: start, to: start + seconds, by: 0.04) {
            let angle = still ? 0 : time
            let reading = Vector3(-9.81 * sin(angle), -9.81 * cos(angle), 0)
            _ = stage.observe(
                .sample(
                    SensorSample(
                        time: time, reading: reading,
                        rotationRate: rate.map {
                            Vector3(0, 0, $0(time))
                        })))
        }
        return readPace.fastInterval
    }

    @Test(
        """
        while the device moves, a working gyroscope (in the sensor's device or its own) asks for reads at the \
        gyroscope rate (50 Hz); at rest, without one, or once it is judged failed, the sampling rate; a faster motion \
        subscriber's rate wins
        """)
    func gyroscopeAsksForItsRate() {
        let turning: (Double) -> Double = { 1 + 0.01 * sin(37 * $0) }
        // An accelerometer alone: the sampling rate.
        let alone = ReadPace()
        let plain = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: alone)
        _ = plain.observe(.available(SensorDescription(identifier: "a", name: "a")))
        #expect(feed(plain, alone, from: 0, seconds: 2, rate: nil) == nil)
        // A gyroscope of its own: 50 Hz while the device moves, from when it is found until it is gone.
        let ownPace = ReadPace()
        let withOwn = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: ownPace,
            gyroscopeSwitch: { _ in })
        _ = withOwn.observe(.available(SensorDescription(identifier: "a", name: "a")))
        #expect(feed(withOwn, ownPace, from: 0, seconds: 1, rate: nil) == nil)
        withOwn.observe(GyroscopeEvent.available(name: "gyro_3d", mountMatrix: .identity))
        #expect(ownPace.fastInterval == 1.0 / 50)
        withOwn.observe(GyroscopeEvent.unavailable(reason: "removed"))
        #expect(ownPace.fastInterval == nil)
        // An IMU: 50 Hz while it turns, the sampling rate at rest, 50 Hz again on motion.
        let readPace = ReadPace()
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: readPace)
        var imu = SensorDescription(identifier: "imu", name: "imu")
        imu.readsGyroscope = true
        _ = stage.observe(.available(imu))
        #expect(feed(stage, readPace, from: 0, seconds: 2, rate: turning) == 1.0 / 50)
        #expect(feed(stage, readPace, from: 2, seconds: 2, still: true, rate: nil) == nil, "at rest")
        #expect(feed(stage, readPace, from: 4, seconds: 1, rate: turning) == 1.0 / 50)
        // A motion subscriber: the faster of the two.
        stage.streamMotion(hertz: 100)
        #expect(readPace.fastInterval == 1.0 / 100)
        stage.streamMotion(hertz: 30)
        #expect(readPace.fastInterval == 1.0 / 50)
        stage.streamMotion(hertz: nil)
        #expect(readPace.fastInterval == 1.0 / 50)
        // The sensor gone: nothing asked.
        _ = stage.observe(SensorEvent.unavailable(reason: "removed"))
        #expect(readPace.fastInterval == nil)
        // Back, its gyroscope frozen while the accelerometer turns: judged failed, read as without one.
        _ = stage.observe(.available(imu))
        #expect(feed(stage, readPace, from: 5, seconds: 2, rate: { _ in 0 }) == nil)
    }

    @Test("new detector parameters start detection afresh with the same matrix")
    func restart() {
        let stage = DetectionStage(configuration: DetectorConfiguration())
        let upright = Vector3(0, -9.81, 0)
        #expect(hold(stage, upright, from: 0).map(\.to) == [.portrait])
        stage.restart(configuration: DetectorConfiguration())
        #expect(hold(stage, upright, from: 1).map { "\($0.from)→\($0.to)" } == ["unknown→portrait"])
    }

    @Test(
        """
        a sensor with a motion interrupt rests on it: no reads but a check every 5 s, no silence, a turn after it \
        decided as ever; a failed interrupt rests on polling
        """
    )
    func motionInterrupt() throws {
        let readPace = ReadPace()
        readPace.restsOnMotionEvents = true  // as an acquisition that armed the interrupt says
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: readPace)
        let upright = Vector3(0, -9.81, 0)
        var time = 0.0
        var rested: DetectionStage.Detection?
        while rested == nil, time < 5 {
            let detection = stage.observe(.sample(SensorSample(time: time, reading: upright)))
            if detection.readRate == .motionEvents { rested = detection }
            time += 0.04
        }
        let rest = try #require(rested)
        #expect(readPace.interval == MotionEvents.checkInterval)
        #expect(stage.restsOnMotionEvents)
        #expect(
            rest.silenceDeadline.map { abs($0 - (time - 0.04 + 2 + MotionEvents.checkInterval)) < 1e-9 } == true,
            "the check read is due before any silence")
        #expect(stage.advance(to: time + 4) == nil)
        // 30 s later the interrupt fires: the turn is read at the fast rate and decided, with no unknown between.
        let turn = time + 30
        let changes = hold(stage, Vector3(9.81, 0, 0), from: turn)
        #expect(changes.map(\.to) == [.landscapeRight])
        #expect(try #require(changes.first).time - turn <= 0.121)
        #expect(readPace.interval == nil || readPace.interval == MotionEvents.checkInterval, "fast, or at rest again")
        // At rest again the interrupt fails: the next (check) reading rests on polling at the rest rate.
        _ = hold(stage, Vector3(9.81, 0, 0), from: turn + 1, seconds: 1)
        #expect(stage.restsOnMotionEvents)
        readPace.restsOnMotionEvents = false
        let after = stage.observe(.sample(SensorSample(time: turn + 7, reading: Vector3(9.81, 0, 0))))
        #expect(after.readRate == .rest(hertz: SamplingPace.Settings().restRate, held: false))
        #expect(after.change == nil)
        #expect(!stage.restsOnMotionEvents)
        #expect(readPace.interval == 1 / SamplingPace.Settings().restRate)
    }

    @Test(
        """
        a device that sways at rest (held in a hand) is polled at the held rate, and at the rest rate once it lies \
        still; on the motion interrupt, sway changes nothing
        """
    )
    func heldInAHand() {
        // Tilted 0.4° either side of 0.4° off upright at 12.5 Hz, then still at the middle.
        func reading(_ degrees: Double) -> Vector3 {
            let radians = degrees * .pi / 180
            return Vector3(0, -9.81 * cos(radians), -9.81 * sin(radians))
        }
        func rates(
            _ stage: DetectionStage, from start: Double, to end: Double, step: Double, swaying: Bool
        )
            -> [DetectionStage.ReadRate]
        {
            stride(from: start, to: end, by: step).enumerated().compactMap { index, time in
                let degrees = swaying ? (index % 2 == 0 ? 0 : 0.8) : 0.4
                return stage.observe(.sample(SensorSample(time: time, reading: reading(degrees)))).readRate
            }
        }
        let readPace = ReadPace()
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: readPace)
        #expect(rates(stage, from: 0, to: 1, step: 0.04, swaying: true) == [.rest(hertz: 4, held: true)])
        #expect(readPace.interval == 0.25)
        #expect(
            rates(stage, from: 1, to: 4, step: 0.25, swaying: false) == [.rest(hertz: 1.8, held: false)],
            "2 s without sway")
        #expect(readPace.interval == 1 / 1.8)

        let interrupt = ReadPace()
        interrupt.restsOnMotionEvents = true
        let onEvents = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: interrupt)
        #expect(rates(onEvents, from: 0, to: 1, step: 0.04, swaying: true) == [.motionEvents])
        #expect(rates(onEvents, from: 1, to: 4, step: 0.25, swaying: false) == [])
        #expect(interrupt.interval == MotionEvents.checkInterval)
    }

    @Test(
        """
        held fast (a convertible's hinge wants every reading), a resting device is read at the rate; a slow pace \
        turns fast at once; released, it rests again
        """
    )
    func holdFast() {
        let readPace = ReadPace()
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: readPace)
        let upright = Vector3(0, -9.81, 0)
        let rest = DetectionStage.ReadRate.rest(hertz: SamplingPace.Settings().restRate, held: false)
        func paces(from start: Double, seconds: Double = 2) -> [DetectionStage.ReadRate] {
            stride(from: start, to: start + seconds, by: 0.04).compactMap {
                stage.observe(.sample(SensorSample(time: $0, reading: upright))).readRate
            }
        }
        #expect(paces(from: 0) == [rest])
        #expect(readPace.interval == 1 / SamplingPace.Settings().restRate)
        #expect(stage.holdFast(true) == .sampling, "it was slow")
        #expect(readPace.interval == nil)
        #expect(paces(from: 2) == [], "no rest while held")
        #expect(stage.holdFast(true) == nil, "already held")
        stage.holdFast(false)
        #expect(paces(from: 4) == [rest])
        #expect(readPace.interval == 1 / SamplingPace.Settings().restRate)
    }

    /// A paced stage with a gyroscope of its own, and what its switch was told, in order.
    static func stageWithGyroscopeSwitch() -> (DetectionStage, ReadPace, NIOLockedValueBox<[Bool]>) {
        let readPace = ReadPace()
        let switched = NIOLockedValueBox<[Bool]>([])
        let stage = DetectionStage(
            configuration: DetectorConfiguration(), pace: SamplingPace.Settings(), readPace: readPace,
            gyroscopeSwitch: { on in switched.withLockedValue { $0.append(on) } })
        return (stage, readPace, switched)
    }

    @Test(
        """
        held fast for a hinge, the gyroscope (its own, or an IMU's channels) still runs only while the device \
        moves; a motion subscriber keeps it on at rest
        """
    )
    func holdFastLeavesTheGyroscopeToMotion() {
        let (stage, readPace, switched) = Self.stageWithGyroscopeSwitch()
        _ = stage.observe(.available(SensorDescription(identifier: "a", name: "a")))
        stage.samplingStarts()
        stage.holdFast(true)
        func feed(_ reading: Vector3, from start: Double, seconds: Double) {
            for time in stride(from: start, to: start + seconds, by: 0.04) {
                _ = stage.observe(.sample(SensorSample(time: time, reading: reading)))
            }
        }
        #expect(readPace.gyroscopeWanted, "fast at first: the device may move")
        feed(Vector3(0, -9.81, 0), from: 0, seconds: 2)
        #expect(readPace.interval == nil, "the hinge holds the sampling rate")
        #expect(!readPace.gyroscopeWanted, "at rest the gyroscope is off")
        #expect(switched.withLockedValue { $0 } == [true, false])
        feed(Vector3(9.81, 0, 0), from: 2, seconds: 0.2)
        #expect(readPace.gyroscopeWanted, "motion switches it on")
        feed(Vector3(9.81, 0, 0), from: 2.2, seconds: 2)
        #expect(!readPace.gyroscopeWanted)
        stage.streamMotion(hertz: 50)
        #expect(readPace.gyroscopeWanted, "a motion subscriber wants the rates at rest too")
        #expect(switched.withLockedValue { $0 } == [true, false, true, false, true])
    }

    @Test("a gyroscope of its own stays off beside an IMU's (the samples take the IMU's rates), and runs without one")
    func ownGyroscopeStaysOffBesideAnIMU() {
        let (stage, readPace, switched) = Self.stageWithGyroscopeSwitch()
        var imu = SensorDescription(identifier: "imu", name: "imu")
        imu.readsGyroscope = true
        _ = stage.observe(.available(imu))
        stage.samplingStarts()
        #expect(readPace.gyroscopeWanted, "the IMU's channels run")
        #expect(switched.withLockedValue { $0 }.isEmpty, "the one of its own does not")
        _ = stage.observe(.available(SensorDescription(identifier: "plain", name: "plain")))
        #expect(switched.withLockedValue { $0 } == [true], "an accelerometer alone takes the one of its own")
    }

    @Test(
        """
        the gyroscope follows the sensor: none without an accelerometer (lost, the one of its own goes off), and \
        on again when new detector parameters start the pace fast
        """
    )
    func gyroscopeFollowsTheSensor() {
        let (stage, readPace, switched) = Self.stageWithGyroscopeSwitch()
        stage.samplingStarts()
        #expect(switched.withLockedValue { $0 }.isEmpty, "no accelerometer yet")
        _ = stage.observe(.available(SensorDescription(identifier: "a", name: "a")))
        #expect(switched.withLockedValue { $0 } == [true])
        for time in stride(from: 0.0, to: 2, by: 0.04) {
            _ = stage.observe(.sample(SensorSample(time: time, reading: Vector3(0, -9.81, 0))))
        }
        #expect(!readPace.gyroscopeWanted && switched.withLockedValue { $0 } == [true, false], "at rest")
        stage.restart(configuration: DetectorConfiguration())
        #expect(readPace.gyroscopeWanted && switched.withLockedValue { $0 } == [true, false, true], "fast again")
        _ = stage.observe(SensorEvent.unavailable(reason: "removed"))
        #expect(!readPace.gyroscopeWanted && switched.withLockedValue { $0 } == [true, false, true, false])
    }
    @Test(
        """
        a gyroscope of its own that reports slower than the sampling rate (an HID hub's 10 Hz) lends its rate to every \
        sample between two of its reports, not only to those within 80 ms of one
        """
    )
    func slowGyroscopeRatesReachEverySample() {
        let (stage, _, _) = Self.stageWithGyroscopeSwitch()
        _ = stage.observe(.available(SensorDescription(identifier: "accel_3d", name: "accel_3d")))
        stage.samplingStarts()
        _ = stage.streamMotion(hertz: 10)
        stage.observe(GyroscopeEvent.available(name: "gyro_3d", mountMatrix: .identity))
        var withoutRate: [Double] = []
        for step in 0..<20 {
            let report = Double(step) / 10
            stage.observe(GyroscopeEvent.rate(time: report, rate: Vector3(0, 0, 1.047)))
            // The accelerometer's report 90 ms after the gyroscope's, before its next.
            let time = report + 0.09
            let motion = stage.observe(.sample(SensorSample(time: time, reading: Vector3(0, -9.81, 0)))).motion
            if step > 0, motion?.rotationRate == nil { withoutRate.append(time) }
        }
        #expect(withoutRate.isEmpty, "samples that went without the gyroscope's rate: \(withoutRate)")
    }
}
