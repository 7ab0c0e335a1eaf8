import OrientationCore

/// How a light, proximity or compass sensor is read: iio-sensor-proxy's driver families, by name.
public enum KindAcquisition: String, Sendable, Hashable, Codable {
    /// An IIO attribute read at an interval (`in_illuminance_input`, `in_proximity_raw`, …).
    case iioPoll = "iio-poll"
    /// An IIO device's buffer, paced by its trigger (HID sensor hubs' light and compass).
    case iioBuffer = "iio-buffer"
    /// A hwmon attribute read at an interval (applesmc's `light`).
    case hwmonPoll = "hwmon-poll"
    /// An evdev switch, read as events (`SW_FRONT_PROXIMITY`).
    case evdev
}

/// Everything known about a light, proximity or compass sensor; reported with
/// ``KindSensorEvent/available(_:)`` and listed by `orientd list-sensors`.
public struct KindSensorDescription: Sendable, Hashable, Codable {
    public var kind: String
    /// `iio:device1`, `hwmon:applesmc.768`, `input:/dev/input/event4`.
    public var identifier: String
    /// The driver's or device's name.
    public var name: String
    public var acquisition: KindAcquisition
    public var sysfsPath: String?
    public var deviceNode: String?
    /// Light: the unit it reads in.
    public var unit: LightUnit?
    /// What is read and how, in a line: `in_illuminance_raw × 0.1 every 100 ms`.
    public var reading: String
    /// Proximity: the raw value above which an object is near, and where it came from.
    public var nearLevel: Double?
    /// Problems found while describing it (a near level of 0, say), for the log.
    public var problems: [String]

    public init(
        kind: SensorKind, identifier: String, name: String, acquisition: KindAcquisition, sysfsPath: String? = nil,
        deviceNode: String? = nil, unit: LightUnit? = nil, reading: String, nearLevel: Double? = nil,
        problems: [String] = []
    ) {
        self.kind = kind.rawValue
        self.identifier = identifier
        self.name = name
        self.acquisition = acquisition
        self.sysfsPath = sysfsPath
        self.deviceNode = deviceNode
        self.unit = unit
        self.reading = reading
        self.nearLevel = nearLevel
        self.problems = problems
    }

    public var sensorKind: SensorKind { SensorKind(rawValue: kind)! }
}

extension LightUnit: Codable {}

/// What a light, proximity or compass source reports.
public enum KindSensorEvent: Sendable, Hashable {
    /// A sensor is there (found at start, added, or back).
    case available(KindSensorDescription)
    /// No sensor of the kind: none found, removed, or lost.
    case unavailable(reason: String)
    /// A reading (monotonic seconds), already converted: lux, near or far, degrees.
    case reading(SensorReading, time: Double)
    /// The first report of a fault episode; affected readings are dropped.
    case fault(SensorFault)
    case recovered(SensorFault.Kind, device: String)
}

/// A source of one kind of sensor besides the accelerometer (the one shape of every source,
/// ``SensorSource``).
public protocol KindSensorSource: SensorSource where Event == KindSensorEvent {
    var kind: SensorKind { get }
}
