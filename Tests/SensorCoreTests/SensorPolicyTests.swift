import Testing
import OrientationCore
@testable import SensorCore

private func candidate(
    _ number: Int, _ name: String = "bmi160", label: String? = nil, udevLocation: String? = nil,
    sysfsLocation: String? = nil
) -> AccelerometerCandidate {
    AccelerometerCandidate(
        deviceID: "iio:device\(number)", name: name, label: label, udevLocation: udevLocation,
        sysfsLocation: sysfsLocation)
}

@Suite("Sensor selection")
struct AccelerometerSelectionTests {
    @Test("auto skips a base sensor and takes the display one")
    func displayOverBase() {
        let base = candidate(0, "lis3lv02d", udevLocation: "base")
        let display = candidate(1, "bmi160", udevLocation: "display")
        let result = AccelerometerSelection.choose(from: [base, display], for: .auto)
        #expect(result.chosen == display)
        #expect(result.skipped.count == 1)
        #expect(result.skipped[0].contains("iio:device0"))
        #expect(result.skipped[0].contains("keyboard base"))
        #expect(result.reason.contains("iio:device1"))
    }

    @Test("a label of accel-base is skipped like ACCEL_LOCATION=base")
    func baseLabel() {
        let result = AccelerometerSelection.choose(
            from: [candidate(0, label: "accel-base"), candidate(4, label: "accel-display")], for: .auto)
        #expect(result.chosen?.deviceID == "iio:device4")
    }

    @Test("only base sensors: auto chooses none, and says why")
    func onlyBase() {
        let result = AccelerometerSelection.choose(from: [candidate(0, udevLocation: "base")], for: .auto)
        #expect(result.chosen == nil)
        #expect(result.reason == "no accelerometer matches auto")
        #expect(AccelerometerSelection.choose(from: [], for: .auto).reason == "no accelerometer found (IIO or evdev)")
    }

    @Test("the base role takes the base sensor (never a display one), or the device named")
    func baseRole() {
        let base = candidate(3, "lis3lv02d", label: "accel-base")
        let display = candidate(1, "bmi160", udevLocation: "display")
        #expect(AccelerometerSelection.choose(from: [display, base], for: .auto, role: .base).chosen == base)
        let none = AccelerometerSelection.choose(from: [display, candidate(2)], for: .auto, role: .base)
        #expect(none.chosen == nil && none.reason.hasPrefix("no accelerometer in a keyboard base"))
        #expect(
            AccelerometerSelection.choose(from: [display, base], for: .iioName("bmi160"), role: .base).chosen == display
        )
        #expect(
            AccelerometerSelection.choose(from: [display, base], for: .iioDevice(7), role: .base).reason
                == "no accelerometer matches iio:device7")
    }

    @Test("base-sensor auto sits beside the display sensor: local, the same iiod, the same trace; none for stdin")
    func baseChoice() throws {
        func base(_ display: String, _ choice: String = "auto") throws -> SensorConfiguration? {
            try BaseSensorChoice(parsing: choice).configuration(
                besides: SensorConfiguration(specification: SensorSpecification(parsing: display)), mountMatrix: nil)
        }
        #expect(try base("iio:bmi160")?.specification == .auto)
        #expect(try base("iio:bmi160")?.role == .base)
        #expect(try base("ip:yoga")?.specification == .network(host: "yoga"))
        #expect(try base("replay:t.csv")?.specification == .replay(path: "t.csv", speed: 1))
        #expect(try base("stdin") == nil)
        #expect(try base("auto", "none") == nil)
        #expect(try base("auto", "iio:device4")?.specification == .iioDevice(4))
        #expect(throws: SensorSpecificationError.self) { try BaseSensorChoice(parsing: "keyboard") }
    }

    @Test("display (stated) before display (assumed) before lid before unknown, then the lowest number")
    func ranking() {
        let stated = candidate(7, udevLocation: "display")
        let assumed = candidate(1)
        let lid = candidate(0, udevLocation: "lid")
        let odd = candidate(2, udevLocation: "elsewhere")
        #expect(AccelerometerSelection.choose(from: [odd, lid, assumed, stated], for: .auto).chosen == stated)
        #expect(AccelerometerSelection.choose(from: [odd, lid, assumed], for: .auto).chosen == assumed)
        #expect(AccelerometerSelection.choose(from: [odd, lid], for: .auto).chosen == lid)
        // Equal rank: deterministic by number, whatever the input order.
        let twins = [candidate(9), candidate(3), candidate(5)]
        #expect(AccelerometerSelection.choose(from: twins, for: .auto).chosen?.deviceID == "iio:device3")
        #expect(AccelerometerSelection.choose(from: twins.reversed(), for: .auto).chosen?.deviceID == "iio:device3")
    }

    @Test("iio:NAME matches the driver name or the label; iio:deviceN the number; an explicit base is allowed")
    func explicit() {
        let sensors = [candidate(0, "lis3lv02d", udevLocation: "base"), candidate(1, "bmi160", label: "accel-display")]
        #expect(AccelerometerSelection.choose(from: sensors, for: .iioName("bmi160")).chosen?.deviceID == "iio:device1")
        #expect(
            AccelerometerSelection.choose(from: sensors, for: .iioName("accel-display")).chosen?.deviceID
                == "iio:device1")
        let base = AccelerometerSelection.choose(from: sensors, for: .iioDevice(0))
        #expect(base.chosen?.deviceID == "iio:device0")
        #expect(base.reason.contains("keyboard base"))
        #expect(AccelerometerSelection.choose(from: sensors, for: .iioDevice(5)).chosen == nil)
        #expect(
            AccelerometerSelection.choose(from: sensors, for: .iioName("mma8452")).reason
                == "no accelerometer matches iio:mma8452")
    }

    @Test("location precedence: udev ACCEL_LOCATION, label, location attribute, default display")
    func location() {
        #expect(
            candidate(0, label: "accel-base", udevLocation: "display").location == (.display, "udev ACCEL_LOCATION"))
        #expect(candidate(0, label: "accel-base", sysfsLocation: "lid").location == (.base, "sysfs label"))
        #expect(candidate(0, label: "accel-camera", sysfsLocation: "lid").location == (.lid, "sysfs location"))
        #expect(candidate(0).location == (.display, "default"))
    }
}

@Suite("Mount matrix precedence")
struct MountMatrixPrecedenceTests {
    let rotated = "0, 1, 0; -1, 0, 0; 0, 0, 1"
    let flipped = "-1, 0, 0; 0, -1, 0; 0, 0, 1"
    let mirrored = "1, 0, 0; 0, -1, 0; 0, 0, -1"

    func sensor(udev: String? = nil, sysfs: [(MountMatrixOrigin, String)] = []) -> AccelerometerCandidate {
        AccelerometerCandidate(
            deviceID: "iio:device0", name: "bmi160", udevMountMatrix: udev,
            sysfsMountMatrices: sysfs.map { .init(origin: $0.0, text: $0.1) })
    }

    @Test("configured, then udev, then mount_matrix, in_accel_mount_matrix, in_mount_matrix, then identity")
    func order() throws {
        let all = sensor(
            udev: rotated,
            sysfs: [(.sysfsMountMatrix, flipped), (.sysfsAccelMountMatrix, mirrored), (.sysfsInMountMatrix, rotated)])
        let configured = try MountMatrix(parsing: mirrored)
        #expect(all.mountMatrix(configured: configured).origin == .configured)
        #expect(all.mountMatrix(configured: nil) == (try MountMatrix(parsing: rotated), .udev, []))
        #expect(
            sensor(sysfs: [(.sysfsMountMatrix, flipped), (.sysfsAccelMountMatrix, mirrored)]).mountMatrix(
                configured: nil
            ).origin == .sysfsMountMatrix)
        #expect(
            sensor(sysfs: [(.sysfsAccelMountMatrix, mirrored), (.sysfsInMountMatrix, rotated)]).mountMatrix(
                configured: nil
            ).origin == .sysfsAccelMountMatrix)
        #expect(
            sensor(sysfs: [(.sysfsInMountMatrix, rotated)]).mountMatrix(configured: nil).origin == .sysfsInMountMatrix)
        #expect(sensor().mountMatrix(configured: nil) == (.identity, .identity, []))
    }

    @Test("a malformed matrix is reported with device and text, and the next source is used")
    func malformed() throws {
        let result = sensor(
            udev: "1, 0; 0, 1",
            sysfs: [(.sysfsMountMatrix, "0, 0, 0; 0, 1, 0; 0, 0, 1"), (.sysfsAccelMountMatrix, flipped)]
        )
        .mountMatrix(configured: nil)
        #expect(result.origin == .sysfsAccelMountMatrix)
        #expect(result.matrix == (try MountMatrix(parsing: flipped)))
        #expect(result.problems.count == 2)
        #expect(result.problems[0].hasPrefix("iio:device0: udev ACCEL_MOUNT_MATRIX ignored"))
        #expect(result.problems[0].contains("\"1, 0; 0, 1\""))
        #expect(result.problems[1].contains("all zeros"))
    }
}

@Suite("Sampling frequency, faults, stuck sensors")
struct SamplingAndFaultTests {
    @Test(
        "the nearest offered rate",
        arguments: [
            ("12.5 25 50 100", 25.0, 25.0 as Double?), ("12.5 25 50 100", 30, 25), ("12.5 25 50 100", 40, 50),
            ("0 1.5625 3.125 6.25 12.5 25 50", 0.1, 1.5625), ("1 10 100", 1000, 100),
            ("[1 1 200]", 25, 25), ("[0 5 200]", 1, 5), ("[0.5 0.5 2]", 25, 2), ("[10 10 5]", 25, nil), ("", 25, nil),
            ("fast", 25, nil),
        ])
    func nearest(available: String, target: Double, expected: Double?) {
        #expect(SamplingFrequencyChoice.nearest(to: target, available: available) == expected)
    }

    @Test("rates are written in their shortest form")
    func text() {
        #expect(SamplingFrequencyChoice.text(25) == "25")
        #expect(SamplingFrequencyChoice.text(12.5) == "12.5")
    }

    @Test("a fault is reported once per episode, recovery only after a report")
    func episodes() {
        var tracker = FaultTracker()
        var answers: [Bool] = []
        answers.append(tracker.fault(.readFailed))
        answers.append(tracker.fault(.readFailed))
        answers.append(tracker.fault(.badValue))  // kinds are independent
        answers.append(tracker.isFaulty(.readFailed))
        answers.append(tracker.success(.readFailed))
        answers.append(tracker.success(.readFailed))
        answers.append(tracker.isFaulty(.readFailed))
        #expect(answers == [true, false, true, true, true, false, false])
    }

    @Test("every episode is reported; the log hears of a flapping fault at most every minimum interval")
    func rateLimit() {
        var tracker = FaultTracker()
        var log = FaultLogLimiter()
        var episodes: [Bool] = []
        var logged: [Bool] = []
        for (start, end) in [(0.0, 0.5), (1.0, 1.5), (FaultLogLimiter.minimumInterval + 0.1, 11.0)] {
            let started = tracker.fault(.readFailed)
            episodes.append(started)
            if started { logged.append(log.logFault(.readFailed, at: start)) }
            let repeated = tracker.fault(.readFailed)  // the same episode
            episodes.append(repeated)
            let ended = tracker.success(.readFailed)
            episodes.append(ended)
            if ended { logged.append(log.logRecovery(.readFailed)) }
            _ = end
        }
        #expect(episodes == [true, false, true, true, false, true, true, false, true])
        // Logged: the first episode and its end; the second (too soon) neither; the third both.
        #expect(logged == [true, true, false, false, true, true])
    }
}
