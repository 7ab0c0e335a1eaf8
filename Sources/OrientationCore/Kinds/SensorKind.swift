/// The sensors orientd serves besides the accelerometer, as iio-sensor-proxy does: what each reads,
/// and the pure rules that turn its readings into published changes.
///
/// The accelerometer has its own pipeline (detector, resolver, hinge); these kinds are values that
/// are read and passed on. A kind is a case here, a case of ``SensorReading``, a driver in
/// `SensorIO/Drivers/`, and one row in each front end's table (socket topics, D-Bus properties).
public enum SensorKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Ambient light: lux, or a vendor's unit (Apple's applesmc).
    case light
    /// Proximity: near or far (a phone against the ear).
    case proximity
    /// Compass: degrees from magnetic north, tilt-compensated.
    case compass

    /// The words for the log and `list-sensors`.
    public var description: String {
        switch self {
        case .light: "ambient light sensor"
        case .proximity: "proximity sensor"
        case .compass: "compass"
        }
    }
}

extension SensorKind {
    /// The socket's topic and state field for the kind: `light`, `proximity`, `heading`.
    public var topicName: String {
        switch self {
        case .light: "light"
        case .proximity: "proximity"
        case .compass: "heading"
        }
    }

    /// Only root and the control group may follow it: a heading says where a person is going
    /// (iio-sensor-proxy's bus policy gives the compass to geoclue alone).
    public var isPrivileged: Bool { self == .compass }
}

/// A value as the socket protocol carries it (JSON's number, boolean or string).
public enum WireValue: Sendable, Hashable {
    case number(Double)
    case boolean(Bool)
    case string(String)
}

/// The type of a ``WireValue`` a reader expects.
public enum WireType: Sendable, Hashable {
    case number
    case boolean
    /// A string, one of `oneOf` when given.
    case string(oneOf: [String]?)
}

/// The wire form of each kind's readings (docs/protocol.md, "State" and "Events"): the one place
/// that says it, so the protocol's JSON needs nothing per kind.
extension SensorKind {
    /// The state's members besides `sensor`, in order, with their types: light `level` and `unit`,
    /// proximity `near`, heading `degrees`.
    public var stateFields: [(name: String, type: WireType)] {
        switch self {
        case .light: [("level", .number), ("unit", .string(oneOf: LightUnit.allCases.map(\.rawValue)))]
        case .proximity: [("near", .boolean)]
        case .compass: [("degrees", .number)]
        }
    }

    /// The state's members for a sensor of this kind (nil: null), in ``stateFields``' order; `unit`
    /// is the light unit the sensor reads in, known before a reading.
    public func stateValues(_ reading: SensorReading?, unit: LightUnit?) -> [WireValue?] {
        switch (self, reading) {
        case (.light, .light(let level, _)?): [.number(level), unit.map { .string($0.rawValue) }]
        case (.light, _): [nil, unit.map { .string($0.rawValue) }]
        case (.proximity, .proximity(let near)?): [.boolean(near)]
        case (.compass, .heading(let degrees)?): [.number(degrees)]
        case (.proximity, _), (.compass, _): [nil]
        }
    }

    /// Back from the state's members (`value` gives each by name): the reading and the light unit;
    /// nil for a member that is not of its type.
    public func reading(stateValue value: (String) -> WireValue?) -> (reading: SensorReading?, unit: LightUnit?) {
        switch self {
        case .light:
            let unit: LightUnit? = if case .string(let text)? = value("unit") { LightUnit(rawValue: text) } else { nil }
            guard case .number(let level)? = value("level") else { return (nil, unit) }
            return (.light(level: level, unit: unit ?? .lux), unit)
        case .proximity:
            guard case .boolean(let near)? = value("near") else { return (nil, nil) }
            return (.proximity(near: near), nil)
        case .compass:
            guard case .number(let degrees)? = value("degrees") else { return (nil, nil) }
            return (.heading(degrees), nil)
        }
    }
}

extension SensorReading {
    /// Its value in events' `from` and `to`: the light level, `"near"`/`"far"`, degrees.
    public var eventValue: WireValue {
        switch self {
        case .light(let level, _): .number(level)
        case .proximity(let near): .string(near ? "near" : "far")
        case .heading(let degrees): .number(degrees)
        }
    }

    /// For people (`orientctl get`): `120.5 lux`, `near`, `90.5°`.
    public var displayText: String {
        switch self {
        case .light(let level, let unit): "\((level * 100).rounded() / 100) \(unit.rawValue)"
        case .proximity(let near): near ? "near" : "far"
        case .heading(let degrees): "\((degrees * 10).rounded() / 10)°"
        }
    }
}

/// `LightLevelUnit` of net.hadess.SensorProxy.
public enum LightUnit: String, Sendable, Hashable, CaseIterable {
    case lux
    /// A level in the sensor's own units (applesmc's light sensor): comparable with itself only.
    case vendor
}

/// One reading of a ``SensorKind``, as published.
public enum SensorReading: Sendable, Hashable, CustomStringConvertible {
    case light(level: Double, unit: LightUnit)
    case proximity(near: Bool)
    /// Degrees clockwise from magnetic north, 0 ≤ heading < 360.
    case heading(Double)

    public var kind: SensorKind {
        switch self {
        case .light: .light
        case .proximity: .proximity
        case .heading: .compass
        }
    }

    public var description: String {
        switch self {
        case .light(let level, let unit): "\(level) \(unit.rawValue)"
        case .proximity(let near): near ? "near" : "far"
        case .heading(let degrees): "\(degrees)°"
        }
    }

    /// Whether `self` differs enough from `published` to be worth an event: the rule clients can
    /// rely on (docs/protocol.md).
    ///
    /// * Light: 5 % of the last published level, and at least 0.1 of its unit. The eye notices about
    ///   10 % (Weber's fraction for brightness is 8–15 %), so smaller steps are sensor noise, yet a
    ///   dark room's 0 → 0.5 lux is news. A change of unit always is.
    /// * Proximity: every change (the hysteresis is the source's, ``ProximityHysteresis``).
    /// * Heading: 1° or more, the other way round the circle too (359.5° → 0.2° is 0.7°).
    public func isMeaningfulChange(from published: SensorReading?) -> Bool {
        guard let published else { return true }
        switch (self, published) {
        case (.light(let level, let unit), .light(let old, let oldUnit)):
            return unit != oldUnit || abs(level - old) >= max(0.05 * abs(old), 0.1)
        case (.proximity(let near), .proximity(let old)):
            return near != old
        case (.heading(let degrees), .heading(let old)):
            let difference = abs(degrees - old).truncatingRemainder(dividingBy: 360)
            return min(difference, 360 - difference) >= 1
        default:
            return true
        }
    }
}

/// Near or far from a proximity sensor's raw value, with a margin below the near level so that a
/// value hovering at the level does not flap.
///
/// The kernel's ABI: `in_proximity_raw` grows as an object comes closer, and a driver (or udev's
/// `PROXIMITY_NEAR_LEVEL` from systemd's hwdb) says from which value on it is near. orientd turns
/// near at `raw > near level` and far only below `(1 − margin) × level`, the low-water mark of 0.9
/// that iio-sensor-proxy 3.9 uses too (its own suite checks that 127 stays near at a level of 128).
public struct ProximityHysteresis: Sendable, Hashable {
    /// The raw value above which an object is near; > 0.
    public let nearLevel: Double
    /// The fraction of `nearLevel` a value must fall below it to turn far again.
    public let margin: Double
    public private(set) var near: Bool?

    public static let defaultMargin = 0.1

    public init(nearLevel: Double, margin: Double = defaultMargin) {
        self.nearLevel = nearLevel
        self.margin = margin
    }

    /// Feeds one raw value; returns near or far (changed or not).
    public mutating func classify(_ raw: Double) -> Bool {
        let result: Bool
        if raw > nearLevel {
            result = true
        } else if raw < nearLevel * (1 - margin) {
            result = false
        } else {
            result = near ?? false  // inside the margin: as it was (far at first)
        }
        near = result
        return result
    }
}
