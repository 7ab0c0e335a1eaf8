import OrientationCore
import SensorCore
import SensorSimulation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The frozen-reading rule (docs/sensors.md, "Faults only on evidence"): it fires on a frozen axis or
/// reading whose length at rest contradicts gravity, and never on a working sensor.
@Suite("Frozen readings: evidence, not constancy")
struct FrozenReadingDetectorTests {
    static let g = standardGravity

    /// A gravity-pointing reading for a device whose screen's up direction is `angle` degrees from
    /// portrait and which leans back `tilt` degrees.
    static func gravity(angle: Double, tilt: Double, length: Double = g) -> Vector3 {
        let a = angle * .pi / 180, t = tilt * .pi / 180
        return Vector3(-length * sin(a) * cos(t), -length * cos(a) * cos(t), -length * sin(t))
    }

    /// Feeds readings at 25 Hz from `start` for `seconds`; returns every change and the time of each.
    static func play(
        _ detector: inout FrozenReadingDetector, from start: Double, seconds: Double,
        reading: (Double) -> (raw: Vector3, reading: Vector3)
    ) -> [(Double, FrozenReadingDetector.Change)] {
        var changes: [(Double, FrozenReadingDetector.Change)] = []
        for step in 0..<Int(seconds * 25) {
            let time = start + Double(step) / 25
            let (raw, value) = reading(time)
            changes += detector.observe(raw: raw, reading: value, at: time).map { (time, $0) }
        }
        return changes
    }

    @Test("a working sensor turned in any plane, at 6 to 16 bits, through an HID hub or not, never builds evidence")
    func workingSensorsInAnyPlane() {
        var random = SimulationRandom(seed: 36)
        var fired: [String] = []
        for trial in 0..<300 {
            let bits = 6 + Int(random.next() % 11)
            var part = SimulatedAccelerometer.quantised(
                bits: bits, rangeInG: bits == 6 ? 1.5 : 2, noiseInG: random.uniform(0, 0.01))
            if bits >= 12, random.unit() < 0.5 { part.changeSensitivity = random.uniform(0.005, 0.05) * Self.g }
            if random.unit() < 0.3 { part.exactAxis = Int(random.next() % 3) }
            part.calibrate(gainError: 0.02, offsetInG: 0.03, random: &random)
            // Turned about an arbitrary axis: gravity's component along it stays constant (in the
            // screen's plane, a kickstand, or any plane at all).
            let axis = Self.unitVector(&random)
            let start = Self.unitVector(&random)
            var detector = FrozenReadingDetector()
            var time = 0.0
            var angle = 0.0
            for _ in 0..<40 {
                let target = random.uniform(-180, 180)
                let rest = random.uniform(1, 6)
                // A steady acceleration during some rests: a car's 0.3 g, across gravity.
                let push = random.unit() < 0.2 ? random.uniform(0, 0.3) * Self.g : 0
                let turn = 0.5
                for step in 0..<Int((turn + rest) * 25) {
                    let t = Double(step) / 25
                    let progress = min(t / turn, 1)
                    let current = angle + (target - angle) * progress * progress * (3 - 2 * progress)
                    let down = Self.rotate(start, about: axis, degrees: current)
                    let across = axis.cross(down)
                    let sideways = across.magnitude > 0.1 ? across.normalised : .zero
                    let truth = Self.g * down + (progress >= 1 ? push : 0) * sideways
                    let raw = part.measure(truth, random: &random)
                    for change in detector.observe(raw: raw, reading: part.countStep * raw, at: time) {
                        fired.append(
                            """
                            trial \(trial) (\(bits) bits, HID \
                            \(part.changeSensitivity.map { "\($0 / Self.g) g" } ?? "no")) at \(time) s: \(change)
                            """
                        )
                    }
                    time += 0.04
                }
                angle = target
            }
        }
        #expect(fired.isEmpty, "\(fired.prefix(3))")
    }

    @Test("a z axis frozen at 0 is declared once the device lies back for 5 s, and thaws when z moves")
    func frozenAxisCaught() {
        var detector = FrozenReadingDetector()
        let step = 0.001 * Self.g  // 1 mg per count
        func counts(_ vector: Vector3) -> Vector3 {
            Vector3((vector.x / step).rounded(), (vector.y / step).rounded(), (vector.z / step).rounded())
        }
        // Upright: z truly 0. Then laid flat while z stays 0: the reading shrinks to nothing.
        var changes = Self.play(&detector, from: 0, seconds: 3) { _ in
            let raw = counts(Self.gravity(angle: 0, tilt: 0))
            return (raw, step * raw)
        }
        changes += Self.play(&detector, from: 3, seconds: 8) { time in
            let tilt = min((time - 3) / 1, 1) * 60  // lies back 60°: z stays 0 instead of −0.87 g
            var raw = counts(Self.gravity(angle: 0, tilt: tilt))
            raw.z = 0
            let noise = (time * 25).rounded().truncatingRemainder(dividingBy: 2)  // x's and y's noise: only z holds
            raw.x += noise
            raw.y += noise
            return (raw, step * raw)
        }
        #expect(changes.count == 1)
        guard case (let time, .frozen(.axisStuck, let detail))? = changes.first else {
            Issue.record("no axis-stuck: \(changes)")
            return
        }
        #expect(time >= 4 + 5 - 0.05 && time <= 4 + 5 + 1.1, "five rest seconds after the device stopped at 4 s")
        #expect(
            detail.hasPrefix(
                "the z axis has read 0.0 since before a rest that read 9.81 long; at rest now the reading is 4.9"))
        #expect(detector.isAxisFrozen)
        // z moves again: the evidence is gone.
        let thawed = detector.observe(raw: Vector3(0, -500, -860), reading: step * Vector3(0, -500, -860), at: 11.5)
        #expect(thawed == [.thawed(.axisStuck)])
        #expect(!detector.isAxisFrozen)
    }

    @Test("a z axis frozen flat reads too long when the device stands up: declared")
    func frozenAxisTooLong() {
        var detector = FrozenReadingDetector()
        var changes = Self.play(&detector, from: 0, seconds: 3) { time in
            let flat =
                Self.gravity(angle: 0, tilt: 90) + Vector3(0.01 * (time * 25).truncatingRemainder(dividingBy: 3), 0, 0)
            return (flat, flat)
        }
        changes += Self.play(&detector, from: 3, seconds: 8) { time in
            var upright =
                Self.gravity(angle: 0, tilt: 0) + Vector3(0.01 * (time * 25).truncatingRemainder(dividingBy: 3), 0, 0)
            upright.z = -Self.g  // still what it read flat
            return (upright, upright)
        }
        #expect(changes.map(\.1).count == 1)
        if case .frozen(.axisStuck, let detail)? = changes.first?.1 {
            #expect(detail.hasPrefix("the z axis has read -9.80665 since before a rest"))
        } else {
            Issue.record("no axis-stuck: \(changes)")
        }
    }

    @Test(
        "emergency stops at 1.05 g for 4 s with the axes held (a 6-bit part in a quiet cradle): no fault, however many")
    func brakingIsNoEvidence() {
        var detector = FrozenReadingDetector()
        let step = Self.g / 21.33
        func counts(_ vector: Vector3) -> Vector3 {
            Vector3((vector.x / step).rounded(), (vector.y / step).rounded(), (vector.z / step).rounded())
        }
        var changes: [(Double, FrozenReadingDetector.Change)] = []
        for cycle in 0..<6 {
            let start = Double(cycle) * 10
            changes += Self.play(&detector, from: start, seconds: 5) { _ in
                let raw = counts(Self.gravity(angle: 0, tilt: 0))
                return (raw, step * raw)
            }
            // Braking along x at 1.05 g for 4 s (from 150 km/h), perfectly steady: the reading is 1.45
            // times as long and y, held at 1 g, could be a frozen axis. Four seconds are too few, and the
            // rest at the lights between stops ends the evidence.
            changes += Self.play(&detector, from: start + 5, seconds: 4) { _ in
                let raw = counts(Self.gravity(angle: 0, tilt: 0) + Vector3(1.05 * Self.g, 0, 0))
                return (raw, step * raw)
            }
        }
        #expect(changes.isEmpty, "\(changes)")
    }

    @Test(
        """
        a whole reading frozen at 1.6 times gravity's length is declared after 10 s of it; one at gravity's \
        length never
        """
    )
    func frozenReading() {
        var detector = FrozenReadingDetector()
        var changes = Self.play(&detector, from: 0, seconds: 3) { time in
            let upright =
                Self.gravity(angle: 0, tilt: 0) + Vector3(0.02 * (time * 25).truncatingRemainder(dividingBy: 2), 0, 0)
            return (upright, upright)
        }
        let frozen = Self.gravity(angle: 30, tilt: 10, length: 1.6 * Self.g)
        changes += Self.play(&detector, from: 3, seconds: 12) { _ in (frozen, frozen) }
        #expect(changes.count == 1)
        if case (let time, .frozen(.stuck, let detail))? = changes.first {
            #expect(time >= 13 - 0.05 && time <= 14.1)
            #expect(detail.contains("has not changed for 10 s of rest and is 1.6 times the length of gravity"))
        } else {
            Issue.record("no stuck: \(changes)")
        }
        #expect(detector.observe(raw: Vector3(0, -9, 0), reading: Vector3(0, -9, 0), at: 16) == [.thawed(.stuck)])
        // A device left still for an hour: its reading never changes, and is gravity.
        var still = FrozenReadingDetector()
        let flat = Self.gravity(angle: 0, tilt: 90)
        #expect(Self.play(&still, from: 0, seconds: 3600) { _ in (flat, flat) }.isEmpty)
    }

    @Test("zeros: passed on for less than a second (a fall), then no-gravity; NaN at once; a direction recovers")
    func noGravity() {
        var readings = RawAccelerometerReadings(device: "iio:device0")
        var tracker = FaultTracker()
        var events: [SensorEvent] = []
        func deliver(_ raw: Vector3, at time: Double) {
            readings.deliver(raw: raw, at: time, scale: [1, 1, 1], offset: [0, 0, 0], faults: &tracker) {
                events.append($0)
            }
        }
        deliver(Vector3(0, -9.8, 0), at: 0)
        for step in 1...24 { deliver(.zero, at: Double(step) / 25) }  // 0.96 s of free fall
        #expect(events.count == 25 && events.allSatisfy { if case .sample = $0 { true } else { false } })
        deliver(Vector3(0, -9.8, 0), at: 1)
        events.removeAll()
        for step in 0...25 { deliver(.zero, at: 2 + Double(step) / 25) }
        #expect(events.filter { if case .sample = $0 { true } else { false } }.count == 25)
        #expect(
            events.last
                == .fault(
                    SensorFault(
                        kind: .noGravity, device: "iio:device0",
                        detail:
                            """
                            reads (0.0, 0.0, 0.0) for 1.0 s, longer than any fall: no gravity to read an \
                            orientation from
                            """
                    )))
        events.removeAll()
        deliver(Vector3(0, -9.8, 0), at: 4)
        #expect(
            events == [
                .recovered(.noGravity, device: "iio:device0"),
                .sample(SensorSample(time: 4, reading: Vector3(0, -9.8, 0))),
            ])
        events.removeAll()
        readings.deliver(raw: Vector3(1, 1, 1), at: 5, scale: [.nan, 1, 1], offset: [0, 0, 0], faults: &tracker) {
            events.append($0)
        }
        #expect(events.count == 1)
        if case .fault(let fault)? = events.first {
            #expect(fault.kind == .noGravity)
        } else {
            Issue.record("\(events)")
        }
    }

    static func unitVector(_ random: inout SimulationRandom) -> Vector3 {
        Vector3(random.gaussian(), random.gaussian(), random.gaussian()).normalised
    }

    /// Rodrigues' rotation of `vector` about the unit `axis`.
    static func rotate(_ vector: Vector3, about axis: Vector3, degrees: Double) -> Vector3 {
        let angle = degrees * .pi / 180
        let cross = axis.cross(vector)
        return cos(angle) * vector + sin(angle) * cross + ((1 - cos(angle)) * axis.dot(vector)) * axis
    }
}

extension Vector3 {
    fileprivate func cross(_ other: Vector3) -> Vector3 {
        Vector3(y * other.z - z * other.y, z * other.x - x * other.z, x * other.y - y * other.x)
    }

    fileprivate var normalised: Vector3 { (1 / magnitude) * self }
}
