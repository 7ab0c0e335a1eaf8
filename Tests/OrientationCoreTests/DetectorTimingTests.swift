import Testing
@testable import OrientationCore

@Suite("Detector: settle, gates, gaps and silence")
struct DetectorTimingTests {
    // MARK: settle

    @Test("a single glitch sample changes nothing")
    func singleGlitch() {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.feed(Pose.landscapeLeft.reading())
        simulator.hold(.portrait, for: 2)
        simulator.feed(Vector3(20774, 27203, 0))  // hadess/iio-sensor-proxy#220's garbage scan, unscaled
        simulator.hold(.portrait, for: 2)
        #expect(simulator.reported == [.portrait])
        #expect(simulator.detector.droppedSamples == 1)
    }

    @Test("a still pose shorter than the rest window changes nothing; one that lasts does")
    func restWindowEdge() {
        // At 25 Hz the default window (80 ms, ≥ 3 samples) needs 3 samples.
        var brief = PoseSimulator()
        brief.hold(.portrait, for: 1)
        for _ in 0..<2 { brief.feed(Pose.landscapeLeft.reading()) }
        brief.hold(.portrait, for: 2)
        #expect(brief.reported == [.portrait])

        var lasting = PoseSimulator()
        lasting.hold(.portrait, for: 1)
        for _ in 0..<3 { lasting.feed(Pose.landscapeLeft.reading()) }
        lasting.hold(.portrait, for: 2)
        #expect(lasting.reported == [.portrait, .landscapeLeft, .portrait])
    }

    /// Held in portrait, then stepped to `pose` (`orientation`) at `rate`, each for `seconds`: the
    /// time from the step to the change.
    private static func stepDelay(
        to pose: Pose = .landscapeRight, _ orientation: DeviceOrientation = .landscapeRight, rate: Double = 25,
        _ configuration: DetectorConfiguration = DetectorConfiguration(), holding seconds: Double = 1
    ) throws -> Double {
        var simulator = PoseSimulator(configuration: configuration, rate: rate)
        simulator.hold(.portrait, for: seconds)
        let stepTime = simulator.time
        simulator.hold(pose, for: seconds)
        let change = try #require(simulator.changes.last)
        #expect(change.to == orientation)
        return change.time - stepTime
    }

    @Test("a step is reported within the rest window, not on its first sample")
    func stepLatency() throws {
        let delay = try Self.stepDelay()
        #expect(delay >= DetectorConfiguration().rest.window - 1e-9)
        #expect(delay <= 0.121)
    }

    @Test(
        """
        a step is reported on the same sample whether the sensor's clock runs 0.7 % fast or slow: the rest \
        window ends at the sample within a quarter period of its end
        """,
        arguments: [24.0, 25.0, 25.175, 50.35])
    func stepLatencyIgnoresClockError(rate: Double) throws {
        let delay = try Self.stepDelay(rate: rate)
        // Two periods (the 0.08 s window at 25 Hz) or four (at 50 Hz), however the clock is off;
        // compared exactly, 25.175 Hz (0.0794 s for two periods) took a third.
        let periods = (delay * rate).rounded()
        #expect(periods == (rate > 40 ? 4 : 2), "decided \(periods) periods after the step at \(rate) Hz")
    }

    @Test("a face state needs the longer face rest window")
    func faceRestWindow() throws {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        let stepTime = simulator.time
        simulator.hold(.faceUp, for: 1)
        let change = try #require(simulator.changes.last)
        #expect(change.to == .faceUp)
        #expect(change.time - stepTime >= DetectorConfiguration().face.restWindow - 1e-9)
    }

    /// Laid down at 50 Hz: turned from portrait over 0.6 s to `pose` and held there; the landing's
    /// impact makes the first sample of the hold `jolt` times gravity's length, tilted `turned`
    /// degrees more. Returns the time from that sample to the change to `pose`'s orientation.
    static func landing(on pose: Pose, jolt: Double, turned: Double = 0) throws -> Double {
        var simulator = PoseSimulator(rate: 50)
        simulator.hold(Pose(angle: 0, tilt: 20), for: 1)
        simulator.turn(from: Pose(angle: 0, tilt: 20), to: pose, over: 0.6)
        let landed = simulator.time
        simulator.feed(jolt * Pose(angle: pose.angle, tilt: pose.tilt + turned).reading())
        simulator.hold(pose, for: 1)
        let change = try #require(simulator.changes.last)
        #expect(simulator.reported.count == 2, "\(simulator.reported)")
        return change.time - landed
    }

    @Test("laid face down, a landing's jolt along gravity (1.36 g for one sample) does not restart the rest")
    func landingJoltOnFace() throws {
        let faceRestWindow = DetectorConfiguration().face.restWindow
        #expect(try Self.landing(on: Pose(angle: 0, tilt: -88), jolt: 1.36) < faceRestWindow)
        // The same jolt turned 10° is a motion: the rest starts after it.
        #expect(try Self.landing(on: Pose(angle: 0, tilt: -88), jolt: 1.36, turned: 10) >= faceRestWindow)
        // Longer than acceleration-tolerance (4 m/s²) off gravity is no landing's jolt either.
        #expect(try Self.landing(on: Pose(angle: 0, tilt: -88), jolt: 1.5) >= faceRestWindow)
    }

    @Test("an upright pose is not excused a jolt: the rest window starts after it")
    func joltOnUprightPose() throws {
        #expect(try Self.landing(on: Pose(angle: -90, tilt: 10), jolt: 1.36) >= DetectorConfiguration().rest.window)
    }

    @Test("the slow path settles while the raw stream never rests (walking-like bumps)")
    func slowPathUnderBumps() {
        var configuration = DetectorConfiguration()
        configuration.rest.magnitudeTolerance = 0.01  // keep the fast path out of it
        var simulator = PoseSimulator(configuration: configuration)
        simulator.tremor = 0.6
        simulator.hold(Pose(angle: 0, tilt: 30), for: 2)
        simulator.turn(from: Pose(angle: 0, tilt: 30), to: Pose(angle: -90, tilt: 30), over: 0.5)
        simulator.hold(Pose(angle: -90, tilt: 30), for: 2)
        #expect(simulator.reported == [.portrait, .landscapeRight])
    }

    @Test("the slow path waits for the settle time")
    func slowPathSettle() throws {
        var configuration = DetectorConfiguration()
        configuration.rest.magnitudeTolerance = 0.01  // slow path only
        configuration.movingDwell.time = 10  // (the dwell rule in motion would take the filtered pose first)
        configuration.settle.time = 1.0
        let delay = try Self.stepDelay(to: .landscapeLeft, .landscapeLeft, configuration, holding: 3)
        // Settling starts once the filter has turned past the hysteresis line and stopped drifting
        // (≈ 3 τ for a 90° step), then lasts the settle time.
        #expect(delay >= 1.0 + 0.25)
        #expect(delay < 1.0 + 0.8)
    }

    // MARK: gates

    @Test("a 2 g shake in portrait changes nothing")
    func shake() {
        var simulator = PoseSimulator(rate: 100)
        simulator.hold(.portrait, for: 1)
        let portrait = Pose.portrait.reading()
        for step in 0..<200 {  // 2 s at 4 Hz, ±2 g sideways
            let phase = Double(step) / 100 * 4 * 2 * Double.pi
            simulator.feed(portrait + Vector3(19.6 * phase.sinValue, 0, 0))
        }
        simulator.hold(.portrait, for: 1)
        #expect(simulator.reported == [.portrait])
    }

    @Test("free fall changes nothing and the pose after landing is found")
    func freeFall() {
        var simulator = PoseSimulator(rate: 100)
        simulator.hold(.portrait, for: 1)
        for _ in 0..<30 { simulator.feed(Vector3(0.1, -0.2, 0.05)) }
        #expect(simulator.reported == [.portrait])
        simulator.hold(.faceDown, for: 1)
        #expect(simulator.reported == [.portrait, .faceDown])
    }

    @Test("non-finite, zero and huge samples are dropped")
    func droppedSamples() {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        for bad in [Vector3(.nan, 0, 0), Vector3(0, .infinity, 0), Vector3(0, 0, 0), Vector3(0, -60, 0)] {
            let change = simulator.detector.process(AccelerationSample(time: simulator.time, vector: bad))
            #expect(change == nil)
            simulator.time += 0.04
        }
        #expect(simulator.detector.droppedSamples == 4)
        #expect(simulator.orientation == .portrait)
    }

    // MARK: gaps and silence

    /// Started in a car at 50 Hz, landscape: the first reading is a bump's `first` times gravity's
    /// length, then `sustained` (0: none) more like it, then the road's vibration (each sample's
    /// length 0.8 or 1.2 times gravity, alternating: no rest, no start-up pair). Returns the first
    /// decision's time.
    private static func startInACar(first: Double, sustained: Int = 0) throws -> Double {
        var simulator = PoseSimulator(rate: 50)
        let landscape = Pose.landscapeLeft.reading()
        for _ in 0...sustained { simulator.feed(first * landscape) }
        for index in 0..<50 { simulator.feed((index % 2 == 0 ? 0.8 : 1.2) * landscape) }
        let change = try #require(simulator.changes.first)
        #expect(change.to == .landscapeLeft)
        return change.time
    }

    @Test(
        """
        a bump on the very first sample does not hold the first decision: a filter primed on one reading \
        holds that reading, not a sustained acceleration; a sustained one still does
        """)
    func bumpOnTheFirstSampleDoesNotHoldOff() throws {
        // 0.57 g: 4.2 m/s² short of gravity, past acceleration-tolerance (4 m/s²).
        #expect(try Self.startInACar(first: 0.57) < 0.2)
        // Two such samples: the filtered length is still 4 m/s² short after the second.
        #expect(try Self.startInACar(first: 0.3, sustained: 1) >= DetectorConfiguration().estimate.accelerationHoldoff)
    }

    @Test("unknown until the first decision")
    func unknownFirst() {
        var detector = OrientationDetector()
        #expect(detector.orientation == .unknown)
        let change = detector.process(AccelerationSample(time: 0, vector: Pose.portrait.reading()))
        #expect(change == nil)
        #expect(detector.orientation == .unknown)
    }

    @Test("a gap over 1 s re-primes the filter; the orientation holds across it")
    func gapReprimes() {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.time += 1.5
        simulator.hold(.landscapeLeft, for: 1)
        #expect(simulator.detector.reprimeCount == 1)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
        #expect(simulator.changes[1].time > 2.5)  // decided on fresh samples, not at the first one

        var short = PoseSimulator()
        short.hold(.portrait, for: 1)
        short.time += 0.9
        short.hold(.portrait, for: 1)
        #expect(short.detector.reprimeCount == 0)
    }

    @Test(
        """
        a reading held by a motion interrupt: the next sample after a long rest is no gap or silence, and a turn \
        then is as quick as ever
        """
    )
    func heldReading() throws {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        let lastSample = simulator.time - 1 / simulator.rate
        simulator.time += 30  // 30 s on the interrupt without a read
        simulator.detector.hold(until: simulator.time - 1 / simulator.rate)
        #expect(simulator.detector.silenceDeadline == simulator.time - 1 / simulator.rate + 2)
        #expect(simulator.detector.advance(to: lastSample + 5) == nil, "no silence within the hold")
        let turn = simulator.time
        simulator.hold(.landscapeLeft, for: 1)
        #expect(simulator.detector.reprimeCount == 0)
        #expect(simulator.reported == [.portrait, .landscapeLeft])
        let change = try #require(simulator.changes.last)
        #expect(change.time - turn <= 0.121, "decided within the rest window, as without the rest")

        var unheld = PoseSimulator()  // the same 30 s without the hold: a silence, then a fresh start
        unheld.hold(.portrait, for: 1)
        unheld.time += 30
        unheld.hold(.landscapeLeft, for: 1)
        #expect(unheld.reported == [.portrait, .unknown, .landscapeLeft])

        var unprimed = OrientationDetector()  // nothing to hold before the first sample
        unprimed.hold(until: 10)
        #expect(unprimed.silenceDeadline == nil)
    }

    @Test("after a gap one stale sample is outvoted by the fresh ones")
    func staleSampleAfterGap() {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.time += 1.5
        simulator.feed(Pose.landscapeLeft.reading())  // stale, from before a suspend
        simulator.hold(.portrait, for: 1)
        #expect(simulator.reported == [.portrait])
    }

    @Test("a 1 Hz sensor (every interval a gap) still decides, on two agreeing samples")
    func oneHertz() {
        var simulator = PoseSimulator(rate: 1 / 1.2)
        simulator.hold(.portrait, for: 4)
        simulator.hold(.landscapeRight, for: 4)
        #expect(simulator.reported == [.portrait, .landscapeRight])
    }

    @Test("backwards and duplicate timestamps neither crash nor change anything")
    func badTimestamps() {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.time -= 5
        simulator.hold(.portrait, for: 1)
        #expect(simulator.detector.reprimeCount == 1)
        let time = simulator.time
        for _ in 0..<10 {
            _ = simulator.detector.process(AccelerationSample(time: time, vector: Pose.landscapeLeft.reading()))
        }
        #expect(simulator.reported == [.portrait])
    }

    @Test("silence for 2 s makes the orientation unknown, dated at the deadline")
    func silence() throws {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        let lastSample = simulator.time - 1 / simulator.rate
        let early = simulator.detector.advance(to: lastSample + 1.99)
        #expect(early == nil)
        let change = simulator.detector.advance(to: lastSample + 3)
        #expect(change?.to == .unknown)
        #expect(change?.from == .portrait)
        #expect(abs((change?.time ?? 0) - (lastSample + 2)) < 1e-9)
        let again = simulator.detector.advance(to: lastSample + 4)
        #expect(again == nil)  // reported once
        #expect(simulator.detector.filteredGravity == nil)
    }

    @Test("a sample after a long silence reports unknown first, then decides afresh")
    func sampleAfterSilence() throws {
        var simulator = PoseSimulator()
        simulator.hold(.portrait, for: 1)
        simulator.time += 3
        simulator.hold(.portrait, for: 1)
        #expect(simulator.reported == [.portrait, .unknown, .portrait])

        // Even when a single sample could decide (no settle, no rest window), the unknown comes first.
        var configuration = DetectorConfiguration()
        configuration.settle.time = 0
        var eager = PoseSimulator(configuration: configuration)
        eager.hold(.portrait, for: 1)
        eager.time += 3
        eager.hold(.landscapeLeft, for: 1)
        #expect(eager.reported == [.portrait, .unknown, .landscapeLeft])
    }
}

extension Double {
    var sinValue: Double {
        // A 7th-order Taylor series around the nearest multiple of 2π is plenty for a test signal.
        var x = self.truncatingRemainder(dividingBy: 2 * .pi)
        if x > .pi { x -= 2 * .pi }
        if x < -.pi { x += 2 * .pi }
        let x2 = x * x
        return x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42)))
    }
}
