import OrientationCore

/// A sensor of another kind than the accelerometer, as the daemon's state holds it: which device, the
/// light unit it reads in, and its last published reading (nil until one was read while claimed).
public struct KindSensorState: Sendable, Hashable {
    /// `iio:device1`, `hwmon:applesmc.768`, `input:/dev/input/event3`.
    public var sensor: String
    /// Light sensors only: the unit the sensor reads in, known from the start.
    public var unit: LightUnit?
    public var reading: SensorReading?

    public init(sensor: String, unit: LightUnit? = nil, reading: SensorReading? = nil) {
        self.sensor = sensor
        self.unit = unit
        self.reading = reading
    }
}

/// The wire form of each kind (docs/protocol.md, "State" and "Events"): one table, so a new kind is
/// one row in each switch here.
extension SensorKind {
    /// The state's field: `light`, `proximity`, `heading` (the kind's topic).
    public var stateKey: String { Topic(self).rawValue }

    /// A reading's value in events' `from` and `to`: the light level, `"near"`/`"far"`, degrees.
    public static func json(_ reading: SensorReading?) -> JSONValue {
        switch reading {
        case .light(let level, _): .number(level)
        case .proximity(let near): .string(near ? "near" : "far")
        case .heading(let degrees): .number(degrees)
        case nil: .null
        }
    }

    /// The state's object for a present sensor of this kind (null when absent):
    /// light `{"sensor", "level", "unit"}`, proximity `{"sensor", "near"}`, heading `{"sensor", "degrees"}`.
    public func json(_ state: KindSensorState?) -> JSONValue {
        guard let state else { return .null }
        var members: [(key: String, value: JSONValue)] = [("sensor", .string(state.sensor))]
        switch self {
        case .light:
            let level: JSONValue = if case .light(let value, _) = state.reading { .number(value) } else { .null }
            members += [("level", level), ("unit", state.unit.map { .string($0.rawValue) } ?? .null)]
        case .proximity:
            let near: JSONValue = if case .proximity(let value) = state.reading { .bool(value) } else { .null }
            members.append(("near", near))
        case .compass:
            let degrees: JSONValue = if case .heading(let value) = state.reading { .number(value) } else { .null }
            members.append(("degrees", degrees))
        }
        return .object(members)
    }

    /// Reads the state's object of this kind back (for clients).
    public func state(json reader: JSONReader) throws(JSONFieldError) -> KindSensorState {
        var state = KindSensorState(sensor: try reader.required("sensor").string())
        switch self {
        case .light:
            state.unit = try reader.optional("unit")?.enumeration(LightUnit.self)
            if let level = try reader.optional("level")?.number() {
                state.reading = .light(level: level, unit: state.unit ?? .lux)
            }
        case .proximity:
            if let near = try reader.optional("near")?.bool() { state.reading = .proximity(near: near) }
        case .compass:
            if let degrees = try reader.optional("degrees")?.number() { state.reading = .heading(degrees) }
        }
        return state
    }
}
