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

/// The wire form of each kind (docs/protocol.md, "State" and "Events"), from what
/// ``SensorKind`` says of its readings: nothing here names a kind.
extension SensorKind {
    /// The state's field: `light`, `proximity`, `heading` (the kind's topic).
    public var stateKey: String { topicName }

    /// A reading's value in events' `from` and `to`: the light level, `"near"`/`"far"`, degrees.
    public static func json(_ reading: SensorReading?) -> JSONValue {
        reading.map { JSONValue($0.eventValue) } ?? .null
    }

    /// The state's object for a present sensor of this kind (null when absent):
    /// light `{"sensor", "level", "unit"}`, proximity `{"sensor", "near"}`, heading `{"sensor", "degrees"}`.
    public func json(_ state: KindSensorState?) -> JSONValue {
        guard let state else { return .null }
        let values = stateValues(state.reading, unit: state.unit)
        return .object(
            [("sensor", .string(state.sensor))]
                + zip(stateFields, values).map { ($0.name, $1.map(JSONValue.init) ?? .null) })
    }

    /// Reads the state's object of this kind back (for clients); a member of the wrong type is an
    /// error that names it.
    public func state(json reader: JSONReader) throws(JSONFieldError) -> KindSensorState {
        var state = KindSensorState(sensor: try reader.required("sensor").string())
        var values: [String: WireValue] = [:]
        for (field, type) in stateFields {
            guard let member = try reader.optional(field) else { continue }
            switch type {
            case .number: values[field] = .number(try member.number())
            case .boolean: values[field] = .boolean(try member.bool())
            case .string(let allowed):
                let text = try member.string()
                if let allowed, !allowed.contains(text) {
                    throw member.fail("\"\(text)\" is not one of \(allowed.joined(separator: ", "))")
                }
                values[field] = .string(text)
            }
        }
        (state.reading, state.unit) = reading { values[$0] }
        return state
    }
}

extension JSONValue {
    init(_ value: WireValue) {
        switch value {
        case .number(let number): self = .number(number)
        case .boolean(let flag): self = .bool(flag)
        case .string(let text): self = .string(text)
        }
    }
}
