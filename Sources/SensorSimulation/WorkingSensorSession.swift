#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import OrientationCore

/// A device's attitude: `angle` is the direction of "up" in the screen plane (0° portrait, 90°
/// landscapeLeft, 180° upside down, −90° landscapeRight) and `tilt` the screen's lean back from
/// upright (0° upright, +90° face up, −90° face down).
public struct DevicePose: Sendable, Hashable {
    public var angle: Double
    public var tilt: Double

    public init(angle: Double, tilt: Double) {
        self.angle = angle
        self.tilt = tilt
    }

    /// Unit vectors in the device frame: `down` (where gravity pulls), and two horizontal ones.
    func frame() -> (down: Vector3, across: Vector3, along: Vector3) {
        let a = angle * .pi / 180, t = tilt * .pi / 180
        let down = Vector3(-sin(a) * cos(t), -cos(a) * cos(t), -sin(t))
        let across = Vector3(cos(a), -sin(a), 0)
        return (down, across, down.cross(across))
    }
}

/// One reading of a simulated session: monotonic seconds and the part's raw counts, with a
/// gyroscope's reading (rad/s) when the session has one.
public struct SimulatedReading: Sendable, Hashable {
    public var time: Double
    public var raw: Vector3
    public var rotationRate: Vector3?

    public init(time: Double, raw: Vector3, rotationRate: Vector3? = nil) {
        self.time = time
        self.raw = raw
        self.rotationRate = rotationRate
    }
}

/// A long session of a *working* sensor, generated from physics: a person's (or a mount's) poses
/// joined by minimum-jerk turns, the accelerations of walking or a vehicle, tremor, and the part
/// (``SimulatedAccelerometer``). Deterministic for a seed. The fault-policy soak plays these to
/// prove that no policy calls a working sensor broken.
public struct WorkingSensorSession: Sequence, IteratorProtocol, Sendable {
    /// What the device goes through.
    public enum Scenario: Sendable, Hashable, CustomStringConvertible {
        /// Turned between portrait and landscape every 1.5 s in its own plane (a kiosk on a rotating
        /// wall mount, a tablet in a stand), leaning back `tilt` degrees (0: upright, z reads exactly
        /// 0; a kickstand: z reads one constant). The axis normal to the screen has no noise.
        case turnsInPlane(tilt: Double)
        /// Held and put down in every pose, read through an HID hub that reports an axis only when it
        /// changes by more than `sensitivity` g.
        case changeOnly(sensitivity: Double)
        /// Held and put down in every pose by a part of `bits` bits (6: ±1.5 g; others ±2 g) whose
        /// noise is below one count at 6 and 8 bits.
        case quantised(bits: Int)
        /// Lying face up on a table, untouched, for an hour: an 8-bit part whose noise is below one
        /// count, so its axes hold their counts for minutes.
        case still
        /// Carried in a hand while walking (steps of 0.25 g at 1.9 Hz, sway), turned now and then.
        case walking
        /// In a dashboard cradle: engine and road vibration, accelerating, braking (up to 0.5 g),
        /// cornering, turned now and then.
        case vehicle

        public var description: String {
            switch self {
            case .turnsInPlane(let tilt):
                tilt == 0 ? "turns in the display plane, z = 0" : "turns in a kickstand (\(Int(tilt))°), z constant"
            case .changeOnly(let sensitivity): "HID change-only reporting, \(sensitivity) g"
            case .quantised(let bits): "\(bits)-bit part"
            case .still: "still for an hour"
            case .walking: "walking"
            case .vehicle: "vehicle vibration"
            }
        }

        /// The scenarios `make test`'s soak plays, each for at least ten minutes (the still one for an hour).
        public static let soak: [Scenario] = [
            .turnsInPlane(tilt: 0), .turnsInPlane(tilt: 25), .changeOnly(sensitivity: 0.02),
            .changeOnly(sensitivity: 0.05),
            .quantised(bits: 6), .quantised(bits: 8), .quantised(bits: 10), .quantised(bits: 12), .still, .walking,
            .vehicle,
        ]
    }

    private enum Segment {
        case hold(DevicePose, until: Double)
        case turn(from: DevicePose, to: DevicePose, start: Double, end: Double)
    }

    public let scenario: Scenario
    public let duration: Double
    public let rate: Double
    /// The part as configured (its `scale` text and step).
    public let part: SimulatedAccelerometer
    private var sensor: SimulatedAccelerometer
    /// The gyroscope beside the accelerometer (an IMU), if the session has one.
    public private(set) var gyroscope: SimulatedGyroscope?
    private var random: SimulationRandom
    private var index = 0
    private var pose: DevicePose
    private var segment: Segment
    /// Low-passed hand tremor and vibration, m/s², in the device frame.
    private var tremor = Vector3.zero
    /// A vehicle's manoeuvre: acceleration along the road and across it (m/s²) until a time.
    private var manoeuvre = (along: 0.0, across: 0.0, until: 0.0)

    /// `gyroscope`: an IMU, whose gyroscope (with a bias drawn for the seed) reads the turns of the
    /// same attitude; the accelerations of walking, a vehicle or a tremor do not turn it.
    public init(
        _ scenario: Scenario, duration: Double? = nil, rate: Double = 25, seed: UInt64 = 1,
        gyroscope: SimulatedGyroscope? = nil
    ) {
        self.scenario = scenario
        self.duration = duration ?? (scenario == .still ? 3600 : 600)
        self.rate = rate
        random = SimulationRandom(seed: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(scenario.description.utf8.count))
        var part: SimulatedAccelerometer
        switch scenario {
        case .turnsInPlane(let tilt):
            part = .quantised(bits: 12, rangeInG: 2, noiseInG: 0.01)
            part.exactAxis = 2
            pose = DevicePose(angle: 0, tilt: tilt)
        case .changeOnly(let sensitivity):
            part = SimulatedAccelerometer(
                countStep: 0.001 * standardGravity, range: 4 * standardGravity, noise: 0.004 * standardGravity,
                changeSensitivity: sensitivity * standardGravity)
            pose = DevicePose(angle: 0, tilt: 20)
        case .quantised(let bits):
            part = .quantised(bits: bits, rangeInG: bits == 6 ? 1.5 : 2, noiseInG: 0.004)
            pose = DevicePose(angle: 0, tilt: 20)
        case .still:
            part = .quantised(bits: 8, rangeInG: 2, noiseInG: 0.002)
            pose = DevicePose(angle: 0, tilt: 90)
        case .walking, .vehicle:
            part = .quantised(bits: 12, rangeInG: 2, noiseInG: 0.01)
            pose = DevicePose(angle: 0, tilt: scenario == .walking ? 25 : 15)
        }
        part.calibrate(gainError: 0.02, offsetInG: 0.03, random: &random)
        if case .turnsInPlane = scenario { part.offset[2] = 0 }
        self.part = part
        sensor = part
        segment = .hold(pose, until: 1)
        if var gyroscope {
            gyroscope.drawBias(random: &random)
            self.gyroscope = gyroscope
        }
    }

    public mutating func next() -> SimulatedReading? {
        let time = Double(index) / rate
        guard time < duration else { return nil }
        index += 1
        let pose = attitude(at: time)
        let (down, across, along) = pose.frame()
        // The rate that turns this attitude into the one a millisecond later: a world-fixed unit
        // vector e, seen from the device, moves as de/dt = −ω × e, so ω = −½ Σ e × de/dt over an
        // orthonormal set.
        var rate: Vector3?
        if let part = gyroscope {
            let step = 0.001
            let (down2, across2, along2) = attitude(at: time + step).frame()
            var sum = Vector3.zero
            for (e, later) in [(down, down2), (across, across2), (along, along2)] {
                sum = sum + e.cross((1 / step) * (later - e))
            }
            rate = part.measure(-0.5 * sum, random: &random)
        }
        var truth = standardGravity * down + disturbance(at: time, down: down, across: across, along: along)
        if case .turnsInPlane = scenario {
            // The stand holds the screen's plane: nothing moves the device along its normal.
            truth = Vector3(truth.x, truth.y, standardGravity * down.z)
        }
        return SimulatedReading(time: time, raw: sensor.measure(truth, random: &random), rotationRate: rate)
    }

    // MARK: - Poses

    private mutating func attitude(at time: Double) -> DevicePose {
        while true {
            switch segment {
            case .hold(let held, let until):
                if time < until { return held }
                let next = nextPose(after: held)
                let turn = turnDuration()
                segment = .turn(from: held, to: next, start: until, end: until + turn)
            case .turn(let from, let to, let start, let end):
                if time < end {
                    let tau = (time - start) / (end - start)
                    let s = tau * tau * tau * (10 - 15 * tau + 6 * tau * tau)  // minimum jerk
                    var delta = (to.angle - from.angle).truncatingRemainder(dividingBy: 360)
                    if delta > 180 { delta -= 360 } else if delta < -180 { delta += 360 }
                    return DevicePose(angle: from.angle + s * delta, tilt: from.tilt + s * (to.tilt - from.tilt))
                }
                segment = .hold(to, until: end + holdDuration())
            }
        }
    }

    private mutating func turnDuration() -> Double {
        switch scenario {
        case .turnsInPlane: 0.5
        case .still: 1e9
        default: random.uniform(0.4, 1.2)
        }
    }

    private mutating func holdDuration() -> Double {
        switch scenario {
        case .turnsInPlane: 1.0
        case .still: 1e9
        case .walking, .vehicle: random.uniform(15, 60)
        default: random.uniform(1, 8)
        }
    }

    private mutating func nextPose(after pose: DevicePose) -> DevicePose {
        let quarter = { (random: inout SimulationRandom) -> Double in
            random.pick([0.0, 90, 180, -90].filter { abs($0 - pose.angle) > 1 && abs(abs($0 - pose.angle) - 360) > 1 })
        }
        switch scenario {
        case .turnsInPlane(let tilt):
            // A quarter turn either way, as a person turns a screen on a mount.
            let turned = pose.angle + random.pick([90.0, -90])
            return DevicePose(angle: turned > 180 ? turned - 360 : turned <= -180 ? turned + 360 : turned, tilt: tilt)
        case .walking:
            return DevicePose(
                angle: random.pick([0.0, 90, -90].filter { $0 != pose.angle }), tilt: random.uniform(15, 35))
        case .vehicle:
            return DevicePose(angle: pose.angle == 0 ? random.pick([90.0, -90]) : 0, tilt: 15)
        case .still:
            return pose
        case .changeOnly, .quantised:
            // Any pose a person leaves a device in: upright ones leaning back or forward, and flat.
            if random.unit() < 0.25 {
                let up = random.unit() < 0.6
                return DevicePose(angle: random.uniform(-20, 20), tilt: (up ? 1 : -1) * random.uniform(75, 90))
            }
            return DevicePose(angle: quarter(&random) + random.uniform(-10, 10), tilt: random.uniform(-10, 40))
        }
    }

    // MARK: - Accelerations

    /// The acceleration the device feels beside gravity, in the device frame (m/s²).
    private mutating func disturbance(at time: Double, down: Vector3, across: Vector3, along: Vector3) -> Vector3 {
        let g = standardGravity
        switch scenario {
        case .still, .turnsInPlane:
            return .zero
        case .changeOnly, .quantised:
            // A hand's tremor and sway: low-passed noise of about 0.01 g.
            tremor = 0.9 * tremor + 0.1 * (0.03 * g) * Vector3(random.gaussian(), random.gaussian(), random.gaussian())
            return tremor
        case .walking:
            let step = 2 * Double.pi * 1.9 * time
            tremor = 0.8 * tremor + 0.2 * (0.05 * g) * Vector3(random.gaussian(), random.gaussian(), random.gaussian())
            return (0.25 * g * sin(step)) * down + (0.08 * g * sin(step / 2)) * across + (0.05 * g * sin(step + 1))
                * along + tremor
        case .vehicle:
            if time >= manoeuvre.until {
                let kind = random.unit()
                let length = random.uniform(2, 8)
                manoeuvre =
                    kind < 0.4
                    ? (0, 0, time + length)
                    : kind < 0.6
                        ? (random.uniform(0.1, 0.3) * g, 0, time + length)
                        : kind < 0.8
                            ? (-random.uniform(0.2, 0.5) * g, 0, time + Swift.min(length, 4))
                            : (0, random.uniform(-0.4, 0.4) * g, time + length)
            }
            // Engine and road: 12 and 23 Hz at 0.1 g, plus broadband roughness.
            tremor = 0.5 * tremor + 0.5 * (0.08 * g) * Vector3(random.gaussian(), random.gaussian(), random.gaussian())
            let engine = 0.1 * g * (sin(2 * .pi * 12 * time) + 0.6 * sin(2 * .pi * 23 * time + 0.7))
            return engine * down + manoeuvre.along * along + manoeuvre.across * across + tremor
        }
    }
}
