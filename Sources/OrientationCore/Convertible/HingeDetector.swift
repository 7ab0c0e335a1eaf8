#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an accelerometer sits, as udev or the driver says (and a two-sensor trace's `location`).
public enum SensorLocation: String, Sendable, Hashable, Codable, CaseIterable {
    /// In the display (tablets, the lid of a convertible): what orientation means.
    case display
    /// In the lid, which on convertibles carries the display.
    case lid
    /// In the keyboard half of a convertible. Its mount matrix makes it read what the display
    /// sensor reads with the lid closed (systemd's hwdb rule for base sensors); orientation never
    /// comes from it, the hinge angle does.
    case base
    case unknown

    /// The hinge detector's two sides: the base, and everything else (the display's side).
    var isBase: Bool { self == .base }
}

/// How a convertible is folded: laptop (the keyboard in use) or tablet (folded back past flat).
public enum DeviceMode: String, Sendable, Hashable, CaseIterable {
    case laptop
    case tablet
}

/// What the hinge detector decided with one sample.
public enum HingeEvent: Sendable, Hashable {
    /// The reported hinge angle moved by at least the deadband, or became unknown (nil).
    case angle(Double?)
    case mode(DeviceMode)
}

/// The hinge detector's parameters (docs/convertibles.md).
public struct HingeConfiguration: Sendable, Hashable {
    /// Each sensor's readings are low-pass filtered with this time constant (s).
    public var smoothing = 0.15
    /// A sensor whose hinge-axis (x) component exceeds this (m/s²) has its hinge too near vertical:
    /// the angle is not observable (ChromeOS's embedded controller stops at 8.7).
    public var hingeVerticalLimit = 8.3
    /// A reading whose magnitude is further than this from g (m/s²), or with an axis beyond 1.1 g,
    /// is a jolt: it moves neither the angle nor the mode.
    public var magnitudeTolerance = 1.5
    /// The other sensor's last reading older than this (s): the angle is unknown (a stalled sensor).
    public var staleAfter = 0.5
    /// Enter tablet mode beyond this angle, leave it below `laptopBelow` (degrees).
    public var tabletAbove = 205.0
    public var laptopBelow = 155.0
    /// A mode change needs the angle past its threshold in every reliable reading for this long (s).
    public var confirmation = 0.2
    /// Within this many degrees of 0°/360° at start the mode stays unknown: closed and folded flat
    /// read alike.
    public var ambiguousZone = 30.0
    /// The reported angle changes when the estimate moves by this much (degrees).
    public var deadband = 0.5

    public init() {}
}

/// The hinge angle and laptop/tablet mode of a convertible from its display and base
/// accelerometers: a pure state machine that takes timestamped readings (mount matrices applied)
/// and returns what changed. No clock, no I/O.
///
/// Geometry (docs/convertibles.md): the hinge is the shared x axis; the display's y–z projection of
/// gravity is the base's turned by θ, so θ = atan2(yB·zD − zB·yD, yB·yD + zB·zD), 0° closed, 90° upright
/// over a flat base, 180° flat, 360° folded back. Closed and folded back read alike, so the angle is
/// kept continuous: each new estimate is unwrapped against the last trusted one.
public struct HingeDetector: Sendable {
    public let configuration: HingeConfiguration
    /// A side's filtered reading, its time, and whether its last raw reading was steady.
    private struct Filtered {
        var time: Double
        var vector: Vector3
        var steady: Bool
    }
    private var display: Filtered?
    private var base: Filtered?
    /// The unwrapped angle (may leave [0, 360]); nil until observable.
    private var continuous: Double?
    public private(set) var reportedAngle: Double?
    private var angleKnown = false
    public private(set) var mode: DeviceMode?
    /// The last reading of a hinge-angle sensor, where the device has one (degrees; nil when the
    /// sensor says its angle is unreliable).
    private var measured: (time: Double, degrees: Double?)?
    /// The lid switch (evdev SW_LID), where the device has one: nil when there is none.
    public private(set) var lidClosed: Bool?
    /// A mode waiting for its confirmation: since when its threshold has been passed.
    private var pending: (mode: DeviceMode, since: Double)?

    public init(configuration: HingeConfiguration = HingeConfiguration()) {
        self.configuration = configuration
    }

    /// Feeds one reading; returns what changed (angle first, then mode).
    public mutating func process(time: Double, location: SensorLocation, reading: Vector3) -> [HingeEvent] {
        let steady = isSteady(reading)
        let next: Filtered
        if let previous = location.isBase ? base : display {
            let dt = max(0, time - previous.time)
            let weight = 1 - exp(-dt / configuration.smoothing)
            // A jolt does not move the filter: its direction is not gravity's.
            next = Filtered(
                time: time, vector: steady ? previous.vector + weight * (reading - previous.vector) : previous.vector,
                steady: steady)
        } else {
            next = Filtered(time: time, vector: reading, steady: steady)
        }
        if location.isBase { base = next } else { display = next }
        return update(at: time)
    }

    /// A reading of a hinge-angle sensor (`cros-ec-lid-angle`, an Intel HID hinge sensor): while it
    /// reads, its angle is the angle, unambiguous through 0°/360°, and the accelerometers only
    /// stand in when it falls silent. `degrees` nil: the sensor says the angle is unreliable.
    public mutating func processMeasured(time: Double, degrees: Double?) -> [HingeEvent] {
        measured = (time, degrees.map { min(max($0, 0), 360) })
        return update(at: time)
    }

    /// The hinge-angle sensor stopped or went away: the accelerometers alone decide again.
    public mutating func forgetMeasured() -> [HingeEvent] {
        measured = nil
        var events: [HingeEvent] = []
        forgetAngle(into: &events)
        return events
    }

    /// Lets time pass without readings (a stalled sensor makes the angle unknown).
    public mutating func advance(to time: Double) -> [HingeEvent] {
        update(at: time)
    }

    /// The lid switch changed (or became unreadable: nil). It settles what the accelerometers
    /// cannot: near 0°/360° with no motion to follow (at start, or after a sensor was forgotten), a
    /// closed lid means closed and an open one means folded back. While the angle is being
    /// followed the switch is not needed, and not trusted over it: on some convertibles the lid's
    /// magnet also closes the switch when folded into a tablet.
    public mutating func lidSwitch(closed: Bool?) {
        lidClosed = closed
    }

    /// A sensor stopped (sampling paused, removed, lost): its readings and the angle's continuity
    /// are forgotten, so the angle is unknown until both read again; the mode holds.
    public mutating func forget(_ location: SensorLocation) -> [HingeEvent] {
        if location.isBase { base = nil } else { display = nil }
        continuous = nil
        pending = nil
        var events: [HingeEvent] = []
        forgetAngle(into: &events)
        return events
    }

    /// Why the angle cannot be known.
    public enum Unobservable: Sendable, Hashable, CustomStringConvertible {
        case reportedUnreliable, noDisplayReading, noBaseReading, baseSilent, displaySilent, nearVertical, notSteadyYet

        /// A sensor fell silent: news once per episode (a hinge held upright is not).
        public var isSilence: Bool { self == .baseSilent || self == .displaySilent }

        public var description: String {
            switch self {
            case .reportedUnreliable: "the hinge sensor reports its angle unreliable"
            case .noDisplayReading: "no display reading"
            case .noBaseReading: "no base reading"
            case .baseSilent: "the base sensor is silent"
            case .displaySilent: "the display sensor is silent"
            case .nearVertical: "the hinge is near vertical"
            case .notSteadyYet: "no steady reading yet"
            }
        }
    }

    /// Why the angle is unknown now, if it is (for the log).
    public func unobservable(at time: Double) -> Unobservable? {
        if let measured, time - measured.time <= configuration.staleAfter {
            return measured.degrees == nil ? .reportedUnreliable : nil
        }
        guard let display else { return .noDisplayReading }
        guard let base else { return .noBaseReading }
        if time - base.time > configuration.staleAfter { return .baseSilent }
        if time - display.time > configuration.staleAfter { return .displaySilent }
        if abs(display.vector.x) > configuration.hingeVerticalLimit
            || abs(base.vector.x) > configuration.hingeVerticalLimit
        {
            return .nearVertical
        }
        return continuous == nil ? .notSteadyYet : nil
    }

    private func isSteady(_ reading: Vector3) -> Bool {
        let g = 9.81
        let magnitude = reading.magnitude
        return abs(magnitude - g) <= configuration.magnitudeTolerance
            && abs(reading.x) <= 1.1 * g && abs(reading.y) <= 1.1 * g && abs(reading.z) <= 1.1 * g
    }

    private mutating func update(at time: Double) -> [HingeEvent] {
        var events: [HingeEvent] = []
        if let measured, time - measured.time <= configuration.staleAfter {
            guard let degrees = measured.degrees else {
                forgetAngle(into: &events)
                pending = nil
                return events
            }
            continuous = degrees
            publish(degrees, into: &events)
            decideMode(angle: degrees, at: time, unambiguous: true, into: &events)
            return events
        }
        guard let display, let base,
            time - display.time <= configuration.staleAfter, time - base.time <= configuration.staleAfter
        else {
            forgetAngle(into: &events)
            return events
        }
        let observable =
            abs(display.vector.x) <= configuration.hingeVerticalLimit
            && abs(base.vector.x) <= configuration.hingeVerticalLimit
        guard observable else {
            // The mode holds; the angle is unknown until the hinge turns away from vertical.
            forgetAngle(into: &events)
            pending = nil
            return events
        }
        let cross = base.vector.y * display.vector.z - base.vector.z * display.vector.y
        let dot = base.vector.y * display.vector.y + base.vector.z * display.vector.z
        var raw = atan2(cross, dot) * 180 / .pi
        if raw < 0 { raw += 360 }
        let reliable = display.steady && base.steady
        if let last = continuous {
            // The estimate nearest the last trusted one: closed stays near 0, folded back near 360.
            let unwrapped = raw + 360 * ((last - raw) / 360).rounded()
            if reliable { continuous = unwrapped }
        } else if reliable {
            continuous = startingAngle(raw)
        }
        guard let angle = continuous else { return events }
        publish(angle, into: &events)
        if reliable { decideMode(angle: angle, at: time, into: &events) }
        return events
    }

    /// Reports the angle when it moved by the deadband or was unknown.
    private mutating func publish(_ angle: Double, into events: inout [HingeEvent]) {
        let shown = min(max(angle, 0), 360).truncatingRemainder(dividingBy: 360)
        if !angleKnown || reportedAngle.map({ circularDistance($0, shown) >= configuration.deadband }) ?? true {
            reportedAngle = shown
            angleKnown = true
            events.append(.angle(shown))
        }
    }

    /// The first angle after no history: near 0°/360° the lid switch, if any, says which.
    private func startingAngle(_ raw: Double) -> Double {
        let zone = configuration.ambiguousZone
        guard let lidClosed, raw <= zone || raw >= 360 - zone else { return raw }
        if lidClosed { return raw > 180 ? raw - 360 : raw }
        return raw < 180 ? raw + 360 : raw
    }

    private mutating func forgetAngle(into events: inout [HingeEvent]) {
        guard angleKnown else { return }
        angleKnown = false
        reportedAngle = nil
        events.append(.angle(nil))
    }

    /// `unambiguous`: the angle was measured, not derived from gravity, so 0° and 360° differ.
    private mutating func decideMode(
        angle: Double, at time: Double, unambiguous: Bool = false, into events: inout [HingeEvent]
    ) {
        let target: DeviceMode?
        switch mode {
        case nil:
            // At start: a clear reading decides at once, except near closed/folded back.
            let zone = configuration.ambiguousZone
            if !unambiguous, lidClosed == nil, angle <= zone || angle >= 360 - zone {
                target = nil
            } else {
                target = angle >= (configuration.tabletAbove + configuration.laptopBelow) / 2 ? .tablet : .laptop
                mode = target
                events.append(.mode(target!))
                pending = nil
                return
            }
        case .laptop?:
            target = angle > configuration.tabletAbove ? .tablet : nil
        case .tablet?:
            target = angle < configuration.laptopBelow ? .laptop : nil
        }
        guard let target else {
            pending = nil
            return
        }
        if pending?.mode != target { pending = (target, time) }
        if let pending, time - pending.since >= configuration.confirmation {
            mode = target
            self.pending = nil
            events.append(.mode(target))
        }
    }

    private func circularDistance(_ a: Double, _ b: Double) -> Double {
        abs((a - b + 540).truncatingRemainder(dividingBy: 360) - 180)
    }
}
