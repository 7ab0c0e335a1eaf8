/// The sensors orientd serves besides the accelerometer, as iio-sensor-proxy does: what each reads,
/// and the pure rules that turn its readings into published changes.
///
/// The accelerometer has its own pipeline (detector, resolver, hinge); these kinds are values that
/// are read and passed on. A kind is a case here, a case of ``SensorReading``, a source in
/// `SensorIO/Kinds/`, and one row in each front end's table (socket topics, D-Bus properties).
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
